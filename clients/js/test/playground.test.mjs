// The playground (GET / on the data port) in Chromium: it runs this client's build, served by
// the data port, under the page's CSP. Debian's chromium, never a downloaded browser.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, test } from "node:test";

import { chromium } from "playwright-core";

import { declareProject, hs256Token, startMatchmaker, startProxy } from "./helpers.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
let server;
let browser;
const scripts = new Set(); // every script a page loaded
before(async () => {
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (apt-get install chromium)`);
  server = await startMatchmaker();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** A page of the playground at `base`, connected to `project` with a public name. */
async function player(base, name, problems, { project = "js-playground", credential = "" } = {}) {
  const page = await browser.newPage();
  page.on("pageerror", (error) => problems.push(`${name}: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`${name}: ${message.text()}`);
  });
  page.on("request", (request) => {
    if (!request.url().startsWith(`${base}/`)) problems.push(`${name}: loaded ${request.url()}`);
  });
  page.on("response", (response) => {
    if (response.url().endsWith(".js")) scripts.add(response.url());
  });
  await page.goto(`${base}/`);
  await page.fill("#project", project);
  await page.fill("#credential", credential);
  await page.fill("#name", name);
  await page.click("#connect");
  await page.locator("#status", { hasText: "Connected as" }).waitFor();
  return page;
}

async function matched(pages) {
  for (const page of pages) await page.click("#enter-adhoc");
  for (const page of pages) await page.locator("#session", { hasText: "2 members" }).waitFor();
}

async function say(from, to, text) {
  await from.fill("#message", text);
  await from.press("#message", "Enter");
  await to.locator("#messages .msg", { hasText: text }).waitFor();
}

test("two pages are matched and talk through the client the data port serves", async () => {
  const problems = [];
  const alice = await player(server.http, "alice", problems);
  const bob = await player(server.http, "bob", problems);
  try {
    await matched([alice, bob]);
    await say(alice, bob, "good luck, have fun");
    await say(bob, alice, "you too");
    await alice.locator("#messages .msg.mine", { hasText: "good luck, have fun" }).waitFor();
    await bob.click("#leave-session");
    await alice.locator("#messages", { hasText: "left" }).waitFor();
    await bob.click("#disconnect");
    await bob.locator("#status", { hasText: "Disconnected (4000)" }).waitFor();
    assert.deepEqual(problems, []);
    assert.ok(scripts.has(`${server.http}/js/client.js`), [...scripts].join(", "));
  } finally {
    await alice.close();
    await bob.close();
  }
});

test("a page whose connection drops resumes and misses nothing", async () => {
  const proxy = await startProxy(server.port);
  const problems = [];
  const alice = await player(`http://127.0.0.1:${proxy.port}`, "alice", problems);
  const bob = await player(server.http, "bob", problems);
  try {
    await matched([alice, bob]);
    proxy.refuse();
    proxy.cut();
    await alice.locator("#status", { hasText: "resuming" }).waitFor();
    await bob.locator("#messages", { hasText: "is away" }).waitFor();
    await bob.fill("#message", "sent while you were away");
    await bob.press("#message", "Enter");
    await bob.locator("#messages .msg.mine", { hasText: "sent while you were away" }).waitFor();
    await proxy.accept();
    await alice.locator("#messages", { hasText: "Reconnected" }).waitFor();
    await alice.locator("#messages .msg", { hasText: "sent while you were away" }).waitFor();
    assert.equal(await alice.locator("#messages .msg", { hasText: "sent while you were away" }).count(), 1);
    await bob.locator("#messages", { hasText: "is back" }).waitFor();
    await say(alice, bob, "back again");
    // A dropped connection logs a failed socket in the console; nothing else may go wrong.
    assert.deepEqual(problems.filter((line) => !line.includes("WebSocket")), []);
  } finally {
    await alice.close();
    await bob.close();
    await proxy.stop();
  }
});

test("a member backfills the seat a player left, from the page", async () => {
  const problems = [];
  const [alice, bob, carol] = await Promise.all(
    ["alice", "bob", "carol"].map((name) => player(server.http, name, problems)),
  );
  try {
    for (const page of [alice, bob, carol]) await page.fill("#pool", "refill");
    await matched([alice, bob]);
    await bob.click("#leave-session");
    await alice.locator("#session", { hasText: "1 members" }).waitFor();
    await alice.click("#backfill");
    await alice.locator("#messages", { hasText: "Backfill: 0 seated, 1 open." }).waitFor();
    await carol.click("#enter-adhoc");
    await alice.locator("#session", { hasText: "2 members" }).waitFor();
    await carol.locator("#session", { hasText: "alice" }).waitFor();
    await say(carol, alice, "glad to fill in");
    assert.deepEqual(problems, []);
  } finally {
    await Promise.all([alice, bob, carol].map((page) => page.close()));
  }
});

test("an ad-hoc pool with minGroupSize forms a smaller group after fillTimeoutMs", async () => {
  const problems = [];
  const [alice, bob] = await Promise.all(
    ["alice", "bob"].map((name) => player(server.http, name, problems)),
  );
  try {
    for (const page of [alice, bob]) {
      await page.fill("#pool", "small-lobby");
      await page.fill("#group-size", "4");
      await page.fill("#min-group-size", "2");
      await page.fill("#fill-timeout", "200");
    }
    await matched([alice, bob]);
    assert.deepEqual(problems, []);
  } finally {
    await Promise.all([alice, bob].map((page) => page.close()));
  }
});

test("a party made and joined by code on the page plays with two solos in one session", async () => {
  const problems = [];
  const [alice, bob, carol, dave] = await Promise.all(
    ["alice", "bob", "carol", "dave"].map((name) => player(server.http, name, problems)),
  );
  try {
    await alice.click("#party-create");
    const code = (await alice.locator("#party .code").textContent()).trim();
    assert.match(code, /^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    await bob.fill("#party-code", code);
    await bob.click("#party-join");
    await bob.locator("#party", { hasText: "2 members" }).waitFor();
    await alice.locator("#party", { hasText: "2 members" }).waitFor();
    await bob.locator("#party", { hasText: "(leader)" }).waitFor();
    for (const page of [alice, carol, dave]) {
      await page.fill("#pool", "squad");
      await page.fill("#group-size", "4");
    }
    await carol.click("#enter-adhoc");
    await alice.click("#enter-adhoc"); // the leader enters for the party
    await bob.locator("#messages", { hasText: "entered squad for the party" }).waitFor();
    await dave.click("#enter-adhoc");
    for (const page of [alice, bob, carol, dave]) {
      await page.locator("#session", { hasText: "4 members" }).waitFor();
    }
    await say(bob, alice, "together at last");
    // Entering for the party is the leader's: bob's attempt is refused on his page.
    await bob.fill("#pool", "squad-2");
    await bob.click("#enter-adhoc");
    await bob.locator("#error", { hasText: "party.not_leader" }).waitFor();
    assert.deepEqual(problems, []);
  } finally {
    await Promise.all([alice, bob, carol, dave].map((page) => page.close()));
  }
});

const JWT_SECRET = "js-playground-jwt-secret-0123456789abcdef";

/** An HS256 token for `sub`, valid for a minute (the test signs, never the page). */
const token = (sub) => hs256Token(JWT_SECRET, sub);

test("a JWT credential binds the page to its player id, shown to itself and to peers", async () => {
  const jwtServer = await startMatchmaker([], { management: true });
  await declareProject(jwtServer, {
    id: "js-jwt",
    keys: [{ type: "jwt", algorithm: "HS256", key: JWT_SECRET }],
  });
  const problems = [];
  const options = (sub) => ({ project: "js-jwt", credential: token(sub) });
  const alice = await player(jwtServer.http, "alice", problems, options("player-alice"));
  const bob = await player(jwtServer.http, "bob", problems, options("player-bob"));
  try {
    await alice.locator("#status", { hasText: "Player player-alice." }).waitFor();
    await matched([alice, bob]);
    await alice.locator("#session", { hasText: "player player-bob" }).waitFor();
    const frames = await alice.locator("#frames").textContent();
    assert.ok(!frames.includes("eyJ"), "a token is shown in the frames");
    assert.deepEqual(problems, []);
  } finally {
    await Promise.all([alice, bob].map((page) => page.close()));
    await jwtServer.stop();
  }
});
