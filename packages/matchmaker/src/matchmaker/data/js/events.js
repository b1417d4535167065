/**
 * The events a client delivers: the server's (typed by `protocol.ts`) and the client's own
 * about its connection, buffered for `nextEvent` / `events()` and handed to callbacks.
 */
/**
 * The delivered events not yet taken (at most `most`, the oldest dropped first, so a client
 * that only uses callbacks does not grow), the callbacks, and the waiters woken by any
 * delivery or change of the client's state.
 */
export class EventBuffer {
    #queue = [];
    #wake = [];
    #listeners = new Map();
    #most;
    constructor(most) {
        this.#most = most;
    }
    on(type, listener) {
        const set = this.#listeners.get(type) ?? new Set();
        set.add(listener);
        this.#listeners.set(type, set);
        return () => set.delete(listener);
    }
    /** Buffer `event`, wake the waiters, call the callbacks (one that throws stops no other). */
    deliver(event) {
        this.#queue.push(event);
        if (this.#queue.length > this.#most)
            this.#queue.splice(0, this.#queue.length - this.#most);
        this.notify();
        for (const key of [event.type, "*"]) {
            for (const listener of this.#listeners.get(key) ?? []) {
                try {
                    listener(event);
                }
                catch (error) {
                    queueMicrotask(() => {
                        throw error;
                    });
                }
            }
        }
    }
    /** The oldest buffered event, if any. */
    take() {
        return this.#queue.shift();
    }
    /** Wake every waiter of `changed`. */
    notify() {
        const wake = this.#wake;
        this.#wake = [];
        for (const resolve of wake)
            resolve();
    }
    /** Resolves `true` at the next delivery or `notify`, `false` at `deadline` (epoch ms). */
    changed(deadline) {
        return new Promise((resolve) => {
            let timer;
            if (deadline !== Infinity)
                timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
            this.#wake.push(() => {
                clearTimeout(timer);
                resolve(true);
            });
        });
    }
}
