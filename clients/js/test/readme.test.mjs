// The README's JavaScript quick start, verbatim, against the README's server (only the
// ports change: free ones instead of 8080/8081), as tests/e2e/test_matchmaker_quickstart.py
// does for the Python one. The script imports the package by its name (a package may import
// itself), so it runs as an installed copy would.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

import { runMatchmaker } from "./helpers.mjs";

const README = new URL("../../../README.md", import.meta.url);
const HERE = new URL("../", import.meta.url);

function quickStart() {
  const text = readFileSync(README, "utf8");
  return text.split("## Quick start: matchmaker")[1].split("\n## ")[0];
}

test("the README's two JavaScript players are matched", async () => {
  const section = quickStart();
  const flags = section.match(/^matchmaker (.*)$/m)[1].split(/\s+/);
  flags[flags.indexOf("--port") + 1] = "0";
  flags[flags.indexOf("--management-port") + 1] = "0";
  const key = section.match(/export REALTIME_MGMT_KEY=(\S+)/)[1];
  const body = section.match(/-d '(.*?)'/s)[1];
  const script = section.match(/Save this as `two_players.mjs`.*?\n```js\n(.*?)```/s)[1];
  assert.match(section, /npm install \.\/clients\/js\/matchmaker-client-0\.1\.0\.tgz ws/);

  const cwd = mkdtempSync(join(tmpdir(), "readme-js-"));
  const server = await runMatchmaker(flags, { planes: 2, cwd, env: { REALTIME_MGMT_KEY: key } });
  const run = new URL(".readme-run/", HERE);
  try {
    const created = await fetch(`${server.control}/admin/projects`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body,
    });
    assert.equal(created.status, 201, await created.text());
    mkdirSync(run, { recursive: true });
    writeFileSync(new URL("two_players.mjs", run), script.replace(":8080/", `:${server.port}/`));
    const { stdout } = await promisify(execFile)(process.execPath, ["two_players.mjs"], {
      cwd: run,
      timeout: 30_000,
    });
    const lines = stdout.trim().split("\n").sort();
    assert.equal(lines.length, 2, stdout);
    const sessions = new Set(lines.map((line) => line.split(" with ")[0].split("session ")[1]));
    assert.equal(sessions.size, 1);
    for (const [name, line] of [["alice", lines[0]], ["bob", lines[1]]]) {
      assert.ok(line.startsWith(`${name}: session `), line);
      assert.deepEqual(JSON.parse(line.split(" with ")[1]).sort(), ["alice", "bob"]);
    }
  } finally {
    assert.equal(await server.stop(), 0);
    rmSync(run, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
});
