// Short-lived tokens: `credential` as a function, called at every (re)connect, and a resume
// that keeps the match with a token that expired since hello (docs/protocol.md, "Reconnect
// and resume": what a resuming hello checks). A real matchmaker with a jwt Project.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { connect, declareProject, hs256Token, startMatchmaker, startProxy, waitFor } from "./helpers.mjs";

const SECRET = "js-credential-tests-jwt-secret-0123456789";
const PROJECT = "js-tokens";
const EXPIRED = { expiresInS: -3600 }; // well past the server's leeway for clock skew
let server;
before(async () => {
  server = await startMatchmaker(["--resume-grace-ms", "5000"], { management: true });
  await declareProject(server, { id: PROJECT, keys: [{ type: "jwt", algorithm: "HS256", key: SECRET }] });
});
after(async () => {
  await server?.stop();
});

/** Alice through a proxy with `credential`, Bob directly, in one room; Alice's hellos kept. */
async function pair(credential) {
  const proxy = await startProxy(server.port);
  const hellos = [];
  const onFrame = (direction, text) => {
    const frame = JSON.parse(text);
    if (direction === "out" && frame.type === "hello") hellos.push(frame.data);
  };
  const alice = await connect(proxy.url, { project: PROJECT, credential, onFrame });
  const bob = await connect(server.ws, { project: PROJECT, credential: hs256Token(SECRET, "bob") });
  const room = await alice.join("room", { create: true });
  await bob.join("room");
  return { proxy, alice, bob, hellos, sessionId: room.session_id };
}

async function finish({ proxy, alice, bob }) {
  await Promise.all([alice.close(), bob.close()]);
  await proxy.stop();
}

test("a credential function is called at every (re)connect and its fresh token is presented", async () => {
  const issued = [];
  const credential = async () => {
    issued.push(hs256Token(SECRET, "alice", { n: issued.length }));
    return issued.at(-1);
  };
  const game = await pair(credential);
  const { proxy, alice, bob, hellos, sessionId } = game;
  try {
    const clientId = alice.clientId;
    proxy.cut();
    await alice.nextEvent("connection.back");
    assert.equal(issued.length, 2);
    assert.deepEqual(
      hellos.map((hello) => [hello.credential, hello.resume !== undefined]),
      [
        [issued[0], false],
        [issued[1], true],
      ],
    );
    assert.equal(alice.clientId, clientId);
    bob.send(sessionId, "still here");
    assert.equal((await alice.nextEvent("session.message")).data.data, "still here");
  } finally {
    await finish(game);
  }
});

test("a resume keeps the match with a token that expired since hello; a fresh hello does not", async () => {
  let calls = 0;
  const credential = () => hs256Token(SECRET, "alice", ++calls === 1 ? {} : EXPIRED);
  const game = await pair(credential);
  const { proxy, alice, bob, sessionId } = game;
  try {
    const clientId = alice.clientId;
    proxy.cut();
    await alice.nextEvent("connection.back");
    assert.equal(calls, 2);
    assert.equal(alice.clientId, clientId);
    assert.equal(alice.helloReply.resumed, true);
    bob.send(sessionId, "same match");
    assert.equal((await alice.nextEvent("session.message")).data.data, "same match");
    await assert.rejects(connect(server.ws, { project: PROJECT, credential: hs256Token(SECRET, "carol", EXPIRED) }), (error) => {
      assert.equal(error.code, "auth.invalid_credential");
      assert.equal(error.details.reason, "expired");
      return true;
    });
  } finally {
    await finish(game);
  }
});

test("a credential function failing during a blip is retried within the grace", async () => {
  let calls = 0;
  const credential = () => {
    calls += 1;
    if (calls === 2) throw new Error("token service unreachable");
    return hs256Token(SECRET, "alice");
  };
  const game = await pair(credential);
  try {
    game.proxy.cut();
    const back = await game.alice.nextEvent("connection.back");
    assert.equal(calls, 3);
    assert.equal(back.data.attempts, 2);
  } finally {
    await finish(game);
  }
});

test("a credential function failing at connect rejects with client.credential", async () => {
  const failing = () => Promise.reject(new Error("no token"));
  await assert.rejects(connect(server.ws, { project: PROJECT, credential: failing }), (error) => {
    assert.equal(error.code, "client.credential");
    assert.match(error.message, /no token/);
    return true;
  });
  const notText = () => 42;
  await assert.rejects(connect(server.ws, { project: PROJECT, credential: notText }), { code: "client.credential" });
});

test("the credential is a value too: the same one is presented again on resume", async () => {
  const token = hs256Token(SECRET, "alice");
  const game = await pair(token);
  try {
    game.proxy.cut();
    await waitFor(() => game.hellos.length === 2, { what: "the resuming hello" });
    await game.alice.nextEvent("connection.back");
    assert.deepEqual(
      game.hellos.map((hello) => hello.credential),
      [token, token],
    );
  } finally {
    await finish(game);
  }
});
