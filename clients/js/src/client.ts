/**
 * One client of the data plane (docs/protocol.md), over one WebSocket at a time.
 *
 * Requests are correlated with their replies by `id` and time out; an error reply
 * rejects with a {@link MatchmakerError} carrying the server's code. Events are read
 * with `nextEvent`, `for await (const event of client.events())`, or callbacks (`on`).
 * An unclean drop is resumed within the server's grace: backoff with jitter, `hello`
 * with the resume token and the last `seq` seen, replayed events deduplicated by
 * `seq`, and `connection.away` / `connection.back` events around it; `resume.expired`
 * (or the grace running out) closes the client with `connection.closed`.
 *
 * The other way is exactly once too: `send` numbers each message (`seq`) and holds it until
 * the server acknowledges it (`ack`, on frames it sends anyway); a resume sends again, in
 * order, what was not acknowledged, and the server drops what it already took. At most
 * `maxUnackedBytes` are held: past it `send` returns `false` (`client.backpressure`).
 */

import { MatchmakerError, fromWire } from "./errors.js";
import { EventBuffer, type EventType, type MatchmakerEvent } from "./events.js";
import type { ErrorBody, HelloData, HelloReply, Requests, SessionCreatedData } from "./protocol.js";
import { Session } from "./session.js";
import { openSocket, type WebSocketClass, type WebSocketLike } from "./socket.js";

export type Attributes = { [key: string]: string | number | boolean };

/** How an unclean drop is resumed (delays double per attempt, each jittered to 50-100 %). */
export interface ReconnectOptions {
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * A credential, or a function called for it at every `hello` (the first and each resume):
 * a game with short-lived tokens returns a fresh one each time.
 */
export type Credential = string | (() => string | Promise<string>);

export interface ConnectOptions {
  project?: string;
  /** A string, or a function called at every (re)connect for a fresh one. */
  credential?: Credential;
  attributes?: Attributes;
  /** How long a request waits for its reply (default 10 000 ms): then `client.timeout`. */
  timeoutMs?: number;
  /** How long opening the WebSocket may take (default 10 000 ms): then `client.connect`. */
  openTimeoutMs?: number;
  /** Resume unclean drops (default `true`); `false` closes the client on any drop. */
  reconnect?: boolean | ReconnectOptions;
  /** The WebSocket class to use (default: the platform's, else the `ws` package). */
  WebSocket?: WebSocketClass;
  /** Called with every frame sent and received, as text (for logs and playgrounds). */
  onFrame?: (direction: "in" | "out", text: string) => void;
  /** Most events kept for `nextEvent` / `events()` (default 1024; the oldest go first). */
  maxBufferedEvents?: number;
  /**
   * Most bytes of sent messages held until the server acknowledges them (encoded frames;
   * default 1 MiB): past it `send` returns `false` and reports `client.backpressure`.
   */
  maxUnackedBytes?: number;
}

/** `maxUnackedBytes` when not given: 1 MiB (docs/protocol.md, "Exactly once"). */
export const DEFAULT_MAX_UNACKED_BYTES = 1_048_576;

export type RequestType = keyof Requests;
export type Reply<K extends RequestType> = Requests[K]["reply"];

/** `open` while connected, `away` while resuming, `closed` for good. */
export type ClientState = "connecting" | "open" | "away" | "closing" | "closed";
/** A `session.send` held until acknowledged: its number, its frame and the frame's bytes. */
interface Held {
  seq: number;
  text: string;
  bytes: number;
}
interface Pending {
  resolve: (data: never) => void;
  reject: (error: MatchmakerError) => void;
  timer: ReturnType<typeof setTimeout>;
}

// Close codes after which there is nothing to resume (docs/protocol.md, "Close codes");
// every other code resumes: 3001 (a restart), 3002, 3008, 3029 and a lost socket.
const FINAL_CLOSE_CODES = new Set([1000, 1001, 1009, 3009, 4000, 4001, 4003, 4004]);
const BYE_WAIT_MS = 2000;

export class Client {
  /** This client's id (kept across resumes). */
  clientId = "";
  /** The last `hello` reply: Project, policies, limits, heartbeat. */
  helloReply!: HelloReply;
  /** The `seq` of the last event received: where a resume starts after. */
  lastSeq = 0;
  /** The close code of the last connection, once closed. */
  closeCode: number | null = null;

  #state: ClientState = "connecting";
  #socket: WebSocketLike | null = null;
  #nextId = 1;
  #pending = new Map<string, Pending>();
  readonly #events: EventBuffer;
  #heartbeat: ReturnType<typeof setInterval> | null = null;
  #lastHeard = 0;
  #pinged = false;
  #closeError: MatchmakerError | null = null;
  // Exactly once: the last seq given to a send, the sends not yet acknowledged (oldest
  // first, from #heldFrom on), their bytes, and the server's last ack.
  #sendSeq = 0;
  #held: Held[] = [];
  #heldFrom = 0;
  #heldBytes = 0;
  #ack = 0;
  #askedAck = false; // a ping for the ack went out since the ack last moved
  #lastAckPing = 0;
  #resentFrom = 0; // a gap refusal's expected seq already answered by sending again
  #retry: ReturnType<typeof setTimeout> | null = null; // sends refused as rate-limited, again
  #closed: Promise<void>;
  #markClosed!: () => void;
  readonly #url: string;
  readonly #Socket: WebSocketClass;
  readonly #options: ConnectOptions;

  /** Use {@link connect}: this only holds the settings. */
  constructor(url: string, Socket: WebSocketClass, options: ConnectOptions) {
    this.#url = url;
    this.#Socket = Socket;
    this.#options = options;
    this.#events = new EventBuffer(options.maxBufferedEvents ?? 1024);
    this.#closed = new Promise((resolve) => (this.#markClosed = resolve));
  }

  /** `open` while connected, `away` while resuming, `closed` for good. */
  get state(): ClientState {
    return this.#state;
  }

  /** Open the socket and send `hello`; rejects with the server's code if it is refused. */
  async start(): Promise<HelloReply> {
    const socket = await openSocket(this.#Socket, this.#url, this.#options.openTimeoutMs ?? 10_000);
    this.#attach(socket);
    try {
      const reply = await this.#exchange("hello", await this.#helloData(null), this.#timeoutMs());
      this.#welcome(reply);
      return reply;
    } catch (error) {
      this.#finish(null, error as MatchmakerError);
      throw error;
    }
  }

  /** Send a request and resolve with its reply's data (while away: once resumed). */
  async request<K extends RequestType>(
    type: K,
    data?: Requests[K]["data"],
    options: { timeoutMs?: number } = {},
  ): Promise<Reply<K>> {
    const deadline = Date.now() + (options.timeoutMs ?? this.#timeoutMs());
    await this.#whenOpen(deadline);
    return this.#exchange(type, data, deadline - Date.now());
  }

  /**
   * `pool.enter`: a policy (`{policy}`), an ad-hoc pool (`{pool, create, mode, groupSize}`)
   * or the Project's default policy (`{}`); with `party_id` a party's leader enters every
   * member as one entry.
   */
  enter(data: Requests["pool.enter"]["data"] = {}): Promise<Reply<"pool.enter">> {
    return this.request("pool.enter", data);
  }

  /** `pool.leave`: withdraw this client's entry from `pool`. */
  leave(pool: string): Promise<Reply<"pool.leave">> {
    return this.request("pool.leave", { pool });
  }

  /** `session.join` an ad-hoc room (`create: true` opens it). */
  join(
    session: string,
    options: { create?: boolean; public?: { [key: string]: unknown } } = {},
  ): Promise<Reply<"session.join">> {
    return this.request("session.join", { session, ...options });
  }

  /** `session.leave`. */
  leaveSession(sessionId: string): Promise<Reply<"session.leave">> {
    return this.request("session.leave", { session_id: sessionId });
  }

  /** `session.backfill`: fill `seats` open places of a session a pool formed (`0` cancels). */
  backfill(sessionId: string, seats: number): Promise<Reply<"session.backfill">> {
    return this.request("session.backfill", { session_id: sessionId, seats });
  }

  /**
   * `session.send`, fire and forget: never throws. The message is numbered and held until
   * the server acknowledges it, so across drops and resumes it arrives exactly once, in
   * order (while away it goes out once the connection is back). `false`: not sent, with an
   * `error` event saying why: `client.backpressure` (`maxUnackedBytes` are held already:
   * `details.limit`; try again once acknowledgements free some) or `client.closed`. A later
   * failure arrives as an `error` event too: the server's refusal, or `client.closed`
   * (`details.seq`) for a message held when the client closed for good.
   */
  send(sessionId: string, data: unknown, options: { to?: string[] } = {}): boolean {
    if (this.#state === "closed" || this.#state === "closing") {
      this.#reportError(this.#closedError());
      return false;
    }
    const message: Requests["session.send"]["data"] = { session_id: sessionId, data, ...options };
    const seq = this.#sendSeq + 1;
    const text = JSON.stringify({ type: "session.send", seq, data: message });
    const bytes = utf8Length(text);
    const limit = this.#options.maxUnackedBytes ?? DEFAULT_MAX_UNACKED_BYTES;
    if (this.#heldBytes + bytes > limit) {
      const why = `${this.#heldBytes} bytes are not acknowledged yet; at most ${limit} are held`;
      this.#reportError(new MatchmakerError("client.backpressure", why, { limit }));
      return false;
    }
    this.#sendSeq = seq;
    this.#held.push({ seq, text, bytes });
    this.#heldBytes += bytes;
    if (this.#state === "open") {
      this.#writeText(text);
      if (this.#heldBytes > limit / 2 && !this.#askedAck) this.#askAck();
    }
    return true;
  }

  /** `rtc.signal`: relay a WebRTC signal to one other member of a session. */
  signal(sessionId: string, to: string, signal: unknown): Promise<Reply<"rtc.signal">> {
    return this.request("rtc.signal", { session_id: sessionId, to, signal });
  }

  /** claim mode, `pool.list`: a page of the listed entries of your bucket. */
  list(pool: string, options: { cursor?: string; limit?: number } = {}): Promise<Reply<"pool.list">> {
    return this.request("pool.list", { pool, ...options });
  }

  /** claim mode, `pool.watch`: `pool.listed` / `pool.unlisted` events (`false`: stop). */
  watch(pool: string, watch = true): Promise<Reply<"pool.watch">> {
    return this.request("pool.watch", { pool, watch });
  }

  /** claim mode, `claim.make`: claim `groupSize - 1` listed clients into a session. */
  claim(pool: string, targets: string[]): Promise<Reply<"claim.make">> {
    return this.request("claim.make", { pool, targets });
  }

  /** mutual mode, `pick.add`. */
  pick(pool: string, target: string): Promise<Reply<"pick.add">> {
    return this.request("pick.add", { pool, target });
  }

  /** mutual mode, `pick.remove`. */
  unpick(pool: string, target: string): Promise<Reply<"pick.remove">> {
    return this.request("pick.remove", { pool, target });
  }

  /** propose mode, `proposal.create`: propose a group with `members` (the others). */
  propose(
    pool: string,
    members: string[],
    options: { ttl_ms?: number } = {},
  ): Promise<Reply<"proposal.create">> {
    return this.request("proposal.create", { pool, members, ...options });
  }

  /** propose mode, `proposal.respond`. */
  respond(proposalId: string, accept: boolean): Promise<Reply<"proposal.respond">> {
    return this.request("proposal.respond", { proposal_id: proposalId, accept });
  }

  /** propose mode, `proposal.cancel`. */
  cancelProposal(proposalId: string): Promise<Reply<"proposal.cancel">> {
    return this.request("proposal.cancel", { proposal_id: proposalId });
  }

  /** delegated mode, `delegate.attach`: a `pool.snapshot` event follows, then `pool.delta`s. */
  attach(pool: string): Promise<Reply<"delegate.attach">> {
    return this.request("delegate.attach", { pool });
  }

  /** delegated mode, `delegate.form`: one result per group, in order. */
  form(pool: string, groups: string[][]): Promise<Reply<"delegate.form">> {
    return this.request("delegate.form", { pool, groups });
  }

  /** `party.create`: a party led by this client; read its `code` out to friends. */
  partyCreate(): Promise<Reply<"party.create">> {
    return this.request("party.create", {});
  }

  /** `party.join` by the code the leader read out (any case; dashes and spaces ignored). */
  partyJoin(code: string): Promise<Reply<"party.join">> {
    return this.request("party.join", { code });
  }

  /** `party.leave`: the others get `party.member_left`; a waiting party entry is withdrawn. */
  partyLeave(partyId: string): Promise<Reply<"party.leave">> {
    return this.request("party.leave", { party_id: partyId });
  }

  /** A `ping` round trip (resolves on the `pong`). */
  async ping(): Promise<void> {
    await this.request("ping");
  }

  /** Call `listener` with each event of `type` (`"*"`: every event); returns the unsubscribe. */
  on<K extends EventType>(type: K | "*", listener: (event: MatchmakerEvent<K>) => void): () => void {
    return this.#events.on(type, listener);
  }

  /** The next buffered or arriving event (of `type` if given, dropping others before it). */
  async nextEvent<K extends EventType>(
    type?: K,
    options: { timeoutMs?: number } = {},
  ): Promise<MatchmakerEvent<K>> {
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = this.#events.take();
      if (event !== undefined) {
        if (type === undefined || event.type === type) return event as MatchmakerEvent<K>;
        continue;
      }
      if (this.#state === "closed") throw this.#closedError();
      if (!(await this.#events.changed(deadline))) {
        throw new MatchmakerError("client.timeout", `no ${type ?? "event"} within ${timeoutMs} ms`, {
          timeout_ms: timeoutMs,
        });
      }
    }
  }

  /**
   * A handle on the session a `session.created` announced, typed by the game's message
   * type `M`: `send`, `on("message")`, `leave()`, `members`, `teams`, `team`, `region`.
   */
  session<M = unknown>(created: SessionCreatedData): Session<M> {
    return new Session<M>(this, created);
  }

  /** The next `session.created` (as `nextEvent`), as a {@link Session} handle. */
  async nextSession<M = unknown>(options: { timeoutMs?: number } = {}): Promise<Session<M>> {
    const created = await this.nextEvent("session.created", options);
    return this.session<M>(created.data);
  }

  /** Every event until the client is closed (the last is `connection.closed`). */
  async *events(): AsyncGenerator<MatchmakerEvent, void, undefined> {
    for (;;) {
      const event = this.#events.take();
      if (event !== undefined) yield event;
      else if (this.#state === "closed") return;
      else await this.#events.changed(Infinity);
    }
  }

  /** Resolves once the client is closed for good. */
  waitClosed(): Promise<void> {
    return this.#closed;
  }

  /**
   * Leave cleanly: send `bye` (the server closes with 4000 and this client leaves its
   * pools and sessions at once, with nothing to resume), then close the socket.
   */
  async close(): Promise<void> {
    if (this.#state === "closed") return;
    const socket = this.#socket;
    if (this.#state !== "open" || socket === null) {
      this.#finish(null, null);
      return;
    }
    this.#state = "closing";
    this.#write({ type: "bye" });
    const timer = setTimeout(() => this.#finish(null, null), BYE_WAIT_MS);
    await this.#closed;
    clearTimeout(timer);
  }

  #timeoutMs(): number {
    return this.#options.timeoutMs ?? 10_000;
  }

  async #helloData(resume: { token: string; last_seq: number } | null): Promise<HelloData> {
    const { project, attributes } = this.#options;
    const credential = await this.#credential();
    return {
      v: 1,
      ...(project !== undefined && { project }),
      ...(credential !== undefined && { credential }),
      ...(attributes !== undefined && { attributes }),
      ...(resume !== null && { resume }),
    };
  }

  /** The credential to present now: the option, or what its function returns. */
  async #credential(): Promise<string | undefined> {
    const source = this.#options.credential;
    if (typeof source !== "function") return source;
    let value: unknown;
    try {
      value = await source();
    } catch (error) {
      throw new MatchmakerError("client.credential", `the credential function failed: ${String(error)}`);
    }
    if (typeof value !== "string") {
      throw new MatchmakerError("client.credential", `the credential function returned ${typeof value}, not a string`);
    }
    return value;
  }

  /** A fire-and-forget failure, as the `error` event the server's refusals also are. */
  #reportError(error: MatchmakerError): void {
    const body = { code: error.code, message: error.message, details: error.details };
    this.#events.deliver({ type: "error", data: body, seq: null });
  }

  #welcome(reply: HelloReply): void {
    this.helloReply = reply;
    this.clientId = reply.client_id;
    this.#state = "open";
    this.#lastHeard = Date.now();
    this.#pinged = false;
    const every = Math.max(10, Math.floor(reply.heartbeat.interval_ms / 4));
    this.#heartbeat = setInterval(() => this.#beat(), every);
    // What the server had not taken goes again, in order, before any new send (the
    // resumed hello's reply said its ack, so the held sends are those after it).
    for (let i = this.#heldFrom; i < this.#held.length; i++) this.#writeText(this.#held[i]!.text);
    this.#askedAck = false;
    this.#lastAckPing = Date.now();
    this.#events.notify();
  }

  /**
   * The client's side of heartbeats: after `interval_ms` without a frame from the server it
   * pings (any frame proves liveness), and after `timeout_ms` it treats the connection as
   * dropped (a half-open TCP connection never reports its end) and resumes.
   */
  #beat(): void {
    const silent = Date.now() - this.#lastHeard;
    const { interval_ms, timeout_ms } = this.helloReply.heartbeat;
    if (silent >= timeout_ms) {
      const socket = this.#socket;
      this.#drop(3002, "no frame from the server within the heartbeat timeout");
      socket?.close();
    } else if (silent >= interval_ms && !this.#pinged) {
      this.#pinged = true;
      this.#write({ type: "ping" });
    } else if (this.#heldFrom < this.#held.length && Date.now() - this.#lastAckPing >= interval_ms) {
      this.#askAck(); // sends held with nothing coming back: the pong says the ack
    }
  }

  /** A `ping` (no `id`): its `pong` carries the ack if it moved since last said. */
  #askAck(): void {
    this.#askedAck = true;
    this.#lastAckPing = Date.now();
    this.#write({ type: "ping" });
  }

  /** The server took every send up to `ack`: they are held no longer. */
  #acknowledge(ack: number): void {
    if (ack <= this.#ack) return;
    this.#ack = ack;
    this.#askedAck = false;
    this.#resentFrom = 0;
    const held = this.#held;
    let from = this.#heldFrom;
    while (from < held.length && held[from]!.seq <= ack) this.#heldBytes -= held[from++]!.bytes;
    if (from === held.length) {
      this.#held = [];
      this.#heldFrom = 0;
    } else if (from > 1024 && from * 2 > held.length) {
      this.#held = held.slice(from); // drop the acknowledged prefix now and then, not per ack
      this.#heldFrom = 0;
    } else {
      this.#heldFrom = from;
    }
  }

  /**
   * The server refused a send for a gap (a send before it was not taken, e.g. rate-limited):
   * send again, in order, the held sends from the one it expects (once per gap).
   */
  #resendFrom(expected: number): void {
    if (expected === this.#resentFrom || this.#state !== "open") return;
    this.#resentFrom = expected;
    for (let i = this.#heldFrom; i < this.#held.length; i++) {
      const held = this.#held[i]!;
      if (held.seq >= expected) this.#writeText(held.text);
    }
  }

  /**
   * A numbered send was refused as rate-limited (not taken): once the server has a token
   * again, send again every held send it has not acknowledged, in order (one timer for
   * all the refusals of a burst).
   */
  #retryLater(delayMs: number): void {
    if (this.#retry !== null) return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.#resentFrom = 0;
      this.#resendFrom(this.#ack + 1);
    }, delayMs);
  }

  /** The client closed for good: its held sends will never be acknowledged. */
  #forgetHeld(report: MatchmakerError | null): void {
    if (report !== null) {
      for (let i = this.#heldFrom; i < this.#held.length; i++) {
        const details = { ...report.details, seq: this.#held[i]!.seq };
        this.#reportError(new MatchmakerError(report.code, report.message, details));
      }
    }
    this.#held = [];
    this.#heldFrom = 0;
    this.#heldBytes = 0;
  }

  #attach(socket: WebSocketLike): void {
    this.#socket = socket;
    socket.onmessage = (event) => {
      if (this.#socket === socket) this.#receive(String(event.data));
    };
    socket.onclose = (event) => {
      if (this.#socket === socket) this.#drop(event.code, event.reason);
    };
    socket.onerror = () => undefined; // the close event that follows carries the code
  }

  #write(message: { id?: string; type: string; data?: unknown }): void {
    this.#writeText(JSON.stringify(message));
  }

  #writeText(text: string): void {
    this.#options.onFrame?.("out", text);
    try {
      this.#socket?.send(text);
    } catch {
      // the socket is closing: its close event reports the drop
    }
  }

  #exchange<K extends RequestType>(type: K, data: unknown, timeoutMs: number): Promise<Reply<K>> {
    const id = String(this.#nextId++);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        const why = `no reply to ${type} within ${timeoutMs} ms`;
        reject(new MatchmakerError("client.timeout", why, { timeout_ms: timeoutMs }));
      }, Math.max(0, timeoutMs));
      this.#pending.set(id, { resolve: resolve as (data: never) => void, reject, timer });
      this.#write(data === undefined ? { id, type } : { id, type, data });
    });
  }

  #receive(text: string): void {
    this.#lastHeard = Date.now();
    this.#pinged = false;
    this.#options.onFrame?.("in", text);
    let frame: {
      type?: unknown;
      id?: unknown;
      ok?: unknown;
      data?: unknown;
      error?: unknown;
      seq?: unknown;
      ack?: unknown;
    };
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof frame.ack === "number") this.#acknowledge(frame.ack);
    if (frame.type === "reply" || frame.type === "pong") {
      const pending = typeof frame.id === "string" ? this.#pending.get(frame.id) : undefined;
      if (pending !== undefined) {
        this.#pending.delete(frame.id as string);
        clearTimeout(pending.timer);
        if (frame.type === "pong" || frame.ok === true) pending.resolve((frame.data ?? null) as never);
        else pending.reject(fromWire(frame.error));
      } else if (frame.type === "reply" && frame.ok === false && frame.id == null) {
        const error = frame.error as ErrorBody;
        const details = (error?.details ?? {}) as { [key: string]: unknown };
        if (details.field === "seq" && typeof details.expected === "number") {
          this.#resendFrom(details.expected); // a gap: not the application's to see
          return;
        }
        if (error?.code === "rate.limited" && typeof details.seq === "number") {
          this.#retryLater(typeof details.retry_after_ms === "number" ? details.retry_after_ms : 10);
        }
        this.#events.deliver({ type: "error", data: error, seq: null });
      }
    } else if (frame.type === "ping") {
      this.#write({ type: "pong" });
    } else if (typeof frame.type === "string") {
      const seq = typeof frame.seq === "number" ? frame.seq : null;
      if (seq !== null) {
        if (seq <= this.lastSeq) return; // already delivered before a resume
        this.lastSeq = seq;
      }
      this.#events.deliver({ type: frame.type, data: frame.data, seq } as MatchmakerEvent);
    }
  }

  async #whenOpen(deadline: number): Promise<void> {
    for (;;) {
      this.#ensureOpen();
      if (this.#state === "open") return;
      if (!(await this.#events.changed(deadline))) {
        throw new MatchmakerError("client.timeout", "the connection did not come back in time", {
          timeout_ms: deadline - Date.now(),
        });
      }
    }
  }

  #ensureOpen(): void {
    if (this.#state === "closed" || this.#state === "closing") throw this.#closedError();
  }

  #closedError(): MatchmakerError {
    const cause = this.#closeError;
    return new MatchmakerError(
      "client.closed",
      cause ? `the client is closed (${cause.code}: ${cause.message})` : "the client is closed",
      { close_code: this.closeCode, ...(cause && { reason: cause.code }) },
    );
  }

  /** The current socket ended (or was given up on): resume it or close for good. */
  #drop(code: number, reason: string): void {
    this.#socket = null;
    this.closeCode = code;
    this.#stopTimers();
    const why = `the connection dropped (${code}) before the reply`;
    this.#failPending(new MatchmakerError("client.interrupted", why, { close_code: code }));
    if (this.#state === "away") return; // a resume attempt failed: the loop tries again
    const reconnect = this.#options.reconnect ?? true;
    if (this.#state !== "open" || reconnect === false || FINAL_CLOSE_CODES.has(code)) {
      this.#finish(code, this.#state === "closing" ? null : closeReason(code));
      return;
    }
    const grace = this.helloReply.limits.resume_grace_ms;
    this.#state = "away";
    this.#events.notify();
    this.#events.deliver({ type: "connection.away", data: { code, reason, grace_ms: grace }, seq: null });
    void this.#resume(Date.now() + grace, reconnect === true ? {} : reconnect);
  }

  async #resume(until: number, options: ReconnectOptions): Promise<void> {
    const first = options.initialDelayMs ?? 100;
    const most = options.maxDelayMs ?? 2000;
    for (let attempt = 1; this.#state === "away"; attempt++) {
      const delay = Math.min(most, first * 2 ** (attempt - 1));
      const wait = delay / 2 + (Math.random() * delay) / 2;
      if (Date.now() + wait >= until) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (this.#state !== "away") return;
      let socket: WebSocketLike;
      let hello: HelloData;
      try {
        // A fresh credential first: a token service unreachable in the same blip is retried.
        hello = await this.#helloData({ token: this.helloReply.resume_token, last_seq: this.lastSeq });
        socket = await openSocket(this.#Socket, this.#url, Math.max(1, until - Date.now()));
      } catch {
        continue;
      }
      if (this.#state !== "away") {
        socket.close();
        return;
      }
      this.#attach(socket);
      try {
        const reply = await this.#exchange("hello", hello, Math.max(1, until - Date.now()));
        this.#welcome(reply);
        const back = { client_id: reply.client_id, attempts: attempt };
        this.#events.deliver({ type: "connection.back", data: back, seq: null });
        return;
      } catch (error) {
        const failure = error as MatchmakerError;
        if (failure.code === "client.interrupted" || failure.code === "client.timeout") {
          this.#socket = null;
          socket.close();
          continue;
        }
        this.#finish(this.closeCode, failure); // resume.expired, or the credential was revoked
        socket.close();
        return;
      }
    }
    if (this.#state === "away") {
      const why = "could not resume within the server's grace";
      this.#finish(this.closeCode, new MatchmakerError("resume.expired", why));
    }
  }

  #failPending(error: MatchmakerError): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { reject, timer } of pending) {
      clearTimeout(timer);
      reject(error);
    }
  }

  #stopTimers(): void {
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
    if (this.#retry !== null) clearTimeout(this.#retry); // a resume sends them again anyway
    this.#retry = null;
  }

  /** Closed for good: no more requests, `connection.closed` ends the events. */
  #finish(code: number | null, error: MatchmakerError | null): void {
    if (this.#state === "closed") return;
    const socket = this.#socket;
    this.#socket = null;
    this.#state = "closed";
    this.closeCode = code ?? this.closeCode;
    this.#closeError = error;
    this.#stopTimers();
    this.#failPending(this.#closedError());
    socket?.close();
    const why = error && { code: error.code, message: error.message };
    const data = { code: this.closeCode, error: why };
    this.#events.deliver({ type: "connection.closed", data, seq: null });
    // After a clean close the server took every send before the bye; otherwise the held
    // ones may never have arrived: each is an `error` event after `connection.closed`.
    this.#forgetHeld(error === null ? null : this.#closedError());
    this.#markClosed();
  }
}

/** The UTF-8 length of `text` (what a held frame costs against `maxUnackedBytes`). */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) bytes += code >= 0x800 && (code < 0xd800 || code > 0xdfff) ? 2 : 1;
  }
  return bytes;
}

/** Why the server closed for good, as a coded error (`null` for a clean bye). */
function closeReason(code: number): MatchmakerError | null {
  if (code === 4000 || code === 1000) return null;
  const why = `the server closed the connection (${code})`;
  return new MatchmakerError("client.closed", why, { close_code: code });
}
