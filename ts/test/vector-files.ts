/** Reading the vector files the way every runner does (vectors/README.md, "Layout" and
 * "Runner rules"): which files are a corpus's cases and flows comes from
 * `vectors/layout.json`, the one table every runner reads. */

import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The `vectors/` directory, from the compiled test (`dist/test/...`). */
export const VECTORS = fileURLToPath(new URL("../../../vectors/", import.meta.url));

/** A corpus of `vectors/layout.json`: its case roots, flows folder and requirement ids. */
export interface Corpus {
  readonly cases: readonly string[];
  readonly flows: string;
  readonly requirements: string;
}

/** The corpus `name` (`acp`, `a2a`) of `vectors/layout.json`. */
export function corpus(name: string): Corpus {
  const layout = JSON.parse(readFileSync(join(VECTORS, "layout.json"), "utf8")) as { corpora: Record<string, Corpus | undefined> };
  const found = layout.corpora[name];
  if (found === undefined) throw new Error(`vectors/layout.json: no corpus ${JSON.stringify(name)}`);
  return found;
}

/** Every case file of the corpus (the `.json` files under its case roots, its flows
 * folder excepted), sorted by path. */
export function caseFiles(name: string): string[] {
  const c = corpus(name);
  const flows = join(VECTORS, c.flows) + sep;
  return c.cases
    .flatMap((root) => walk(join(VECTORS, root)))
    .filter((path) => !path.startsWith(flows))
    .sort();
}

/** Every flow file of the corpus (the `.json` files directly in its flows folder), sorted. */
export function flowFiles(name: string): string[] {
  const dir = join(VECTORS, corpus(name).flows);
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".json"))
    .map((e) => join(dir, e.name))
    .sort();
}

/** A file's id: its path under `vectors/` without `.json`, with `/` separators. */
export function idOf(path: string): string {
  return relative(VECTORS, path).split(sep).join("/").replace(/\.json$/, "");
}

/** Whether `AGENTPROTO_VECTORS` (id prefixes; `-` excludes) selects `id`. */
export function selected(id: string): boolean {
  const parts = (process.env["AGENTPROTO_VECTORS"] ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.some((p) => p.startsWith("-") && id.startsWith(p.slice(1)))) return false;
  const includes = parts.filter((p) => !p.startsWith("-"));
  return includes.length === 0 || includes.some((p) => id.startsWith(p));
}

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
