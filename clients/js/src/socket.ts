/** Opening a WebSocket on any platform: the browser's, Node's built-in (22+) or `ws`. */

import { MatchmakerError } from "./errors.js";

/** The part of the WebSocket API the client uses (browsers, Node 22+, Deno and `ws`). */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** A WebSocket constructor: `globalThis.WebSocket`, or `ws`'s `WebSocket` on Node 20. */
export type WebSocketClass = new (url: string) => WebSocketLike;

const OPEN = 1;

/**
 * The platform's WebSocket, else the optional peer `ws` (Node 20 has no global one).
 * The module name is a variable so bundlers for browsers never try to resolve it.
 */
export async function platformWebSocket(): Promise<WebSocketClass> {
  const global = (globalThis as { WebSocket?: WebSocketClass }).WebSocket;
  if (global !== undefined) return global;
  const name = "ws";
  try {
    const module = (await import(name)) as { WebSocket: WebSocketClass };
    return module.WebSocket;
  } catch {
    throw new MatchmakerError(
      "client.connect",
      "this platform has no WebSocket: install the ws package (npm install ws) or pass options.WebSocket",
    );
  }
}

/** Open `url`, failing with `client.connect` on error, early close or after `timeoutMs`. */
export function openSocket(
  Socket: WebSocketClass,
  url: string,
  timeoutMs: number,
): Promise<WebSocketLike> {
  return new Promise((resolve, reject) => {
    let socket: WebSocketLike;
    const fail = (why: string): void => {
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
    } catch (error) {
      fail(String(error));
      return;
    }
    socket.onerror = () => undefined; // the close that follows says it
    socket.onclose = (event) => fail(`closed with ${event.code}`);
    socket.onopen = () => {
      clearTimeout(timer);
      if (socket.readyState === OPEN) resolve(socket);
      else fail("closed while opening");
    };
  });
}
