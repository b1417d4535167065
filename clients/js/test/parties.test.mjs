// Parties through the client, against a real matchmaker: made and joined by code, entered
// by the leader for all, matched into one session together, withdrawn when they change.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { connect, declareProject, startMatchmaker } from "./helpers.mjs";

let server;
before(async () => {
  server = await startMatchmaker([], { management: true });
  await declareProject(server, {
    id: "js-party",
    policies: [
      { name: "squad", mode: "auto", groupSize: 4, default: true },
      { name: "duel", mode: "auto", groupSize: 2 },
    ],
  });
});
after(async () => {
  await server?.stop();
});

async function players(count) {
  return Promise.all(Array.from({ length: count }, () => connect(server.ws, { project: "js-party" })));
}

async function closeAll(clients) {
  await Promise.all(clients.map((client) => client.close()));
}

test("a party of two and two solos play in one session of four", async () => {
  const [a, b, s1, s2] = await players(4);
  try {
    const party = await a.partyCreate();
    assert.equal(party.leader, a.clientId);
    assert.match(party.code, /^[0-9A-HJKMNP-TV-Z]{8}$/);
    const joined = await b.partyJoin(party.code.toLowerCase());
    assert.deepEqual(joined.members.map((m) => m.client_id), [a.clientId, b.clientId]);
    assert.equal((await a.nextEvent("party.member_joined")).data.client_id, b.clientId);
    await s1.enter({ policy: "squad" });
    const entered = await a.enter({ policy: "squad", party_id: party.party_id });
    const told = await b.nextEvent("party.entered");
    assert.deepEqual(told.data, { party_id: party.party_id, pool: "squad", entry_id: entered.entry_id });
    await s2.enter({ policy: "squad" });
    const created = await Promise.all([a, b, s1, s2].map((c) => c.nextEvent("session.created")));
    assert.equal(new Set(created.map((e) => e.data.session_id)).size, 1);
    assert.deepEqual(
      created[0].data.members.map((m) => m.client_id).sort(),
      [a.clientId, b.clientId, s1.clientId, s2.clientId].sort(),
    );
  } finally {
    await closeAll([a, b, s1, s2]);
  }
});

test("a party that changes while queued is withdrawn for all", async () => {
  const [a, b, c] = await players(3);
  try {
    const party = await a.partyCreate();
    await b.partyJoin(party.code);
    await c.partyJoin(party.code);
    const entered = await a.enter({ party_id: party.party_id });
    await c.partyLeave(party.party_id);
    for (const member of [a, b, c]) {
      const withdrawn = await member.nextEvent("pool.withdrawn");
      assert.deepEqual(withdrawn.data, { pool: "squad", entry_id: entered.entry_id, reason: "party_changed" });
    }
    const left = await b.nextEvent("party.member_left");
    assert.deepEqual(left.data, { party_id: party.party_id, client_id: c.clientId, reason: "left", leader: a.clientId });
  } finally {
    await closeAll([a, b, c]);
  }
});

test("a party too large, or entered by a member, is refused", async () => {
  const [a, b, c] = await players(3);
  try {
    const party = await a.partyCreate();
    await b.partyJoin(party.code);
    await c.partyJoin(party.code);
    await assert.rejects(a.enter({ policy: "duel", party_id: party.party_id }), { code: "party.too_large" });
    await assert.rejects(b.enter({ party_id: party.party_id }), { code: "party.not_leader" });
    await assert.rejects(c.partyJoin("ZZZZ-ZZZZ"), { code: "party.not_found" });
  } finally {
    await closeAll([a, b, c]);
  }
});
