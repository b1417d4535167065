// A server restart: SIGTERM closes every socket with 3001 "resume" and leaves the clients in
// the store; the next process on the same port and store resumes them. The client treats
// 3001 as a drop to resume, not a final close, and gets every event once, in order.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { assertOnceInOrderBothWays, bothBack, connect, freePort, playBothWays, runMatchmaker, waitFor } from "./helpers.mjs";

/** A process on `port` keeping its clients in the SQLite store in `dir` across a restart. */
function restartable(port, dir) {
  return [
    ...["--host", "127.0.0.1", "--port", String(port)],
    ...["--store", `sqlite:///${join(dir, "matchmaker.db")}`],
    ...["--resume-grace-ms", "20000", "--shutdown-grace", "1"],
  ];
}

test("a restart on the same store is resumed: same session, every message once, in order", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mm-js-restart-"));
  const args = restartable(await freePort(), dir);
  let server = await runMatchmaker(args);
  const clients = [];
  try {
    const alice = await connect(server.ws, { project: "js-restart" });
    const bob = await connect(server.ws, { project: "js-restart" });
    clients.push(alice, bob);
    const room = await alice.join("table", { create: true });
    await bob.join("table");
    const seen = { messages: [], seqs: [], away: [], connection: [] };
    alice.on("session.message", (event) => {
      seen.messages.push(event.data.data.n);
      seen.seqs.push(event.seq);
    });
    alice.on("*", (event) => {
      if (event.type.startsWith("connection.")) seen.connection.push(event.type);
    });
    alice.on("connection.away", (event) => seen.away.push([event.data.code, event.data.reason]));
    const ids = [alice.clientId, bob.clientId];
    for (let n = 0; n < 20; n++) bob.send(room.session_id, { n });
    await waitFor(() => seen.messages.length === 20, { what: "the messages before the restart" });

    assert.equal(await server.stop(), 0);
    await waitFor(() => alice.state === "away" && bob.state === "away", { what: "both away" });
    assert.deepEqual(seen.away, [[3001, "resume"]]);
    server = await runMatchmaker(args);
    await waitFor(() => alice.state === "open" && bob.state === "open", {
      withinMs: 15_000,
      what: "both clients open again on the new process",
    });
    assert.deepEqual([alice.clientId, bob.clientId], ids);
    assert.equal(alice.helloReply.resumed, true);
    assert.equal(bob.helloReply.resumed, true);

    for (let n = 20; n < 40; n++) bob.send(room.session_id, { n });
    await waitFor(() => seen.messages.length >= 40, { what: "the messages after the restart" });
    assert.deepEqual(seen.messages, [...Array(40).keys()]);
    assert.ok(seen.seqs.every((seq, i) => i === 0 || seq > seen.seqs[i - 1]));
    assert.deepEqual(seen.connection, ["connection.away", "connection.back"]);
    alice.send(room.session_id, { from: "alice" });
    const message = await bob.nextEvent("session.message");
    assert.equal(message.data.session_id, room.session_id);
    assert.deepEqual(message.data.data, { from: "alice" });
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const kind of ["hypercorn", "picows"]) {
  test(`on ${kind}, both sending every 5 ms across a restart: every message once, in order, both ways`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "mm-js-restart-"));
    const args = [...restartable(await freePort(), dir), "--server", kind];
    let server = await runMatchmaker(args);
    const clients = [];
    try {
      const reconnect = { initialDelayMs: 50, maxDelayMs: 300 };
      const alice = await connect(server.ws, { project: "js-restart", reconnect });
      const bob = await connect(server.ws, { project: "js-restart", reconnect });
      clients.push(alice, bob);
      const room = await alice.join("table", { create: true });
      await bob.join("table");
      const ids = [alice.clientId, bob.clientId];
      const played = await playBothWays(clients, room.session_id, async (players) => {
        assert.equal(await server.stop(), 0);
        server = await runMatchmaker(args);
        await waitFor(() => bothBack(players), { withinMs: 20_000, what: "both open on the new process" });
      });
      assertOnceInOrderBothWays(played, ids);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
