// Teams, balance, regions and the session handle through the client, against a real matchmaker.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { connect, declareProject, startMatchmaker, waitFor } from "./helpers.mjs";

let server;
before(async () => {
  server = await startMatchmaker([], { management: true });
  await declareProject(server, {
    id: "js-teams",
    policies: [
      {
        name: "duo",
        mode: "auto",
        groupSize: 4,
        teams: [{ name: "red", size: 2 }, { name: "blue", size: 2 }],
        balance: { attribute: "rating", maxDifference: 50 },
      },
      { name: "near", mode: "auto", groupSize: 2, regions: { maxLatencyMs: 80 } },
    ],
  });
});
after(async () => {
  await server?.stop();
});

const closeAll = (clients) => Promise.all(clients.map((client) => client.close()));

test("teams: a 2v2 is balanced and the session handle knows each member's team", async () => {
  const ratings = [1000, 1010, 2000, 2010];
  const clients = await Promise.all(
    ratings.map((rating) => connect(server.ws, { project: "js-teams", attributes: { rating } })),
  );
  try {
    for (const client of clients) await client.enter({ policy: "duo" });
    const sessions = await Promise.all(clients.map((client) => client.nextSession()));
    const teams = sessions[0].teams;
    assert.deepEqual(Object.keys(teams).sort(), ["blue", "red"]);
    const rating = Object.fromEntries(clients.map((c, i) => [c.clientId, ratings[i]]));
    const means = Object.values(teams).map((ids) => (rating[ids[0]] + rating[ids[1]]) / 2);
    assert.ok(Math.abs(means[0] - means[1]) <= 50);
    for (const [i, session] of sessions.entries()) {
      assert.ok(teams[session.team].includes(clients[i].clientId));
      assert.deepEqual(session.members.map((m) => m.client_id).sort(), clients.map((c) => c.clientId).sort());
    }
  } finally {
    await closeAll(clients);
  }
});

test("session handle: send, on(message), member_left, backfill into the same team, leave", async () => {
  const clients = await Promise.all(
    [1, 2, 3, 4].map(() => connect(server.ws, { project: "js-teams", attributes: { rating: 1000 } })),
  );
  const newcomer = await connect(server.ws, { project: "js-teams", attributes: { rating: 1000 } });
  try {
    for (const client of clients) await client.enter({ policy: "duo" });
    const [a, b, , d] = await Promise.all(clients.map((client) => client.nextSession()));
    const heard = [];
    b.on("message", (message) => heard.push(message));
    a.send({ move: "e4" });
    await waitFor(() => heard.length === 1, { what: "the message" });
    assert.deepEqual(heard[0], { from: clients[0].clientId, data: { move: "e4" } });
    const lost = d.team;
    const left = [];
    a.on("member_left", (event) => left.push(event));
    const joined = [];
    a.on("member_joined", (event) => joined.push(event));
    await d.leave();
    await waitFor(() => left.length === 1, { what: "member_left" });
    assert.equal(left[0].client_id, clients[3].clientId);
    assert.equal(a.members.length, 3);
    assert.ok(!a.teams[lost].includes(clients[3].clientId));
    await clients[0].backfill(a.id, 1);
    await newcomer.enter({ policy: "duo" });
    const seated = await newcomer.nextSession();
    assert.equal(seated.id, a.id);
    assert.equal(seated.team, lost);
    await waitFor(() => joined.length === 1, { what: "member_joined" });
    assert.equal(joined[0].team, lost);
    assert.equal(a.teamOf(newcomer.clientId), lost);
  } finally {
    await closeAll([...clients, newcomer]);
  }
});

test("regions: players whose near regions differ wait; a third who shares one is matched there", async () => {
  const [eu, us, both] = await Promise.all([1, 2, 3].map(() => connect(server.ws, { project: "js-teams" })));
  try {
    await eu.enter({ policy: "near", latencies: { eu: 30, us: 150 } });
    await us.enter({ policy: "near", latencies: { eu: 140, us: 20 } });
    await assert.rejects(us.nextEvent("session.created", { timeoutMs: 300 }), { code: "client.timeout" });
    await both.enter({ policy: "near", latencies: { eu: 90, us: 60 } });
    const session = await both.nextSession();
    assert.equal(session.region, "us");
    assert.deepEqual(session.members.map((m) => m.client_id).sort(), [us.clientId, both.clientId].sort());
    await assert.rejects(eu.enter({ policy: "near" }), { code: "pool.already_entered" });
    const fresh = await connect(server.ws, { project: "js-teams" });
    await assert.rejects(fresh.enter({ policy: "near" }), { code: "pool.latencies_required" });
    await fresh.close();
  } finally {
    await closeAll([eu, us, both]);
  }
});

test("teams: a party of two and two solos form a 2v2 in which the party shares a team", async () => {
  const ratings = [1000, 2000, 1010, 2010];
  const [a, b, s1, s2] = await Promise.all(
    ratings.map((rating) => connect(server.ws, { project: "js-teams", attributes: { rating } })),
  );
  const trio = await Promise.all(
    [1, 2, 3].map(() => connect(server.ws, { project: "js-teams", attributes: { rating: 1000 } })),
  );
  try {
    const party = await a.partyCreate();
    await b.partyJoin(party.code);
    await s1.enter({ policy: "duo" });
    await a.enter({ policy: "duo", party_id: party.party_id });
    await s2.enter({ policy: "duo" });
    const sessions = await Promise.all([a, b, s1, s2].map((client) => client.nextSession()));
    assert.equal(new Set(sessions.map((session) => session.id)).size, 1);
    assert.equal(sessions[0].team, sessions[1].team);
    assert.deepEqual([...sessions[0].teams[sessions[0].team]].sort(), [a.clientId, b.clientId].sort());
    assert.notEqual(sessions[2].team, sessions[0].team);
    assert.equal(sessions[2].team, sessions[3].team);
    // A party larger than the largest team (two) cannot enter.
    const big = await trio[0].partyCreate();
    for (const other of trio.slice(1)) await other.partyJoin(big.code);
    await assert.rejects(trio[0].enter({ policy: "duo", party_id: big.party_id }), {
      code: "party.too_large",
    });
  } finally {
    await closeAll([a, b, s1, s2, ...trio]);
  }
});
