/**
 * No outcome goes through an error message's text.
 *
 * A decode failure is a value made where it happens (`DecodeError`: kind, path, expected,
 * found); its message is rendered from those parts and never read back. This test runs
 * every conformance case through the real receive path (`classify`) twice: once as is,
 * once with the message of every error the receive path checks (`instanceof`, which is
 * how a catch site tells its errors apart, on `Error` and so on every subclass: the
 * reader's `JsonSyntaxError` and `NestingError`, the envelope's `EnvelopeError`,
 * `DecodeError`, `EncodeError`) replaced by misleading text as the check is made. The
 * outcomes must be identical, part for part: the reply, its message and data, the
 * finding, the failure's parts, every warning's message and error.
 *
 * It can fail: code that folds a caught error's message into another (as
 * `dropped invalid value: ${err.message}` in the lenient helpers and
 * `invalid json: ${err.message}` in the surface's decode once did) reads the misleading
 * text after its `instanceof` check and produces a different outcome;
 * `the misleading text reaches a catch site that reads it` shows that on such code.
 * It also checks that every decode failure met has a kind and a message that is the
 * rendering of its parts.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { checkExtName, encodeChecked, outgoingProblem, rawProblem } from "../../src/acp/outgoing.js";
import { classify, type Incoming } from "../../src/acp/receive.js";
import * as v1 from "../../src/acp/v1.js";
import { DecodeError } from "../../src/codec/errors.js";
import { DECODE_ERROR_KINDS } from "../../src/codec/kind.js";
import { JsonSyntaxError, parse } from "../../src/codec/reader.js";
import { RawJson } from "../../src/codec/values.js";
import { splitLines } from "../../src/jsonrpc/frame.js";
import { idKey } from "../../src/jsonrpc/id.js";
import { loadCases, observe } from "../vector-cases.js";

const LIE = "expected nothing, found everything at $.garbage (line 9, column 99)";
const ordinaryHasInstance = Function.prototype[Symbol.hasInstance];

/** While `run` runs, every `x instanceof E` for an `Error` class `E` that holds replaces
 * `x.message` with misleading text first; the count of errors so misled, by class name. */
function misled<T>(run: () => T): [T, Map<string, number>] {
  const seen = new WeakSet<object>();
  const counts = new Map<string, number>();
  Object.defineProperty(Error, Symbol.hasInstance, {
    configurable: true,
    value(this: unknown, x: unknown): boolean {
      const holds = ordinaryHasInstance.call(this, x);
      if (holds && typeof x === "object" && x !== null && !seen.has(x) && ordinaryHasInstance.call(Error, x)) {
        seen.add(x);
        (x as Error).message = LIE;
        const name = (x as Error).constructor.name;
        counts.set(name, (counts.get(name) ?? 0) + 1);
      }
      return holds;
    },
  });
  try {
    return [run(), counts];
  } finally {
    delete (Error as unknown as Record<symbol, unknown>)[Symbol.hasInstance];
  }
}

/** A failure's parts (its rendered message apart: that is what the misled run garbles). */
const parts = (e: DecodeError): string[] => [e.path, e.kind, e.expected, e.found, e.detail];

function failures(incoming: Incoming): DecodeError[] {
  if ((incoming.kind === "reply" || incoming.kind === "ignored") && incoming.finding.error !== null) return [incoming.finding.error];
  if (incoming.kind === "call-failed" && incoming.error !== null) return [incoming.error];
  if (incoming.kind === "request" || incoming.kind === "notification" || incoming.kind === "response") return incoming.warnings.map((w) => w.error);
  return [];
}

interface Outcome {
  readonly observed: Record<string, unknown>;
  readonly warnings: string[];
  readonly failures: DecodeError[];
}

const CASES = loadCases();

function outcomes(): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  for (const c of CASES) {
    const [line] = splitLines(c.input);
    assert.ok(line instanceof Uint8Array);
    const receiver = c.direction === "client_to_agent" ? v1.AGENT : v1.CLIENT;
    const incoming = classify(line, receiver, (id) => c.pending.get(idKey(id)));
    const [observed] = observe(incoming, receiver);
    const warnings = "warnings" in incoming ? incoming.warnings.map((w) => `${w.kind} ${w.path}: ${w.message}`) : [];
    out.set(c.id, { observed, warnings, failures: failures(incoming) });
  }
  return out;
}

/** JSON-comparable form of an outcome (ids and numbers as the vectors hold them). */
function plain(x: unknown): unknown {
  return JSON.parse(JSON.stringify(x, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))) as unknown;
}

const CLEAN = outcomes();

test("every decode failure met has a kind and a message rendered from its parts", () => {
  const met = [...CLEAN.values()].flatMap((o) => o.failures);
  assert.ok(met.length > 100, `only ${met.length} failures met`);
  for (const e of met) {
    assert.ok(DECODE_ERROR_KINDS.includes(e.kind), `${e.kind}: not a kind`);
    assert.ok(e.expected !== "" && e.found !== "", e.message);
    assert.equal(e.detail, `expected ${e.expected}, found ${e.found}`);
    assert.equal(e.message, `${e.detail} at ${e.path}`);
  }
});

test("-32602 replies and failed calls carry the kind of their failure, the message its rendering", () => {
  let replies = 0;
  let calls = 0;
  for (const [id, { observed, failures }] of CLEAN) {
    const error = observed["error"] as Record<string, unknown> | undefined;
    // (A -32602 of the envelope, params that are neither an object nor an array, has no decode failure.)
    if (observed["outcome"] === "reply_error" && error?.["code"] === -32602 && failures.length > 0) {
      assert.equal(failures.length, 1, id);
      const e = failures[0] as DecodeError;
      assert.deepEqual([error["kind"], error["path"], error["expected"], error["found"]], [e.kind, e.path, e.expected, e.found], id);
      assert.equal(error["message"], `invalid params: ${e.message}`, id);
      replies++;
    }
    if (observed["outcome"] === "call_failed" && failures.length > 0) {
      assert.equal(observed["kind"], failures[0]?.kind, id);
      calls++;
    }
  }
  assert.ok(replies > 50, `only ${replies} -32602 replies`);
  assert.ok(calls > 5, `only ${calls} failed calls with a decode error`);
});

test("the same outcomes, part for part, when every caught error's message is misleading", () => {
  const [got, counts] = misled(outcomes);
  for (const name of ["DecodeError", "JsonSyntaxError", "EnvelopeError"]) {
    assert.ok((counts.get(name) ?? 0) > 0, `no ${name} was misled: ${JSON.stringify([...counts])}`);
  }
  assert.deepEqual([...got.keys()], [...CLEAN.keys()]);
  for (const [id, clean] of CLEAN) {
    const other = got.get(id) as Outcome;
    assert.deepEqual(plain(other.observed), plain(clean.observed), id);
    assert.deepEqual(other.warnings, clean.warnings, id);
    assert.deepEqual(other.failures.map(parts), clean.failures.map(parts), id);
  }
});

test("outgoing checks name their failures alike when every caught error's message is misleading", () => {
  const checks: (() => DecodeError | null)[] = [
    () => rawProblem('{"a":1,}', "$.params", true),
    () => rawProblem("42", "$.params", true),
    () => rawProblem("[".repeat(200), "$.result", false),
    () => outgoingProblem(v1.SURFACE, "PromptRequest", '{"sessionId":"s","prompt":[{"type":"video"}]}', "$.params"),
    () => outgoingProblem(v1.SURFACE, "PromptRequest", '{"sessionId":"s","prompt":[{"type":"text"}]}', "$.params"),
    () => outgoingProblem(v1.SURFACE, "CancelNotification", '{"sessionId":"s', "$.params"),
    () => caught(() => encodeChecked(v1.SURFACE, "PromptRequest", { sessionId: "s", prompt: [{ type: "text", text: 5 }] }, "$.params", fail)),
    () => caught(() => encodeChecked(v1.SURFACE, "PromptRequest", { sessionId: "s" }, "$.params", fail)),
    () => caught(() => encodeChecked(v1.SURFACE, "NewSessionResponse", undefined, "$.result", fail)),
    () => caught(() => checkExtName("nounderscore")),
  ];
  const clean = checks.map((check) => check());
  const [misledOnes] = misled(() => checks.map((check) => check()));
  for (const [i, e] of clean.entries()) {
    assert.ok(e !== null, `check ${i} finds a failure`);
    assert.ok(DECODE_ERROR_KINDS.includes(e.kind));
    assert.equal(e.message, `${e.detail} at ${e.path}`);
    const other = misledOnes[i];
    assert.ok(other !== null && other !== undefined);
    assert.deepEqual(parts(other), parts(e), `check ${i}`);
  }
});

function fail(problem: DecodeError): Error {
  return new Holder(problem);
}

class Holder extends Error {
  constructor(readonly problem: DecodeError) {
    super("refused");
  }
}

function caught(run: () => unknown): DecodeError {
  try {
    run();
  } catch (err) {
    if (ordinaryHasInstance.call(Holder, err)) return (err as Holder).problem;
    if (ordinaryHasInstance.call(Error, err) && "error" in (err as object)) return (err as { error: DecodeError }).error;
    throw err;
  }
  assert.fail("no failure");
}

test("the misleading text reaches a catch site that reads it (the test can fail)", () => {
  // What the lenient helpers and the surface's decode once did: check the class, then
  // fold the message into another error's text.
  const foldMessage = (run: () => unknown): string => {
    try {
      run();
    } catch (err) {
      if (err instanceof JsonSyntaxError || err instanceof DecodeError) return `dropped invalid value: ${err.message}`;
      throw err;
    }
    return "";
  };
  const reads = [() => parse('{"a":1,}'), () => v1.SURFACE.decode("CancelNotification", new RawJson("{}"), "$.params")];
  for (const run of reads) {
    const clean = foldMessage(run);
    const [other] = misled(() => foldMessage(run));
    assert.notEqual(other, clean);
    assert.equal(other, `dropped invalid value: ${LIE}`);
  }
});
