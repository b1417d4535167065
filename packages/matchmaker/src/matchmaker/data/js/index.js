/**
 * The matchmaker data-plane client for browsers and Node (docs/protocol.md):
 *
 *     import { connect } from "@matchmaker/client";
 *     const client = await connect("ws://127.0.0.1:8080/ws", { project: "demo" });
 *     await client.enter({ policy: "duel" });
 *     const created = await client.nextEvent("session.created");
 *     client.send(created.data.session_id, { move: "e4" });
 *     await client.close();
 */
import { Client } from "./client.js";
import { platformWebSocket } from "./socket.js";
export { Client } from "./client.js";
export { MatchmakerError } from "./errors.js";
export { Session } from "./session.js";
/**
 * Open a WebSocket to `url` (the data plane's `/ws`) and complete `hello`. Rejects with
 * `client.connect` when the socket cannot be opened, or with the server's code
 * (`auth.invalid_credential`, `project.forbidden`...) when `hello` is refused.
 */
export async function connect(url, options = {}) {
    const client = new Client(url, options.WebSocket ?? (await platformWebSocket()), options);
    await client.start();
    return client;
}
