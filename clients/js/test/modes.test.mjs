// Every pool mode's requests and events through the client, against a real matchmaker.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { connect, declareProject, startMatchmaker } from "./helpers.mjs";

const DELEGATE_KEY = "js-delegate-secret-0123456789";
const PLAYER_KEY = "js-player-secret-0123456789";
let server;
before(async () => {
  server = await startMatchmaker([], { management: true });
  await declareProject(server, {
    id: "js-delegated",
    keys: [
      { type: "shared-secret", secret: DELEGATE_KEY, scopes: ["delegate"] },
      { type: "shared-secret", secret: PLAYER_KEY },
    ],
    policies: [{ name: "draft", mode: "delegated", groupSize: 2 }],
  });
});
after(async () => {
  await server?.stop();
});

async function players(project, count) {
  return Promise.all(Array.from({ length: count }, () => connect(server.ws, { project })));
}

async function closeAll(clients) {
  await Promise.all(clients.map((client) => client.close()));
}

test("auto: @self groups only members with the same attribute", async () => {
  const [eu1, us, eu2] = await Promise.all(
    ["eu", "us", "eu"].map((region) => connect(server.ws, { project: "js-self", attributes: { region } })),
  );
  try {
    const pool = { pool: "ranked", create: true, mode: "auto", groupSize: 2, filter: { region: "@self" } };
    for (const client of [eu1, us, eu2]) await client.enter(pool);
    const created = await eu2.nextEvent("session.created");
    assert.deepEqual(created.data.members.map((m) => m.client_id).sort(), [eu1.clientId, eu2.clientId].sort());
    await assert.rejects(us.nextEvent("session.created", { timeoutMs: 300 }), { code: "client.timeout" });
  } finally {
    await closeAll([eu1, us, eu2]);
  }
});

test("auto: a member backfills an open seat", async () => {
  const [a, b, c, d] = await players("js-backfill", 4);
  try {
    const pool = { pool: "trio", create: true, mode: "auto", groupSize: 3 };
    for (const client of [a, b, c]) await client.enter(pool);
    const sessionId = (await a.nextEvent("session.created")).data.session_id;
    await c.leaveSession(sessionId);
    assert.deepEqual(await a.backfill(sessionId, 1), { session_id: sessionId, filled: [], pending: 1 });
    await d.enter(pool);
    assert.equal((await d.nextEvent("session.created")).data.session_id, sessionId);
    assert.equal((await b.nextEvent("session.member_joined")).data.client_id, d.clientId);
  } finally {
    await closeAll([a, b, c, d]);
  }
});

test("claim: list, watch and claim a listed entry", async () => {
  const [host, seeker, late] = await players("js-claim", 3);
  try {
    const pool = { pool: "lobby", create: true, mode: "claim", groupSize: 2 };
    await host.enter({ ...pool, public: { map: "dust" } });
    await seeker.enter({ ...pool, listed: false });
    const watching = await seeker.watch("lobby");
    assert.deepEqual(watching, { pool: "lobby", watching: true });
    const page = await seeker.list("lobby", { limit: 10 });
    assert.deepEqual(page.entries.map((e) => [e.client_id, e.public]), [[host.clientId, { map: "dust" }]]);
    assert.equal(page.cursor, null);
    await late.enter(pool);
    const listed = await seeker.nextEvent("pool.listed");
    assert.equal(listed.data.entry.client_id, late.clientId);
    const claimed = await seeker.claim("lobby", [host.clientId]);
    const created = await host.nextEvent("session.created");
    assert.equal(created.data.session_id, claimed.session_id);
    await assert.rejects(seeker.claim("lobby", [late.clientId]), { code: "pool.not_found" });
  } finally {
    await closeAll([host, seeker, late]);
  }
});

test("mutual: a reciprocal pick forms the session", async () => {
  const [ann, ben] = await players("js-mutual", 2);
  try {
    const pool = { pool: "friends", create: true, mode: "mutual", groupSize: 2 };
    await ann.enter(pool);
    await ben.enter(pool);
    const first = await ann.pick("friends", ben.clientId);
    assert.deepEqual(first, { pool: "friends", picks: [ben.clientId], session_id: null });
    assert.deepEqual(await ann.unpick("friends", ben.clientId), { pool: "friends", picks: [], session_id: null });
    await ann.pick("friends", ben.clientId);
    await assert.rejects(ben.pick("friends", ben.clientId), { code: "pick.invalid" });
    const formed = await ben.pick("friends", ann.clientId);
    assert.match(formed.session_id, /.+/);
    assert.equal((await ann.nextEvent("session.created")).data.session_id, formed.session_id);
  } finally {
    await closeAll([ann, ben]);
  }
});

test("propose: create, received, decline, cancel, accept forms", async () => {
  const [pat, quinn] = await players("js-propose", 2);
  try {
    const pool = { pool: "duels", create: true, mode: "propose", groupSize: 2 };
    await pat.enter(pool);
    await quinn.enter(pool);
    const declined = await pat.propose("duels", [quinn.clientId]);
    const received = await quinn.nextEvent("proposal.received");
    assert.equal(received.data.proposal_id, declined.proposal_id);
    assert.equal(received.data.proposer, pat.clientId);
    assert.deepEqual(await quinn.respond(declined.proposal_id, false), {
      proposal_id: declined.proposal_id,
      state: "closed",
      session_id: null,
    });
    assert.equal((await pat.nextEvent("proposal.closed")).data.reason, "declined");
    const cancelled = await pat.propose("duels", [quinn.clientId], { ttl_ms: 5000 });
    assert.equal((await pat.cancelProposal(cancelled.proposal_id)).state, "closed");
    assert.equal((await quinn.nextEvent("proposal.closed")).data.reason, "cancelled");
    await assert.rejects(quinn.respond(cancelled.proposal_id, true), { code: "proposal.not_found" });
    const accepted = await pat.propose("duels", [quinn.clientId]);
    const answer = await quinn.respond(accepted.proposal_id, true);
    assert.equal(answer.state, "formed");
    assert.equal((await pat.nextEvent("session.created")).data.session_id, answer.session_id);
  } finally {
    await closeAll([pat, quinn]);
  }
});

test("delegated: attach, snapshot, delta and form", async () => {
  const delegate = await connect(server.ws, { credential: DELEGATE_KEY });
  const [one, two] = await Promise.all([1, 2].map(() => connect(server.ws, { credential: PLAYER_KEY })));
  try {
    const first = await one.enter({ policy: "draft" });
    const attached = await delegate.attach("draft");
    const snapshot = await delegate.nextEvent("pool.snapshot");
    assert.equal(snapshot.data.version, attached.version);
    assert.deepEqual(snapshot.data.entries.map((e) => e.entry_id), [first.entry_id]);
    const second = await two.enter({ policy: "draft" });
    const delta = await delegate.nextEvent("pool.delta");
    assert.equal(delta.data.version, attached.version + 1);
    assert.deepEqual(delta.data.added.map((e) => e.entry_id), [second.entry_id]);
    const formed = await delegate.form("draft", [[first.entry_id, second.entry_id], [first.entry_id]]);
    assert.equal(formed.results[0].ok, true);
    assert.equal(formed.results[1].ok, false);
    assert.equal((await two.nextEvent("session.created")).data.session_id, formed.results[0].session_id);
    await assert.rejects(one.attach("draft"), { code: "project.forbidden" });
  } finally {
    await closeAll([delegate, one, two]);
  }
});
