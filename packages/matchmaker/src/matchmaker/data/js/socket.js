/** Opening a WebSocket on any platform: the browser's, Node's built-in (22+) or `ws`. */
import { MatchmakerError } from "./errors.js";
const OPEN = 1;
/**
 * The platform's WebSocket, else the optional peer `ws` (Node 20 has no global one).
 * The module name is a variable so bundlers for browsers never try to resolve it.
 */
export async function platformWebSocket() {
    const global = globalThis.WebSocket;
    if (global !== undefined)
        return global;
    const name = "ws";
    try {
        const module = (await import(name));
        return module.WebSocket;
    }
    catch {
        throw new MatchmakerError("client.connect", "this platform has no WebSocket: install the ws package (npm install ws) or pass options.WebSocket");
    }
}
/** Open `url`, failing with `client.connect` on error, early close or after `timeoutMs`. */
export function openSocket(Socket, url, timeoutMs) {
    return new Promise((resolve, reject) => {
        let socket;
        const fail = (why) => {
            clearTimeout(timer);
            reject(new MatchmakerError("client.connect", `cannot connect to ${url}: ${why}`));
        };
        const timer = setTimeout(() => {
            socket.onclose = null;
            socket.onerror = null;
            socket.close();
            fail(`no answer within ${timeoutMs} ms`);
        }, timeoutMs);
        try {
            socket = new Socket(url);
        }
        catch (error) {
            fail(String(error));
            return;
        }
        socket.onerror = () => undefined; // the close that follows says it
        socket.onclose = (event) => fail(`closed with ${event.code}`);
        socket.onopen = () => {
            clearTimeout(timer);
            if (socket.readyState === OPEN)
                resolve(socket);
            else
                fail("closed while opening");
        };
    });
}
