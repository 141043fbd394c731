/** Reading the vector files the way every runner does (vectors/README.md, "Runner rules"). */

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The `vectors/` directory, from the compiled test (`dist/test/...`). */
export const VECTORS = fileURLToPath(new URL("../../../vectors/", import.meta.url));

/** Every `.json` file under `dir`, recursively. */
export function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path));
    else if (entry.name.endsWith(".json")) out.push(path);
  }
  return out;
}

/** Whitespace outside strings removed (the runner's compact serialisation of `input`,
 * which keeps the file's key order and number spellings). */
export function minify(text: string): string {
  let out = "";
  let inString = false;
  let escaped = false;
  for (const c of text) {
    if (inString) {
      out += c;
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (!/\s/.test(c)) out += c;
  }
  return out;
}
