/**
 * Every conformance case under `vectors/` (flows excepted) through the real receive path:
 * framing (`jsonrpc/frame`), the envelope (`jsonrpc/message`), dispatch by method and
 * direction and the typed decode (`acp/receive`'s `classify`); the outcome compared with
 * `expect` as `python/tests/test_vectors.py` and the Rust runner compare it, and the
 * canonical encoding of a decoded payload compared byte for byte with the golden file.
 *
 * Known failures are listed in `vectors/baselines/typescript.json` with a reason: an
 * unlisted failure fails, and so does a listed case that passes (a stale entry).
 * `AGENTPROTO_VECTORS=jsonrpc/,-acp/v1/types` selects cases by id prefix.
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { classify } from "../src/acp/receive.js";
import { AGENT, CLIENT } from "../src/acp/v1.js";
import { JObject } from "../src/codec/reader.js";
import { Oversize, splitLines } from "../src/jsonrpc/frame.js";
import { idKey } from "../src/jsonrpc/id.js";
import { member, nodeOf, same, show } from "./json-compare.js";
import { ERROR_TEXTS, loadCases, observe, type Case, type Observed } from "./vector-cases.js";
import { flowFiles, idOf, selected, VECTORS } from "./vector-files.js";

const BASELINE_FILE = join(VECTORS, "baselines", "typescript.json");

const CASES = loadCases();
const BASELINE: Record<string, string> = existsSync(BASELINE_FILE)
  ? (JSON.parse(readFileSync(BASELINE_FILE, "utf8")) as Record<string, string>)
  : {};

// ---------------------------------------------------------------------------
// Running a case

function compare(expect: JObject, observed: Observed): void {
  const mismatch = (what: string): Error =>
    new assert.AssertionError({ message: `${what}: expected ${show(expect)}, observed ${show(nodeOf(observed))}` });
  const outcome = member(expect, "outcome")?.value;
  if (outcome !== observed["outcome"]) throw mismatch("outcome");
  // `kind`: a `call_failed` case may state the kind of the local decode error.
  for (const key of ["method", "id", "type", "params", "result", "finding", "path", "kind"]) {
    const wanted = member(expect, key);
    if (wanted !== undefined && !same(wanted.value, nodeOf(observed[key]))) throw mismatch(key);
  }
  const error = member(expect, "error")?.value;
  if (error instanceof JObject) {
    const got = (observed["error"] ?? {}) as Record<string, unknown>;
    for (const key of ["code", "message", "path", ...ERROR_TEXTS]) {
      const wanted = member(error, key);
      if (wanted !== undefined && !same(wanted.value, nodeOf(got[key]))) throw mismatch(`error.${key}`);
    }
  }
  if (outcome === "request" || outcome === "notification" || outcome === "response") {
    const wanted = new Set<string>();
    const list = member(expect, "warnings")?.value;
    if (list !== undefined && list !== null && typeof list === "object" && "items" in list) {
      for (const item of list.items) wanted.add(item as string);
    }
    const got = new Set(observed["warnings"] as string[]);
    if (wanted.size !== got.size || [...wanted].some((w) => !got.has(w))) throw mismatch("warnings");
  }
}

function compareBytes(golden: Buffer, actual: Buffer): void {
  if (golden.equals(actual)) return;
  let at = 0;
  while (at < golden.length && at < actual.length && golden[at] === actual[at]) at++;
  throw new assert.AssertionError({
    message:
      `canonical encoding differs at byte ${at} (golden ${golden.length} bytes, encoded ${actual.length} bytes)\n` +
      `  golden:  ${golden.toString("utf8")}\n  encoded: ${actual.toString("utf8")}`,
  });
}

function run(c: Case): void {
  const frames = splitLines(c.input);
  assert.equal(frames.length, 1, `expected one framed line, got ${frames.length}`);
  const line = frames[0];
  assert.ok(line !== undefined && !(line instanceof Oversize), "unexpected oversize line");
  const receiver = c.direction === "client_to_agent" ? AGENT : CLIENT;
  const incoming = classify(line, receiver, (id) => c.pending.get(idKey(id)));
  const [observed, encoded] = observe(incoming, receiver);
  compare(c.expect, observed);
  if (encoded !== null) {
    assert.ok(c.canonical !== null, "the message decodes but the case has no golden file (<case>.canonical)");
    compareBytes(c.canonical, Buffer.from(encoded, "utf8"));
  }
}

// ---------------------------------------------------------------------------
// Tests

let passed = 0;

for (const c of CASES) {
  if (!selected(c.id)) continue;
  test(c.id, () => {
    const reason = BASELINE[c.id];
    if (reason === undefined) {
      run(c);
      passed++;
      return;
    }
    let failed = false;
    try {
      run(c);
    } catch (err) {
      if (!(err instanceof assert.AssertionError)) throw err;
      failed = true; // a known failure, listed with its reason
    }
    assert.ok(failed, `stale baseline entry: ${c.id} passes now (listed as: ${reason})`);
  });
}

test("the baseline lists only existing cases and flows", () => {
  const flows = flowFiles("acp").map(idOf);
  const ids = new Set([...CASES.map((c) => c.id), ...flows]);
  assert.deepEqual(Object.keys(BASELINE).filter((id) => !ids.has(id)), []);
});

test("the cases were found", () => {
  assert.ok(CASES.length > 600, `only ${CASES.length} cases`);
});

test.after(() => {
  const listed = CASES.filter((c) => selected(c.id) && BASELINE[c.id] !== undefined).length;
  console.log(`vectors: ${passed} passed, ${listed} baselined, ${CASES.filter((c) => selected(c.id)).length} selected`);
});
