// docs/library.md's JavaScript client section holds: its examples run against a real
// matchmaker, and its error table lists exactly the codes the client raises itself.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { startMatchmaker } from "./helpers.mjs";

const LIBRARY = readFileSync(new URL("../../../docs/library.md", import.meta.url), "utf8");
const SECTION = LIBRARY.split("## The JavaScript client")[1].split("\n## ")[0];
const SOURCES = new URL("../src/", import.meta.url);
let server;
before(async () => {
  server = await startMatchmaker();
});
after(async () => {
  await server?.stop();
});

test("every JavaScript example of docs/library.md runs", async () => {
  const blocks = [...SECTION.matchAll(/^```js\n(.*?)^```$/gms)].map((match) => match[1]);
  assert.ok(blocks.length > 0);
  const run = new URL("../.readme-run/", import.meta.url);
  mkdirSync(run, { recursive: true });
  try {
    for (const [index, block] of blocks.entries()) {
      const file = new URL(`library-${index}.mjs`, run);
      writeFileSync(file, block.replace(":8080/", `:${server.port}/`));
      const { stdout } = await promisify(execFile)(process.execPath, [file.pathname], { timeout: 30_000 });
      assert.match(stdout, /^true \{ move: 'e4' \}$/m);
    }
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test("the error table lists exactly the client's own codes", () => {
  const table = SECTION.split("### JavaScript client errors")[1];
  const documented = new Set([...table.matchAll(/^\| `(client\.[a-z_]+)` \|/gm)].map((match) => match[1]));
  const raised = new Set();
  for (const name of readdirSync(SOURCES).filter((file) => file.endsWith(".ts"))) {
    const text = readFileSync(new URL(name, SOURCES), "utf8");
    for (const match of text.matchAll(/new MatchmakerError\(\s*"(client\.[a-z_]+)"/g)) raised.add(match[1]);
  }
  assert.deepEqual([...raised].sort(), [...documented].sort());
});
