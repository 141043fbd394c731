/**
 * A2A 0.3 <-> 1.0: the conversion engine. A shape says how one JSON value looks in 0.3
 * and in 1.0, and the same description is walked either way. The shapes are generated
 * tables (`../../generated/a2a/v03.ts`, from the pinned 0.3 schema, the 1.0 proto and
 * `rules/a2a.toml [v03]`, the tables the Rust SDK walks too); where the two versions
 * differ in structure (parts, push authentication schemes, the card's interfaces, …) the
 * tables name the hand-written functions of `v03-custom.ts`.
 *
 * Every conversion is JSON in, JSON out. Bad input is an InvalidParams `A2aError` whose
 * message and `path` name the JSON path of the offending value. What 1.0 cannot say is
 * dropped on the way up (0.3 `final`, all but the first push authentication scheme), and
 * what 0.3 cannot say on the way down (`tenant`, `mediaType` and `filename` on text and
 * data parts). An absent `blocking` stays absent; a present one becomes
 * `returnImmediately: !blocking`.
 */

import { A2aError } from "../errors.js";
import { ENUMS, METHODS, SHAPES, type EnumRow, type Method, type Rule, type Shape, type ShapeName } from "../../generated/a2a/v03.js";
import type { OperationName } from "../../generated/a2a/v1.js";
import { customMembers, customValue, FINAL_STATES } from "./v03-custom.js";

export type { Method } from "../../generated/a2a/v03.js";

/** A JSON value as `JSON.parse` gives it. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [member: string]: Json;
}

/** Which way a conversion goes: `v1` from the 0.3 shapes to 1.0 ProtoJSON, `v03` back. */
export type Direction = "v1" | "v03";

/** An InvalidParams error at `path`. */
export function bad(path: string, expected: string, found: Json | undefined): A2aError {
  const text = describe(found ?? null);
  return new A2aError("InvalidParams", `Invalid parameters at ${path}: expected ${expected}, found ${text}`).with("path", path).with("expected", expected).with("found", text);
}

function describe(v: Json): string {
  if (v === null) return "null";
  if (typeof v === "boolean" || typeof v === "number") return String(v);
  if (typeof v === "string") return [...v].length <= 40 ? JSON.stringify(v) : "a string";
  return Array.isArray(v) ? "an array" : "an object";
}

export function isObject(v: Json | undefined): v is JsonObject {
  return v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v);
}

export function object(v: Json | undefined, path: string): JsonObject {
  if (!isObject(v)) throw bad(path, "an object", v);
  return v;
}

export function string(v: Json | undefined, path: string): string {
  if (typeof v !== "string") throw bad(path, "a string", v);
  return v;
}

export function member(path: string, name: string): string {
  return `${path}.${name}`;
}

/** A member that is present and not `null`. */
export function get(m: JsonObject, name: string): Json | undefined {
  const v = Object.hasOwn(m, name) ? m[name] : undefined;
  return v === null ? undefined : v;
}

function resolve(shape: ShapeName | Shape): Shape {
  return typeof shape === "string" ? SHAPES[shape] : shape;
}

/** Converts `value` (found at `path`) by `shape`. */
export function convert(shape: ShapeName | Shape, dir: Direction, value: Json, path: string): Json {
  const s = resolve(shape);
  switch (s.kind) {
    case "object": {
      const src = object(value, path);
      const out: JsonObject = {};
      for (const rule of s.rules) apply(rule, dir, src, out, path);
      return out;
    }
    case "union":
      return union(s.tag, s.variants, dir, value, path);
    case "wrapped": {
      if (dir === "v1") {
        if (!Array.isArray(value)) throw bad(path, "an array", value);
        return { [s.field]: list(s.item, dir, value, path) };
      }
      const src = object(value, path);
      const items = get(src, s.field);
      if (items === undefined) return [];
      const p = member(path, s.field);
      if (!Array.isArray(items)) throw bad(p, "an array", items);
      return list(s.item, dir, items, p);
    }
    case "empty":
      return dir === "v1" ? {} : null;
    case "no_params":
      // 0.3 sends no params (whatever is there is ignored); the 1.0 request is empty.
      return {};
    case "value":
      return customValue(s.fn, dir, value, path);
  }
}

function list(shape: ShapeName, dir: Direction, items: Json[], path: string): Json[] {
  return items.map((v, i) => convert(shape, dir, v, `${path}[${i}]`));
}

function union(tag: string, variants: ReadonlyArray<readonly [string, string, ShapeName]>, dir: Direction, value: Json, path: string): Json {
  const src = object(value, path);
  const tags = `one of ${variants.map(([, t]) => JSON.stringify(t)).join(", ")}`;
  if (dir === "v1") {
    const p = member(path, tag);
    const t = get(src, tag);
    if (t === undefined) throw bad(p, tags, null);
    const found = variants.find(([, k]) => k === string(t, p));
    if (found === undefined) throw bad(p, tags, t);
    return { [found[0]]: convert(found[2], dir, value, path) };
  }
  const present = variants.filter(([m]) => get(src, m) !== undefined);
  const only = present[0];
  if (only === undefined || present.length > 1) throw bad(path, `exactly one of ${variants.map(([m]) => m).join(", ")}`, value);
  const [m, t, shape] = only;
  const p = member(path, m);
  const inner = convert(shape, dir, src[m] as Json, p);
  if (!isObject(inner)) throw bad(p, "an object", inner);
  inner[tag] = t;
  return inner;
}

/** Looks a value up in an enum table, in the direction's source column; 1.0 values may
 * also be numbers, as ProtoJSON allows. */
export function enumValue(table: readonly EnumRow[], dir: Direction, v: Json, path: string): Json {
  const row = dir === "v1" ? table.find((r) => r[0] === v) : table.find((r) => r[1] === v || (typeof v === "number" && r[2] === v));
  if (row !== undefined) return dir === "v1" ? row[1] : row[0];
  throw bad(path, `one of ${table.map((r) => JSON.stringify(dir === "v1" ? r[0] : r[1])).join(", ")}`, v);
}

function names(dir: Direction, v03: string, v1: string): [string, string] {
  return dir === "v1" ? [v03, v1] : [v1, v03];
}

function apply(rule: Rule, dir: Direction, src: JsonObject, out: JsonObject, path: string): void {
  switch (rule.op) {
    case "Copy": {
      const v = get(src, rule.a);
      if (v !== undefined) out[rule.a] = v;
      return;
    }
    case "CopyRequired": {
      const v = get(src, rule.a);
      if (v !== undefined) out[rule.a] = v;
      else if (dir === "v03") out[rule.a] = "";
      return;
    }
    case "Rename": {
      const [from, to] = names(dir, rule.a, rule.b);
      const v = get(src, from);
      if (v !== undefined) out[to] = v;
      return;
    }
    case "Field": {
      const [from, to] = names(dir, rule.a, rule.b);
      const v = get(src, from);
      if (v !== undefined) out[to] = convert(rule.shape, dir, v, member(path, from));
      return;
    }
    case "List": {
      const [from, to] = names(dir, rule.a, rule.b);
      const v = get(src, from);
      if (v === undefined) return;
      const p = member(path, from);
      if (!Array.isArray(v)) throw bad(p, "an array", v);
      out[to] = list(rule.shape, dir, v, p);
      return;
    }
    case "Map": {
      const [from, to] = names(dir, rule.a, rule.b);
      const v = get(src, from);
      if (v === undefined) return;
      const p = member(path, from);
      const m: JsonObject = {};
      for (const [k, item] of Object.entries(object(v, p))) m[k] = convert(rule.shape, dir, item, member(p, k));
      out[to] = m;
      return;
    }
    case "Enum": {
      const [from, to] = names(dir, rule.a, rule.b);
      const v = get(src, from);
      if (v !== undefined) out[to] = enumValue(ENUMS[rule.table], dir, v, member(path, from));
      return;
    }
    case "Const": {
      if (dir === "v03") {
        out[rule.a] = rule.b;
        return;
      }
      const v = get(src, rule.a);
      if (v !== undefined && v !== rule.b) throw bad(member(path, rule.a), JSON.stringify(rule.b), v);
      return;
    }
    case "Not": {
      const [from, to] = names(dir, rule.a, rule.b);
      const v = get(src, from);
      if (v === undefined) return;
      if (typeof v !== "boolean") throw bad(member(path, from), "a boolean", v);
      out[to] = !v;
      return;
    }
    case "Flatten": {
      if (dir === "v1") {
        const v = get(src, rule.a);
        if (v === undefined) return;
        const inner = convert(rule.shape, dir, v, member(path, rule.a));
        if (isObject(inner)) Object.assign(out, inner);
        return;
      }
      out[rule.a] = convert(rule.shape, dir, src, path);
      return;
    }
    case "Members":
      customMembers(rule.fn, dir, src, out, path);
      return;
  }
}

/** The 0.3 method with this name. */
export function v03Method(name: string): Method | undefined {
  return METHODS.find((m) => m.name === name);
}

/** The 0.3 method of a 1.0 operation (`undefined` for ListTasks). */
export function v03MethodFor(operation: OperationName): Method | undefined {
  return METHODS.find((m) => m.operation === operation);
}

/** 0.3 params → 1.0 request (paths start at `$.params`; absent params are `null`). */
export function paramsToV1(method: Method, params: Json): Json {
  return convert(method.params, "v1", params, "$.params");
}

/** 1.0 request → 0.3 params. */
export function paramsToV03(method: Method, params: Json): Json {
  return convert(method.params, "v03", params, "$.params");
}

/** 1.0 answer → 0.3 result; for the streaming methods, one event. */
export function resultToV03(method: Method, result: Json): Json {
  return convert(method.result, "v03", result, "$.result");
}

/** 0.3 result → 1.0 answer; for the streaming methods, one event. */
export function resultToV1(method: Method, result: Json): Json {
  return convert(method.result, "v1", result, "$.result");
}

/** A 0.3 value of a named shape as 1.0 ProtoJSON, and back. */
export function toV1(shape: ShapeName, value: Json): Json {
  return convert(shape, "v1", value, "$");
}

export function toV03(shape: ShapeName, value: Json): Json {
  return convert(shape, "v03", value, "$");
}

/** Whether a 0.3 stream event closes the stream: a status update whose `final` is true,
 * or whose state is terminal or interrupted. */
export function isFinalEvent(event: Json): boolean {
  if (!isObject(event) || event["kind"] !== "status-update") return false;
  if (event["final"] === true) return true;
  const status = event["status"];
  return isObject(status) && typeof status["state"] === "string" && FINAL_STATES.includes(status["state"]);
}
