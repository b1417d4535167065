// Reconnect with resume: a TCP proxy in front of a real matchmaker is cut or frozen, and the
// client must come back with every event once, in order, or give up cleanly.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { WebSocket } from "ws";

import { connect, startMatchmaker, startProxy, waitFor } from "./helpers.mjs";

const HEARTBEAT = ["--heartbeat-interval-ms", "300", "--heartbeat-timeout-ms", "1500"];
let server;
let proxy;
before(async () => {
  server = await startMatchmaker(["--resume-grace-ms", "5000", ...HEARTBEAT]);
});
after(async () => {
  await server?.stop();
});

/** Alice through the proxy, Bob directly, both in one room; Alice records what she gets. */
async function pair(project) {
  proxy = await startProxy(server.port);
  const alice = await connect(proxy.url, { project });
  const bob = await connect(server.ws, { project });
  const room = await alice.join("room", { create: true });
  await bob.join("room");
  const seen = { messages: [], seqs: [], connection: [], peer: [] };
  alice.on("session.message", (event) => {
    seen.messages.push(event.data.data.n);
    seen.seqs.push(event.seq);
  });
  alice.on("*", (event) => {
    if (event.type.startsWith("connection.")) seen.connection.push(event.type);
  });
  bob.on("session.member_status", (event) => seen.peer.push(event.data.status));
  return { alice, bob, sessionId: room.session_id, seen };
}

async function finish(...clients) {
  await Promise.all(clients.map((client) => client.close()));
  await proxy.stop();
}

function strictlyIncreasing(values) {
  return values.every((value, index) => index === 0 || value > values[index - 1]);
}

test("a cut TCP connection is resumed: no event lost or duplicated, away and back surfaced", async () => {
  const { alice, bob, sessionId, seen } = await pair("js-resume-cut");
  try {
    const clientId = alice.clientId;
    for (let n = 0; n < 50; n++) bob.send(sessionId, { n });
    await waitFor(() => seen.messages.length >= 10, { what: "the first messages" });
    proxy.cut();
    for (let n = 50; n < 100; n++) bob.send(sessionId, { n });
    await waitFor(() => seen.messages.length >= 100 && seen.connection.includes("connection.back"), {
      what: "every message after the resume",
    });
    assert.deepEqual(seen.messages, [...Array(100).keys()]);
    assert.ok(strictlyIncreasing(seen.seqs));
    assert.deepEqual(seen.connection, ["connection.away", "connection.back"]);
    assert.equal(alice.clientId, clientId);
    assert.equal(alice.helloReply.resumed, true);
    await waitFor(() => seen.peer.includes("back"), { what: "Bob seeing Alice back" });
    assert.deepEqual(seen.peer, ["away", "back"]);
    // The resumed client works as before, both ways.
    alice.send(sessionId, { from: "alice" });
    assert.deepEqual((await bob.nextEvent("session.message")).data.data, { from: "alice" });
  } finally {
    await finish(alice, bob);
  }
});

test("a request waiting while the connection is away is sent once it is back", async () => {
  const { alice, bob, seen } = await pair("js-resume-queue");
  try {
    proxy.refuse();
    proxy.cut();
    await waitFor(() => alice.state === "away", { what: "Alice away" });
    const entered = alice.enter({ pool: "later", create: true, mode: "auto", groupSize: 2 });
    await proxy.accept();
    assert.equal((await entered).pool, "later");
    assert.deepEqual(seen.connection, ["connection.away", "connection.back"]);
  } finally {
    await finish(alice, bob);
  }
});

test("a half-open connection is found by heartbeats and resumed", async () => {
  const { alice, bob, sessionId, seen } = await pair("js-resume-frozen");
  try {
    bob.send(sessionId, { n: 0 });
    await waitFor(() => seen.messages.length === 1, { what: "the first message" });
    proxy.freeze();
    for (let n = 1; n < 20; n++) bob.send(sessionId, { n });
    await waitFor(() => seen.messages.length === 20, { what: "the messages sent while frozen" });
    assert.deepEqual(seen.messages, [...Array(20).keys()]);
    assert.deepEqual(seen.connection, ["connection.away", "connection.back"]);
  } finally {
    await finish(alice, bob);
  }
});

test("an idle connection is kept open by heartbeats", async () => {
  const frames = [];
  const client = await connect(server.ws, {
    project: "js-idle",
    onFrame: (direction, text) => frames.push(`${direction} ${JSON.parse(text).type}`),
  });
  const drops = [];
  client.on("connection.away", (event) => drops.push(event));
  try {
    const { timeout_ms } = client.helloReply.heartbeat;
    await new Promise((resolve) => setTimeout(resolve, 2 * timeout_ms)); // the span under test
    assert.equal(client.state, "open");
    assert.deepEqual(drops, []);
    assert.ok(frames.includes("out ping") || frames.includes("out pong"), frames.join(", "));
    await client.ping();
  } finally {
    await client.close();
  }
});

test("resume.expired from the server closes the client cleanly", async () => {
  const { alice, bob, seen } = await pair("js-resume-expired");
  try {
    proxy.refuse();
    proxy.cut();
    await waitFor(() => alice.state === "away", { what: "Alice away" });
    // Someone else resumes Alice's client first: her token is used up.
    const thief = new WebSocket(server.ws);
    await new Promise((resolve) => thief.once("open", resolve));
    const resume = { token: alice.helloReply.resume_token, last_seq: alice.lastSeq };
    thief.send(JSON.stringify({ id: "1", type: "hello", data: { v: 1, project: "js-resume-expired", resume } }));
    const [reply] = await new Promise((resolve) => thief.once("message", (data) => resolve([JSON.parse(data)])));
    assert.equal(reply.data.resumed, true);
    await proxy.accept();
    const closed = await alice.nextEvent("connection.closed");
    assert.equal(closed.data.error.code, "resume.expired");
    assert.equal(alice.state, "closed");
    assert.deepEqual(seen.connection, ["connection.away", "connection.closed"]);
    await assert.rejects(alice.ping(), (error) => error.code === "client.closed" && error.details.reason === "resume.expired");
    thief.close();
  } finally {
    await finish(alice, bob);
  }
});

test("the client gives up with resume.expired when the grace runs out", async () => {
  const short = await startMatchmaker(["--resume-grace-ms", "700"]);
  const local = await startProxy(short.port);
  const alice = await connect(local.url, { project: "js-grace" });
  const bob = await connect(short.ws, { project: "js-grace" });
  try {
    await alice.join("r", { create: true });
    await bob.join("r");
    local.refuse();
    local.cut();
    await waitFor(() => alice.state === "away", { what: "Alice away" });
    alice.send("r", "never sent"); // waits for the connection, which never comes back
    const closed = await alice.nextEvent("connection.closed", { timeoutMs: 5000 });
    assert.equal(closed.data.error.code, "resume.expired");
    const failed = await alice.nextEvent("error");
    assert.equal(failed.data.code, "client.closed");
    assert.equal(failed.data.details.reason, "resume.expired");
    assert.equal((await bob.nextEvent("session.member_left")).data.reason, "disconnected");
  } finally {
    await alice.close();
    await bob.close();
    await local.stop();
    await short.stop();
  }
});
