// A drain as a game sees it: two players behind a load balancer (a TCP proxy), both on
// process a of a two-process --cluster, each sending every 5 ms. a is stopped (SIGTERM):
// it hands their game over to b and closes their sockets with 3001 "resume"; the load
// balancer takes a out once its /readyz says 503, and the clients resume on b by
// themselves, in the same session, every message once and in order both ways.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import net from "node:net";
import { test } from "node:test";

import {
  assertOnceInOrderBothWays,
  bothBack,
  connect,
  freePort,
  playBothWays,
  runMatchmaker,
  startProxy,
  waitFor,
} from "./helpers.mjs";

const NO_REDIS = spawnSync("redis-server", ["--version"]).error
  ? "redis-server is not installed (in CI, where every cluster test must run, this skip is a failure)"
  : false;

/** Whether a Redis server answers PING on `port`. */
function pings(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
    socket.once("data", (reply) => {
      socket.destroy();
      resolve(reply.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolve(false));
  });
}

/** A redis-server of the test's own (nothing saved) on a free port. */
async function startRedis() {
  const port = await freePort();
  const argv = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const child = spawn("redis-server", argv, { stdio: "ignore" });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  await waitFor(() => pings(port), { what: "redis-server up" });
  return {
    url: `redis://127.0.0.1:${port}/0`,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** What a load balancer's health check concludes: `/readyz` is not 200. */
async function outOfRotation(server) {
  try {
    return (await fetch(`${server.http}/readyz`)).status !== 200;
  } catch {
    return true;
  }
}

async function members(server) {
  const health = await (await fetch(`${server.http}/healthz`)).json();
  return health.cluster.available ? health.cluster.members : 0;
}

for (const kind of ["hypercorn", "picows"]) {
  test(`on ${kind}, both players resume a drain on the other process and lose nothing`, { skip: NO_REDIS }, async () => {
    const redis = await startRedis();
    const cluster = ["--cluster", redis.url, "--cluster-name", `mm-js-${randomUUID().slice(0, 8)}`];
    const args = [
      ...["--host", "127.0.0.1", "--port", "0", "--server", kind, ...cluster],
      ...["--resume-grace-ms", "20000", "--shutdown-grace", "1"],
    ];
    const servers = [];
    const clients = [];
    try {
      servers.push(await runMatchmaker(args), await runMatchmaker(args));
      const [a, b] = servers;
      await waitFor(async () => (await members(a)) === 2 && (await members(b)) === 2, {
        what: "two cluster members",
      });
      const balancer = await startProxy(a.port);
      const reconnect = { initialDelayMs: 50, maxDelayMs: 300 };
      const alice = await connect(balancer.url, { project: "js-drain", reconnect });
      const bob = await connect(balancer.url, { project: "js-drain", reconnect });
      clients.push(alice, bob);
      const pool = { pool: "drain", create: true, mode: "auto", groupSize: 2 };
      const created = [alice.nextEvent("session.created"), bob.nextEvent("session.created")];
      await alice.enter(pool);
      await bob.enter(pool);
      const [forAlice, forBob] = await Promise.all(created);
      const sessionId = forAlice.data.session_id;
      assert.equal(forBob.data.session_id, sessionId);
      const ids = [alice.clientId, bob.clientId];

      const played = await playBothWays(clients, sessionId, async (players) => {
        const stopped = a.stop(); // SIGTERM now; resolves with the exit status
        await waitFor(() => outOfRotation(a), { what: "a out of rotation" });
        balancer.retarget(b.port);
        assert.equal(await stopped, 0);
        await waitFor(() => bothBack(players), { withinMs: 20_000, what: "both open on b" });
      });
      assertOnceInOrderBothWays(played, ids);
      assert.deepEqual(balancer.targets(), [b.port, b.port]);
      await balancer.stop();
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await Promise.all(servers.map((server) => server.stop()));
      await redis.stop();
    }
  });
}
