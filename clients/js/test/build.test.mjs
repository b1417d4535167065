// The matchmaker package serves a copy of the built client: it must be this build.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { BUILT, PACKAGED, builtFiles, jsFiles } from "../scripts/files.mjs";

test("the packaged client equals a fresh build (run `npm run sync` after a change)", () => {
  assert.deepEqual(jsFiles(PACKAGED), builtFiles());
  for (const name of builtFiles()) {
    const fresh = readFileSync(new URL(name, BUILT), "utf8");
    assert.equal(readFileSync(new URL(name, PACKAGED), "utf8"), fresh, `${name} is stale: run npm run sync`);
  }
});
