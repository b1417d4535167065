// Copy the built client (dist/*.js) into the matchmaker package, which serves it to the
// playground at /js/ on the data port: pip users get it without Node. test/build.test.mjs
// fails while the copy differs from a fresh build.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";

import { BUILT, PACKAGED, builtFiles } from "./files.mjs";

rmSync(PACKAGED, { recursive: true, force: true });
mkdirSync(PACKAGED, { recursive: true });
for (const name of builtFiles()) copyFileSync(new URL(name, BUILT), new URL(name, PACKAGED));
console.log(`copied ${readdirSync(PACKAGED).length} files to ${PACKAGED.pathname}`);
