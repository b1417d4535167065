/**
 * The events a client delivers: the server's (typed by `protocol.ts`) and the client's own
 * about its connection, buffered for `nextEvent` / `events()` and handed to callbacks.
 */

import type { ErrorBody, Events } from "./protocol.js";

/** Events the client adds about its own connection (never sent by the server). */
export interface ConnectionEvents {
  /** The connection dropped uncleanly; the client is resuming it within `grace_ms`. */
  "connection.away": { code: number; reason: string; grace_ms: number };
  /** Resumed: same client id, sessions and entries; missed events follow. */
  "connection.back": { client_id: string; attempts: number };
  /** The client is closed for good (`error`: why, e.g. `resume.expired`; `null` after `close()`). */
  "connection.closed": { code: number | null; error: { code: string; message: string } | null };
  /** A fire-and-forget request (`send`) failed. */
  error: ErrorBody;
}

export type AllEvents = Events & ConnectionEvents;
export type EventType = keyof AllEvents;
/** An event: `seq` is the server's per-client number (`null` for the client's own events). */
export type MatchmakerEvent<K extends EventType = EventType> = {
  [T in K]: { type: T; data: AllEvents[T]; seq: number | null };
}[K];
type Listener = (event: MatchmakerEvent) => void;

/**
 * The delivered events not yet taken (at most `most`, the oldest dropped first, so a client
 * that only uses callbacks does not grow), the callbacks, and the waiters woken by any
 * delivery or change of the client's state.
 */
export class EventBuffer {
  #queue: MatchmakerEvent[] = [];
  #wake: (() => void)[] = [];
  #listeners = new Map<string, Set<Listener>>();
  readonly #most: number;

  constructor(most: number) {
    this.#most = most;
  }

  on<K extends EventType>(type: K | "*", listener: (event: MatchmakerEvent<K>) => void): () => void {
    const set = this.#listeners.get(type) ?? new Set<Listener>();
    set.add(listener as Listener);
    this.#listeners.set(type, set);
    return () => set.delete(listener as Listener);
  }

  /** Buffer `event`, wake the waiters, call the callbacks (one that throws stops no other). */
  deliver(event: MatchmakerEvent): void {
    this.#queue.push(event);
    if (this.#queue.length > this.#most) this.#queue.splice(0, this.#queue.length - this.#most);
    this.notify();
    for (const key of [event.type, "*"]) {
      for (const listener of this.#listeners.get(key) ?? []) {
        try {
          listener(event);
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    }
  }

  /** The oldest buffered event, if any. */
  take(): MatchmakerEvent | undefined {
    return this.#queue.shift();
  }

  /** Wake every waiter of `changed`. */
  notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const resolve of wake) resolve();
  }

  /** Resolves `true` at the next delivery or `notify`, `false` at `deadline` (epoch ms). */
  changed(deadline: number): Promise<boolean> {
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      if (deadline !== Infinity) timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
      this.#wake.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
