"""Write the A2A 0.3 <-> 1.0 tables (`a2a_v03.Tables`) as the TypeScript SDK's
`ts/src/generated/a2a/v03.ts`, the tables `ts/src/a2a/compat/v03.ts` walks (the same
tables the Rust writer `rust_a2a_v03.py` emits from the same reader)."""

from __future__ import annotations

import json

from .a2a_v03 import Rule, Shape, Tables
from .emit import table_header

TS_OUT = "ts/src/generated/a2a/v03.ts"


def ts_str(s: str) -> str:
    return json.dumps(s)


def ts_rule(r: Rule) -> str:
    names = [ts_str(n) for n in r.names]
    if r.op in ("Copy", "CopyRequired"):
        return f'{{ op: "{r.op}", a: {names[0]} }}'
    if r.op in ("Rename", "Not", "Const"):
        return f'{{ op: "{r.op}", a: {names[0]}, b: {names[1]} }}'
    if r.op == "Field" and r.value:
        return f'{{ op: "Field", a: {names[0]}, b: {names[1]}, shape: {{ kind: "value", fn: {ts_str(r.value)} }} }}'
    if r.op in ("Field", "List", "Map"):
        return f'{{ op: "{r.op}", a: {names[0]}, b: {names[1]}, shape: {ts_str(r.shape or "")} }}'
    if r.op == "Flatten":
        return f'{{ op: "Flatten", a: {names[0]}, shape: {ts_str(r.shape or "")} }}'
    if r.op == "Enum":
        return f'{{ op: "Enum", a: {names[0]}, b: {names[1]}, table: {ts_str(r.enum or "")} }}'
    if r.op == "Members":
        return f'{{ op: "Members", fn: {ts_str(r.fn or "")} }}'
    raise AssertionError(r.op)


def ts_shape(s: Shape) -> str:
    if s.kind == "object":
        return '{ kind: "object", rules: [' + ", ".join(ts_rule(r) for r in s.rules) + "] }"
    if s.kind == "union":
        variants = ", ".join(f"[{ts_str(v.v1_member)}, {ts_str(v.tag)}, {ts_str(v.shape)}]" for v in s.variants)
        return f'{{ kind: "union", tag: {ts_str(s.tag)}, variants: [{variants}] }}'
    if s.kind == "wrapped":
        return f'{{ kind: "wrapped", field: {ts_str(s.wrapped)}, item: {ts_str(s.item)} }}'
    if s.kind == "empty":
        return '{ kind: "empty" }'
    if s.kind == "no_params":
        return '{ kind: "no_params" }'
    return f'{{ kind: "value", fn: {ts_str(s.custom)} }}'


PREAMBLE = """\
/** The A2A 0.3 <-> 1.0 shapes and the 0.3 JSON-RPC methods, as tables walked by
 * `src/a2a/compat/v03.ts`. Shapes name each other (`ShapeName`); the hand-written
 * conversions they name (`ValueFn`, `MembersFn`) are in `src/a2a/compat/v03-custom.ts`. */

import type { OperationName } from "./v1.js";

/** One row of an enum table: the 0.3 string, the 1.0 name, the 1.0 number. */
export type EnumRow = readonly [v03: string, v1: string, number: number];

/** How one member of an object maps; `a` is the 0.3 name, `b` the 1.0 name. */
export type Rule =
  /** The same name and value in both versions. */
  | { readonly op: "Copy"; readonly a: string }
  /** Like `Copy`, but 0.3 requires the member: `""` is written when 1.0 leaves it out. */
  | { readonly op: "CopyRequired"; readonly a: string }
  /** Renamed, value unchanged. */
  | { readonly op: "Rename"; readonly a: string; readonly b: string }
  /** A value converted by a shape. */
  | { readonly op: "Field"; readonly a: string; readonly b: string; readonly shape: ShapeName | Shape }
  /** An array whose items are converted by a shape. */
  | { readonly op: "List"; readonly a: string; readonly b: string; readonly shape: ShapeName }
  /** An object whose values are converted by a shape (keys kept). */
  | { readonly op: "Map"; readonly a: string; readonly b: string; readonly shape: ShapeName }
  /** An enum string mapped through a table. */
  | { readonly op: "Enum"; readonly a: string; readonly b: string; readonly table: EnumName }
  /** A 0.3 discriminator (`kind`, `type`) with the value `b`; 1.0 has none. */
  | { readonly op: "Const"; readonly a: string; readonly b: string }
  /** A boolean whose meaning is negated (`blocking` <-> `returnImmediately`). */
  | { readonly op: "Not"; readonly a: string; readonly b: string }
  /** A 0.3 member holding an object whose members sit directly in the 1.0 object. */
  | { readonly op: "Flatten"; readonly a: string; readonly shape: ShapeName }
  /** A hand-written conversion reading the source object and adding to the target. */
  | { readonly op: "Members"; readonly fn: MembersFn };

/** How one value maps. */
export type Shape =
  /** An object, member by member; members no rule names are dropped. */
  | { readonly kind: "object"; readonly rules: readonly Rule[] }
  /** A 1.0 `oneof` written `{member: value}` that 0.3 writes as the bare value with a tag
   * member; variants are `[1.0 member, 0.3 tag value, shape]`. */
  | { readonly kind: "union"; readonly tag: string; readonly variants: ReadonlyArray<readonly [string, string, ShapeName]> }
  /** A 1.0 object `{field: [items]}` that 0.3 writes as the bare array. */
  | { readonly kind: "wrapped"; readonly field: string; readonly item: ShapeName }
  /** A 1.0 empty message (`{}`) that 0.3 writes as `null`. */
  | { readonly kind: "empty" }
  /** A 1.0 request (`{}` here) for which 0.3 sends no params. */
  | { readonly kind: "no_params" }
  /** A hand-written conversion of the whole value. */
  | { readonly kind: "value"; readonly fn: ValueFn };

/** A 0.3 JSON-RPC method: its name, the 1.0 operation it is, and how its params and
 * results map. */
export interface Method {
  readonly name: string;
  readonly operation: OperationName;
  readonly params: ShapeName;
  readonly result: ShapeName;
}
"""


def union(names: list[str]) -> str:
    return " | ".join(ts_str(n) for n in names) or "never"


def typescript(t: Tables) -> str:
    lines = [
        *table_header(t.sources[0], "//"),
        *(f"// and {f} sha256 {h}." for f, h in t.sources[1:]),
        PREAMBLE,
        "/** The hand-written conversions of whole values (`value`/`custom` in the rules). */",
        f"export type ValueFn = {union(t.value_fns)};",
        "",
        "/** The hand-written conversions that add members (`members` in the rules). */",
        f"export type MembersFn = {union(t.members_fns)};",
        "",
        "/** The enum tables' names. */",
        f"export type EnumName = {union(list(t.enums))};",
        "",
        "/** The shapes' names. */",
        f"export type ShapeName = {union(list(t.shapes))};",
        "",
        "/** 0.3 <-> 1.0 enums. */",
        "export const ENUMS: { readonly [K in EnumName]: readonly EnumRow[] } = {",
    ]
    for name, e in t.enums.items():
        rows = ", ".join(f"[{ts_str(a)}, {ts_str(b)}, {n}]" for a, b, n in e.rows)
        lines.append(f"  /** 0.3 <-> 1.0 `{e.name}`. */")
        lines.append(f"  {name}: [{rows}],")
    lines += ["};", "", "/** Every shape by its name. */", "export const SHAPES: { readonly [K in ShapeName]: Shape } = {"]
    for name, s in t.shapes.items():
        what = "no params" if s.v03 == "" else f"`{s.v03}`"
        lines.append(f"  /** 0.3 {what} <-> 1.0 `{s.v1}`. */")
        lines.append(f"  {name}: {ts_shape(s)},")
    lines += [
        "};",
        "",
        "/** Every 0.3 JSON-RPC method (1.0's operations without one, such as ListTasks, are absent). */",
        "export const METHODS: readonly Method[] = [",
    ]
    for m in t.methods:
        lines.append(
            f"  {{ name: {ts_str(m.name)}, operation: {ts_str(m.operation)}, "
            f"params: {ts_str(m.params)}, result: {ts_str(m.result)} }},"
        )
    lines += ["];", ""]
    return "\n".join(lines)
