// The client against a real matchmaker: hello, auto matches, rooms, send, errors, timeouts, close.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { MatchmakerError } from "../dist/index.js";
import { connect, startMatchmaker, startProxy } from "./helpers.mjs";

let server;
before(async () => {
  server = await startMatchmaker();
});
after(async () => {
  await server?.stop();
});

test("hello answers the client id, limits and heartbeat", async () => {
  const client = await connect(server.ws, { project: "js-hello", attributes: { region: "eu" } });
  try {
    assert.match(client.clientId, /.+/);
    assert.equal(client.helloReply.project, "js-hello");
    assert.equal(client.helloReply.resumed, false);
    assert.equal(typeof client.helloReply.limits.resume_grace_ms, "number");
    assert.equal(client.state, "open");
    await client.ping();
  } finally {
    await client.close();
  }
});

test("two clients are matched in an auto pool and talk, in order", async () => {
  const alice = await connect(server.ws, { project: "js-auto" });
  const bob = await connect(server.ws, { project: "js-auto" });
  try {
    const pool = { pool: "duel", create: true, mode: "auto", groupSize: 2 };
    const entered = await alice.enter({ ...pool, public: { name: "alice" } });
    assert.equal(entered.mode, "auto");
    assert.equal(entered.groupSize, 2);
    await bob.enter(pool);
    const created = await alice.nextEvent("session.created");
    assert.equal(created.data.you, alice.clientId);
    assert.deepEqual(created.data.members.map((m) => m.client_id).sort(), [alice.clientId, bob.clientId].sort());
    assert.equal(typeof created.seq, "number");
    for (let n = 0; n < 20; n++) alice.send(created.data.session_id, { n });
    const got = [];
    for (let n = 0; n < 20; n++) {
      const message = await bob.nextEvent("session.message");
      assert.equal(message.data.from, alice.clientId);
      got.push(message.data.data.n);
    }
    assert.deepEqual(got, [...Array(20).keys()]);
  } finally {
    await alice.close();
    await bob.close();
  }
});

test("rooms: join, member_joined, callbacks, the events iterator and leave", async () => {
  const host = await connect(server.ws, { project: "js-rooms" });
  const guest = await connect(server.ws, { project: "js-rooms" });
  const seen = [];
  host.on("session.member_joined", (event) => seen.push(event.data.client_id));
  try {
    const opened = await host.join("table-1", { create: true });
    assert.equal(opened.created, true);
    const joined = await guest.join("table-1", { public: { seat: 2 } });
    assert.equal(joined.session_id, opened.session_id);
    const iterator = host.events();
    const types = [];
    for await (const event of iterator) {
      types.push(event.type);
      if (event.type === "session.member_joined") break;
    }
    assert.deepEqual(types, ["session.created", "session.member_joined"]);
    assert.deepEqual(seen, [guest.clientId]);
    await guest.leaveSession(joined.session_id);
    const left = await host.nextEvent("session.member_left");
    assert.equal(left.data.reason, "left");
  } finally {
    await host.close();
    await guest.close();
  }
});

test("an error reply rejects with the server's code", async () => {
  const client = await connect(server.ws, { project: "js-errors" });
  try {
    await assert.rejects(client.enter({ pool: "nowhere" }), (error) => {
      assert.ok(error instanceof MatchmakerError);
      assert.equal(error.code, "pool.not_found");
      return true;
    });
    await client.enter({ pool: "p", create: true, mode: "auto", groupSize: 3 });
    await assert.rejects(client.enter({ pool: "p" }), { code: "pool.already_entered" });
    const other = await connect(server.ws, { project: "js-errors" });
    await assert.rejects(other.enter({ pool: "p", mode: "auto", groupSize: 4 }), { code: "pool.conflict" });
    await other.close();
    await assert.rejects(client.leave("never-entered"), { code: "pool.not_found" });
    await assert.rejects(client.request("session.join", { session: "x", bogus: 1 }), {
      code: "protocol.bad_request",
    });
  } finally {
    await client.close();
  }
});

test("a failed fire-and-forget send arrives as an error event", async () => {
  const client = await connect(server.ws, { project: "js-errors" });
  try {
    client.send("no-such-session", { hi: true });
    const error = await client.nextEvent("error");
    assert.equal(error.data.code, "session.not_found");
  } finally {
    await client.close();
  }
});

test("a refused hello rejects connect with the server's code", async () => {
  await assert.rejects(connect(server.ws, { credential: "bound-to-nothing" }), {
    code: "auth.invalid_credential",
  });
});

test("a socket that cannot be opened is client.connect", async () => {
  const proxy = await startProxy(server.port);
  const url = proxy.url;
  await proxy.stop();
  await assert.rejects(connect(url, { openTimeoutMs: 2000 }), { code: "client.connect" });
});

test("a request without a reply times out with client.timeout", async () => {
  const proxy = await startProxy(server.port);
  const client = await connect(proxy.url, { project: "js-timeout", reconnect: false });
  try {
    proxy.freeze();
    await assert.rejects(client.request("ping", undefined, { timeoutMs: 300 }), (error) => {
      assert.equal(error.code, "client.timeout");
      assert.equal(error.details.timeout_ms, 300);
      return true;
    });
    await assert.rejects(client.nextEvent("session.created", { timeoutMs: 200 }), { code: "client.timeout" });
  } finally {
    await proxy.stop();
    await client.close();
  }
});

test("close sends bye: the peer sees disconnected at once, the client refuses more", async () => {
  const alice = await connect(server.ws, { project: "js-bye" });
  const bob = await connect(server.ws, { project: "js-bye" });
  try {
    const room = await alice.join("r", { create: true });
    await bob.join("r");
    await bob.close();
    assert.equal(bob.state, "closed");
    assert.equal(bob.closeCode, 4000);
    const left = await alice.nextEvent("session.member_left");
    assert.equal(left.data.reason, "disconnected");
    const last = await bob.nextEvent("connection.closed");
    assert.equal(last.data.error, null);
    await assert.rejects(bob.enter({}), { code: "client.closed" });
    // send never throws: as docs/library.md says, its failure is an `error` event.
    const failed = [];
    bob.on("error", (event) => failed.push(event.data));
    bob.send(room.session_id, 1);
    assert.equal(failed.length, 1);
    assert.equal(failed[0].code, "client.closed");
    assert.equal((await bob.nextEvent("error")).data.details.close_code, 4000);
  } finally {
    await alice.close();
  }
});
