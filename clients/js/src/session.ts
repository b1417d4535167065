/**
 * A handle on one session the client is in, generic over the game's message type `M`:
 * `session.send(message)`, `session.on("message", ({from, data}) => ...)`,
 * `session.leave()`, and the live `members`, `teams`, `team` (this client's) and `region`.
 * It follows the session's events (`session.member_joined`, `session.member_left`, a
 * backfilled member's `team`) from the client it was made by; the client's own calls
 * (`send(sessionId, ...)`, `on("session.message", ...)`) work beside it.
 */

import type { MatchmakerEvent } from "./events.js";
import type { MemberInfo, MemberStatus, SessionCreatedData } from "./protocol.js";

/** What a session handle uses of its client (the {@link Client} has each). */
export interface SessionHost {
  readonly clientId: string;
  on<K extends "session.message" | "session.member_joined" | "session.member_left" | "session.member_status">(
    type: K,
    listener: (event: MatchmakerEvent<K>) => void,
  ): () => void;
  send(sessionId: string, data: unknown, options?: { to?: string[] }): void;
  leaveSession(sessionId: string): Promise<unknown>;
}

/** What a session handle's listeners are called with, by event name. */
export interface SessionEvents<M> {
  /** A member sent `data` to this client. */
  message: { from: string; data: M };
  /** A member joined (a room, or a backfill: `team` is the team it fills). */
  member_joined: MemberInfo & { team?: string | null };
  /** A member left (`reason`: `left` or `disconnected`). */
  member_left: { client_id: string; reason: string };
  /** A member's connection dropped (`away`, it may resume) or came back (`back`). */
  member_status: { client_id: string; status: MemberStatus["status"] };
}

type Listener<M> = (event: SessionEvents<M>[keyof SessionEvents<M>]) => void;

export class Session<M = unknown> {
  /** The session's id. */
  readonly id: string;
  /** The pool that formed it (`null`: a room). */
  readonly pool: string | null;
  /** Where it plays, in a pool with `regions` (`null` otherwise). */
  readonly region: string | null;
  readonly #host: SessionHost;
  readonly #members = new Map<string, MemberInfo>();
  readonly #teams: Map<string, string[]> | null;
  readonly #listeners = new Map<keyof SessionEvents<M>, Set<Listener<M>>>();
  readonly #unsubscribe: (() => void)[];

  /** Use `client.session(created)` or `client.nextSession()`. */
  constructor(host: SessionHost, created: SessionCreatedData) {
    this.#host = host;
    this.id = created.session_id;
    this.pool = created.pool ?? null;
    this.region = created.region ?? null;
    for (const member of created.members) this.#members.set(member.client_id, member);
    this.#teams = created.teams ? new Map(Object.entries(created.teams).map(([n, ids]) => [n, [...ids]])) : null;
    const mine = <T extends { session_id: string }>(data: T) => data.session_id === this.id;
    this.#unsubscribe = [
      host.on("session.message", ({ data }) => {
        if (mine(data)) this.#emit("message", { from: data.from, data: data.data as M });
      }),
      host.on("session.member_joined", ({ data }) => {
        if (!mine(data)) return;
        const { session_id: _, reason: __, team, ...member } = data;
        this.#members.set(member.client_id, member);
        if (team && this.#teams) this.#teams.get(team)?.push(member.client_id);
        this.#emit("member_joined", { ...member, team });
      }),
      host.on("session.member_left", ({ data }) => {
        if (!mine(data)) return;
        this.#members.delete(data.client_id);
        for (const ids of this.#teams?.values() ?? []) {
          const at = ids.indexOf(data.client_id);
          if (at >= 0) ids.splice(at, 1);
        }
        this.#emit("member_left", { client_id: data.client_id, reason: data.reason ?? "left" });
      }),
      host.on("session.member_status", ({ data }) => {
        if (mine(data)) this.#emit("member_status", { client_id: data.client_id, status: data.status });
      }),
    ];
  }

  /** The members now, this client included, in the order they came. */
  get members(): MemberInfo[] {
    return [...this.#members.values()];
  }

  /** Team name → its members' client ids (`null`: the pool has no teams). */
  get teams(): { [name: string]: string[] } | null {
    return this.#teams && Object.fromEntries([...this.#teams].map(([name, ids]) => [name, [...ids]]));
  }

  /** This client's team (`null`: the pool has no teams). */
  get team(): string | null {
    return this.teamOf(this.#host.clientId);
  }

  /** The team of a member (`null`: no teams, or not a member). */
  teamOf(clientId: string): string | null {
    for (const [name, ids] of this.#teams ?? []) if (ids.includes(clientId)) return name;
    return null;
  }

  /** `session.send` to every other member (or to `to`); fire and forget, as `client.send`. */
  send(data: M, options: { to?: string[] } = {}): void {
    this.#host.send(this.id, data, options);
  }

  /** Call `listener` with each event `type` of this session; returns the unsubscribe. */
  on<K extends keyof SessionEvents<M>>(type: K, listener: (event: SessionEvents<M>[K]) => void): () => void {
    const set = this.#listeners.get(type) ?? new Set<Listener<M>>();
    set.add(listener as Listener<M>);
    this.#listeners.set(type, set);
    return () => set.delete(listener as Listener<M>);
  }

  /** `session.leave`; the handle stops following the session. */
  async leave(): Promise<void> {
    this.close();
    await this.#host.leaveSession(this.id);
  }

  /** Stop following the session's events (without leaving it). */
  close(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#listeners.clear();
  }

  #emit<K extends keyof SessionEvents<M>>(type: K, event: SessionEvents<M>[K]): void {
    for (const listener of this.#listeners.get(type) ?? []) listener(event);
  }
}
