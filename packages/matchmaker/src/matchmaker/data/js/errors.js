/** Every failure the client reports: the server's coded errors and the client's own. */
/**
 * An error with a stable dotted `code`: the server's (`pool.not_found`, `resume.expired`...)
 * for an error reply, or the client's own:
 *
 * - `client.connect`: the WebSocket could not be opened (refused, unreachable, timeout);
 * - `client.closed`: a request on a closed client (`details.close_code`; a `send` reports it
 *   as an `error` event);
 * - `client.credential`: the `credential` function threw, or returned no string;
 * - `client.timeout`: no reply within the request's timeout (`details.timeout_ms`);
 * - `client.interrupted`: the connection dropped while the request waited for its reply
 *   (replies are not replayed on resume: the request may or may not have taken effect).
 *
 * Match on `code`; `message` is for people.
 */
export class MatchmakerError extends Error {
    code;
    details;
    constructor(code, message, details) {
        super(message);
        this.name = "MatchmakerError";
        this.code = code;
        this.details = details ?? null;
    }
}
/** The error an error reply carries (a malformed body is `server.internal`). */
export function fromWire(body) {
    const error = (typeof body === "object" && body !== null ? body : {});
    const details = typeof error.details === "object" ? error.details : null;
    return new MatchmakerError(typeof error.code === "string" ? error.code : "server.internal", typeof error.message === "string" ? error.message : "error", details);
}
