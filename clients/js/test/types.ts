// Compiled by `tsc -p tsconfig.types.json` (npm test, nox -s js), never run: the public API
// is typed from the protocol's Structs, so misuse fails to compile.
import { connect, MatchmakerError, type MatchmakerEvent } from "../src/index.js";

export async function typed(): Promise<void> {
  const client = await connect("ws://127.0.0.1:8080/ws", { project: "demo", attributes: { level: 3 } });
  const entered = await client.enter({ pool: "duel", create: true, mode: "auto", groupSize: 2 });
  const expires: number = entered.expires_at;
  const created = await client.nextEvent("session.created");
  const members: string[] = created.data.members.map((member) => member.client_id);
  const message: MatchmakerEvent<"session.message"> = await client.nextEvent("session.message");
  const from: string = message.data.from;
  const page = await client.list("lobby", { limit: 10 });
  const cursor: string | null = page.cursor;
  const formed = await client.form("draft", [["e1", "e2"]]);
  const ok: boolean = formed.results[0].ok;
  client.on("connection.away", (event) => event.data.grace_ms satisfies number);
  client.on("pool.delta", (event) => event.data.removed satisfies string[]);
  const party = await client.partyCreate();
  const code: string = party.code;
  const joined = await client.partyJoin(code);
  await client.enter({ policy: "squad", party_id: joined.party_id });
  client.on("party.member_left", (event) => event.data.leader satisfies string);
  client.on("party.entered", (event) => event.data.entry_id satisfies string);
  await client.partyLeave(party.party_id);
  // @ts-expect-error: party.join needs its code
  await client.request("party.join", {});
  // @ts-expect-error: `mode` is one of the five pool modes
  await client.enter({ pool: "duel", create: true, mode: "fastest", groupSize: 2 });
  // @ts-expect-error: pool.leave needs its pool
  await client.request("pool.leave", {});
  // @ts-expect-error: no such request
  await client.request("pool.teleport", {});
  // @ts-expect-error: no such field on session.created
  void created.data.session;
  await client.enter({ policy: "duo", latencies: { eu: 30, us: 120 } });
  const teams: { [name: string]: string[] } | null | undefined = created.data.teams;
  const region: string | null | undefined = created.data.region;
  client.on("session.member_status", (event) => {
    const status: "away" | "back" = event.data.status;
    // @ts-expect-error: a member's status is "away" or "back"
    const other: "gone" = event.data.status;
    void [status, other];
  });
  type Move = { move: string };
  const session = await client.nextSession<Move>();
  session.send({ move: "e4" });
  // @ts-expect-error: the session's messages are Moves
  session.send({ jump: 1 });
  session.on("message", (event) => event.data.move satisfies string);
  const team: string | null = session.team;
  const ids: string[] = session.members.map((member) => member.client_id);
  await session.leave();
  const error = new MatchmakerError("client.timeout", "late");
  void [expires, members, from, cursor, ok, error.code satisfies string, teams, region, team, ids];
}
