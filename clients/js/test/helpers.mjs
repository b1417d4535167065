// Test helpers: a real matchmaker process on free ports, and a TCP proxy the tests can cut.
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import net from "node:net";

import { WebSocket } from "ws";

import { connect as connectWith } from "../dist/index.js";

/** The matchmaker executable: $MATCHMAKER_BIN, else `matchmaker` on PATH. */
export const MATCHMAKER_BIN = process.env.MATCHMAKER_BIN || "matchmaker";
export const KEY = "js-client-tests-management-key";
const LISTENING = /(data|control) plane listening on http:\/\/[^:]+:(\d+)/g;

/** Poll `check` until it returns a truthy value, or fail after `withinMs`. */
export async function waitFor(check, { withinMs = 10_000, what = "the condition" } = {}) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Start `matchmaker --host 127.0.0.1 --port 0 ...args` and learn its ports from the log
 * line each plane writes. With `management: true` the control plane is served too
 * (port 0, an in-memory store) so tests can declare Projects.
 */
export function startMatchmaker(args = [], { management = false } = {}) {
  const extra = management
    ? ["--management-key", KEY, "--management-port", "0", "--store", "memory://"]
    : [];
  return runMatchmaker(["--host", "127.0.0.1", "--port", "0", ...extra, ...args], {
    planes: management ? 2 : 1,
  });
}

/** Run `matchmaker ...argv` in `cwd` with `env` added, once its `planes` listen. */
export async function runMatchmaker(argv, { planes = 1, cwd = undefined, env: extraEnv = {} } = {}) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("MATCHMAKER_")),
  );
  delete env.REALTIME_MGMT_KEY;
  const child = spawn(MATCHMAKER_BIN, argv, {
    cwd,
    env: { ...env, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  let exited = null;
  child.stdout.on("data", (chunk) => (log += chunk));
  child.stderr.on("data", (chunk) => (log += chunk));
  child.on("exit", (code) => (exited = code ?? -1));
  child.on("error", (error) => (exited = String(error)));
  const ports = await waitFor(
    () => {
      if (exited !== null) throw new Error(`matchmaker exited (${exited}):\n${log}`);
      const found = Object.fromEntries([...log.matchAll(LISTENING)].map((m) => [m[1], Number(m[2])]));
      return Object.keys(found).length === planes ? found : null;
    },
    { withinMs: 30_000, what: `matchmaker's listening ports (${MATCHMAKER_BIN})` },
  );
  return {
    port: ports.data,
    ws: `ws://127.0.0.1:${ports.data}/ws`,
    http: `http://127.0.0.1:${ports.data}`,
    control: ports.control && `http://127.0.0.1:${ports.control}`,
    log: () => log,
    async stop() {
      if (exited === null) {
        const done = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await done;
      }
      return exited;
    },
  };
}

/** Declare a Project through the control plane. */
export async function declareProject(server, project) {
  const response = await fetch(`${server.control}/admin/projects`, {
    method: "POST",
    headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
    body: JSON.stringify(project),
  });
  if (response.status !== 201) throw new Error(`declaring ${project.id}: ${await response.text()}`);
}

/**
 * An HS256 token for `sub` signed with `secret` (node's HMAC), expiring `expiresInS` seconds
 * from now (negative: already expired); `claims` are added to its payload.
 */
export function hs256Token(secret, sub, { expiresInS = 60, ...claims } = {}) {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const exp = Math.floor(Date.now() / 1000) + expiresInS;
  const body = `${part({ alg: "HS256", typ: "JWT" })}.${part({ sub, exp, ...claims })}`;
  return `${body}.${createHmac("sha256", secret).update(body).digest("base64url")}`;
}

/** `connect` with the `ws` package (Node 20 has no global WebSocket) and short timeouts. */
export function connect(url, options = {}) {
  return connectWith(url, { WebSocket, timeoutMs: 5000, ...options });
}

/** A TCP proxy in front of a port: `cut()` drops every connection at once (a lost network),
 * `freeze()` stops forwarding without closing (a half-open connection; `freeze("down")`
 * only what the server sends, so what it took is never acknowledged), `refuse()` stops
 * accepting new connections until `accept()`. */
export async function startProxy(targetPort) {
  const pairs = new Set();
  const onConnection = (inbound) => {
    const outbound = net.connect(targetPort, "127.0.0.1");
    const pair = { inbound, outbound, frozen: false, frozenDown: false };
    pairs.add(pair);
    const forward = (from, to) =>
      from.on("data", (chunk) => {
        if (!pair.frozen && !(from === outbound && pair.frozenDown)) to.write(chunk);
      });
    forward(inbound, outbound);
    forward(outbound, inbound);
    const end = () => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on("close", end).on("error", end);
    outbound.on("close", end).on("error", end);
  };
  let server = net.createServer(onConnection);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = server.address().port;
  return {
    port,
    url: `ws://127.0.0.1:${port}/ws`,
    cut() {
      for (const { inbound, outbound } of pairs) {
        inbound.resetAndDestroy();
        outbound.resetAndDestroy();
      }
      pairs.clear();
    },
    freeze(direction = "both") {
      for (const pair of pairs) {
        if (direction === "down") pair.frozenDown = true;
        else pair.frozen = true;
      }
    },
    refuse() {
      server.close();
    },
    async accept() {
      server = net.createServer(onConnection);
      await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    async stop() {
      this.cut();
      if (server.listening) server.close();
    },
  };
}
