// The matchmaker package serves a copy of the built client: it must be this build.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { promisify } from "node:util";

import { BUILT, PACKAGED, builtFiles, jsFiles } from "../scripts/files.mjs";

test("the packaged client equals a fresh build (run `npm run sync` after a change)", () => {
  assert.deepEqual(jsFiles(PACKAGED), builtFiles());
  for (const name of builtFiles()) {
    const fresh = readFileSync(new URL(name, BUILT), "utf8");
    assert.equal(readFileSync(new URL(name, PACKAGED), "utf8"), fresh, `${name} is stale: run npm run sync`);
  }
});

test("npm pack makes the tarball the README installs, with the JS and its .d.ts", async () => {
  const cwd = new URL("../", import.meta.url);
  const args = ["pack", "--dry-run", "--json", "--ignore-scripts"];
  const { stdout } = await promisify(execFile)("npm", args, { cwd });
  const [packed] = JSON.parse(stdout);
  assert.equal(packed.filename, "matchmaker-client-0.1.0.tgz");
  const files = packed.files.map((file) => file.path);
  for (const name of builtFiles()) {
    assert.ok(files.includes(`dist/${name}`), name);
    assert.ok(files.includes(`dist/${name.replace(/\.js$/, ".d.ts")}`), name);
  }
});
