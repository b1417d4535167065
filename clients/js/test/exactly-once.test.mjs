// Exactly once, both ways (docs/protocol.md, "Exactly once"): both players behind a TCP
// proxy that is cut again and again while each sends every 5 ms; and the bound on what a
// client holds unacknowledged. On each data-plane server.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { connect, startMatchmaker, startProxy, waitFor } from "./helpers.mjs";

const ARGS = ["--resume-grace-ms", "10000", "--heartbeat-interval-ms", "300", "--heartbeat-timeout-ms", "1500"];
const CUTS = 5;

for (const kind of ["hypercorn", "picows"]) {
  describe(`on ${kind}`, () => {
    let server;
    before(async () => {
      server = await startMatchmaker(["--server", kind, ...ARGS]);
    });
    after(async () => {
      await server?.stop();
    });

    test("cut after cut, every message arrives exactly once and in order both ways", async () => {
      const proxy = await startProxy(server.port);
      const reconnect = { initialDelayMs: 20, maxDelayMs: 200 };
      // A resume sends again from the ack at once: the server never sees a gap.
      const gaps = [];
      const onFrame = (direction, text) => {
        if (direction === "in" && text.includes('"expected"')) gaps.push(text);
      };
      const options = { project: `js-once-${kind}`, reconnect, onFrame };
      const alice = await connect(proxy.url, options);
      const bob = await connect(proxy.url, options);
      try {
        const room = await alice.join("room", { create: true });
        await bob.join("room");
        const got = { alice: [], bob: [] };
        const backs = { alice: 0, bob: 0 };
        alice.on("session.message", (event) => got.alice.push(event.data.data.n));
        bob.on("session.message", (event) => got.bob.push(event.data.data.n));
        alice.on("connection.back", () => backs.alice++);
        bob.on("connection.back", () => backs.bob++);
        const errors = [];
        for (const client of [alice, bob]) client.on("error", (event) => errors.push(event.data));
        let sent = 0;
        const sending = setInterval(() => {
          assert.ok(alice.send(room.session_id, { n: sent }));
          assert.ok(bob.send(room.session_id, { n: sent }));
          sent++;
        }, 5);
        try {
          for (let cut = 1; cut <= CUTS; cut++) {
            const before = sent;
            await waitFor(() => sent >= before + 30, { what: "messages sent between cuts" });
            // What the server sends is lost for a while first: it takes messages whose ack
            // never arrives, which only the resumed hello's ack then tells the client.
            proxy.freeze("down");
            await waitFor(() => sent >= before + 40, { what: "messages sent while frozen" });
            proxy.cut();
            await waitFor(() => backs.alice >= cut && backs.bob >= cut, { what: `both back after cut ${cut}` });
          }
          const before = sent;
          await waitFor(() => sent >= before + 40, { what: "messages sent after the last cut" });
        } finally {
          clearInterval(sending);
        }
        const all = [...Array(sent).keys()];
        await waitFor(() => got.alice.length >= sent && got.bob.length >= sent, {
          what: `${sent} messages each way`,
        });
        assert.deepEqual(got.bob, all); // what Alice sent, once each, in order
        assert.deepEqual(got.alice, all);
        assert.deepEqual(errors, []);
        assert.deepEqual(gaps, []);
        assert.deepEqual(backs, { alice: CUTS, bob: CUTS });
      } finally {
        await alice.close();
        await bob.close();
        await proxy.stop();
      }
    });

    test("acknowledgements free the held bytes; past the cap send reports back-pressure", async () => {
      const limit = 4000;
      const alice = await connect(server.ws, { project: `js-bound-${kind}`, maxUnackedBytes: limit });
      const bob = await connect(server.ws, { project: `js-bound-${kind}` });
      try {
        const room = await alice.join("room", { create: true });
        await bob.join("room");
        const pressure = [];
        alice.on("error", (event) => pressure.push(event.data));
        const got = [];
        bob.on("session.message", (event) => got.push(event.data.data.n));
        const pad = "x".repeat(200);
        // 60 frames of ~270 bytes: four times the cap. Bob sends nothing, so Alice learns
        // her ack only from the pongs of the pings she sends past half the cap.
        for (let n = 0; n < 60; n++) {
          while (!alice.send(room.session_id, { n, pad })) {
            await new Promise((resolve) => setImmediate(resolve)); // let the pong in
          }
        }
        assert.ok(pressure.length > 0, "the loop outran the acknowledgements at least once");
        for (const error of pressure) {
          assert.equal(error.code, "client.backpressure");
          assert.deepEqual(error.details, { limit });
        }
        await waitFor(() => got.length >= 60, { what: "every message" });
        assert.deepEqual(got, [...Array(60).keys()]);
      } finally {
        await alice.close();
        await bob.close();
      }
    });

    test("a frozen connection holds at most the cap; the resume sends the rest once", async () => {
      const proxy = await startProxy(server.port);
      const limit = 3000;
      const alice = await connect(proxy.url, { project: `js-frozen-${kind}`, maxUnackedBytes: limit });
      const bob = await connect(server.ws, { project: `js-frozen-${kind}` });
      try {
        const room = await alice.join("room", { create: true });
        await bob.join("room");
        const got = [];
        bob.on("session.message", (event) => got.push(event.data.data.n));
        const refused = [];
        alice.on("error", (event) => refused.push(event.data.code));
        proxy.freeze(); // nothing is acknowledged any more
        let taken = 0;
        for (let n = 0; n < 100; n++) if (alice.send(room.session_id, { n: taken, pad: "y".repeat(50) })) taken++;
        assert.ok(taken > 0 && taken < 100, `${taken} taken`);
        assert.ok(taken * 70 <= limit, "no more than the cap is held");
        assert.equal(refused.length, 100 - taken);
        assert.ok(refused.every((code) => code === "client.backpressure"));
        await alice.nextEvent("connection.back", { timeoutMs: 10_000 }); // the heartbeat found it
        await waitFor(() => got.length >= taken, { what: "the held messages" });
        assert.deepEqual(got, [...Array(taken).keys()]);
        await alice.ping(); // its pong says the ack: nothing is held any more
        assert.ok(alice.send(room.session_id, { n: taken }));
        await waitFor(() => got.length === taken + 1, { what: "a message after the resume" });
      } finally {
        await alice.close();
        await bob.close();
        await proxy.stop();
      }
    });
  });
}

test("a send refused as rate-limited leaves a gap the client fills: still once, in order", async () => {
  const server = await startMatchmaker(["--send-rate-per-s", "100", "--send-burst", "10"]);
  const alice = await connect(server.ws, { project: "js-gap" });
  const bob = await connect(server.ws, { project: "js-gap" });
  try {
    const room = await alice.join("room", { create: true });
    await bob.join("room");
    const limited = [];
    alice.on("error", (event) => limited.push(event.data));
    const got = [];
    bob.on("session.message", (event) => got.push(event.data.data.n));
    for (let n = 0; n < 30; n++) assert.ok(alice.send(room.session_id, { n })); // a burst of 10
    await waitFor(() => got.length >= 30, { what: "every message, the limited ones again" });
    assert.deepEqual(got, [...Array(30).keys()]);
    assert.ok(limited.length > 0);
    assert.ok(limited.every((error) => error.code === "rate.limited" && typeof error.details.seq === "number"));
  } finally {
    await alice.close();
    await bob.close();
    await server.stop();
  }
});
