// Where the built client is, and where the matchmaker package keeps its copy.
import { readdirSync } from "node:fs";

export const BUILT = new URL("../dist/", import.meta.url);
export const PACKAGED = new URL("../../../packages/matchmaker/src/matchmaker/data/js/", import.meta.url);

/** The JavaScript files of a directory (the .d.ts files stay with the npm package). */
export function jsFiles(directory) {
  return readdirSync(directory).filter((name) => name.endsWith(".js")).sort();
}

export function builtFiles() {
  return jsFiles(BUILT);
}
