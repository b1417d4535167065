/**
 * A handle on one session the client is in, generic over the game's message type `M`:
 * `session.send(message)`, `session.on("message", ({from, data}) => ...)`,
 * `session.leave()`, and the live `members`, `teams`, `team` (this client's) and `region`.
 * It follows the session's events (`session.member_joined`, `session.member_left`, a
 * backfilled member's `team`) from the client it was made by; the client's own calls
 * (`send(sessionId, ...)`, `on("session.message", ...)`) work beside it.
 */
export class Session {
    /** The session's id. */
    id;
    /** The pool that formed it (`null`: a room). */
    pool;
    /** Where it plays, in a pool with `regions` (`null` otherwise). */
    region;
    #host;
    #members = new Map();
    #teams;
    #listeners = new Map();
    #unsubscribe;
    /** Use `client.session(created)` or `client.nextSession()`. */
    constructor(host, created) {
        this.#host = host;
        this.id = created.session_id;
        this.pool = created.pool ?? null;
        this.region = created.region ?? null;
        for (const member of created.members)
            this.#members.set(member.client_id, member);
        this.#teams = created.teams ? new Map(Object.entries(created.teams).map(([n, ids]) => [n, [...ids]])) : null;
        const mine = (data) => data.session_id === this.id;
        this.#unsubscribe = [
            host.on("session.message", ({ data }) => {
                if (mine(data))
                    this.#emit("message", { from: data.from, data: data.data });
            }),
            host.on("session.member_joined", ({ data }) => {
                if (!mine(data))
                    return;
                const { session_id: _, reason: __, team, ...member } = data;
                this.#members.set(member.client_id, member);
                if (team && this.#teams)
                    this.#teams.get(team)?.push(member.client_id);
                this.#emit("member_joined", { ...member, team });
            }),
            host.on("session.member_left", ({ data }) => {
                if (!mine(data))
                    return;
                this.#members.delete(data.client_id);
                for (const ids of this.#teams?.values() ?? []) {
                    const at = ids.indexOf(data.client_id);
                    if (at >= 0)
                        ids.splice(at, 1);
                }
                this.#emit("member_left", { client_id: data.client_id, reason: data.reason ?? "left" });
            }),
            host.on("session.member_status", ({ data }) => {
                if (mine(data))
                    this.#emit("member_status", { client_id: data.client_id, status: data.status });
            }),
        ];
    }
    /** The members now, this client included, in the order they came. */
    get members() {
        return [...this.#members.values()];
    }
    /** Team name → its members' client ids (`null`: the pool has no teams). */
    get teams() {
        return this.#teams && Object.fromEntries([...this.#teams].map(([name, ids]) => [name, [...ids]]));
    }
    /** This client's team (`null`: the pool has no teams). */
    get team() {
        return this.teamOf(this.#host.clientId);
    }
    /** The team of a member (`null`: no teams, or not a member). */
    teamOf(clientId) {
        for (const [name, ids] of this.#teams ?? [])
            if (ids.includes(clientId))
                return name;
        return null;
    }
    /** `session.send` to every other member (or to `to`); fire and forget, as `client.send`. */
    send(data, options = {}) {
        this.#host.send(this.id, data, options);
    }
    /** Call `listener` with each event `type` of this session; returns the unsubscribe. */
    on(type, listener) {
        const set = this.#listeners.get(type) ?? new Set();
        set.add(listener);
        this.#listeners.set(type, set);
        return () => set.delete(listener);
    }
    /** `session.leave`; the handle stops following the session. */
    async leave() {
        this.close();
        await this.#host.leaveSession(this.id);
    }
    /** Stop following the session's events (without leaving it). */
    close() {
        for (const off of this.#unsubscribe.splice(0))
            off();
        this.#listeners.clear();
    }
    #emit(type, event) {
        for (const listener of this.#listeners.get(type) ?? [])
            listener(event);
    }
}
