"""Write the A2A 0.3 <-> 1.0 tables (`a2a_v03.Tables`) as the Python SDK's
`agentproto/a2a/generated/v03.py`, the tables `agentproto.a2a.compat_v03` walks (the same
tables the Rust and TypeScript writers emit from the same reader).

Plain tuples, so the runtime needs no classes of its own:

* a rule is `(op, a, b, x)`: `a` the 0.3 member, `b` the 1.0 member (or `Const`'s value),
  `x` a shape's name (`Field`, `List`, `Map`, `Flatten`), an inline `("value", fn)` shape
  (`Field` converted by a hand-written function), an enum table (`Enum`) or a members
  function (`Members`);
* a shape is `("object", rules)`, `("union", tag, ((1.0 member, 0.3 tag, shape), ...))`,
  `("wrapped", field, item shape)`, `("empty",)`, `("no_params",)` or `("value", fn)`.
"""

from __future__ import annotations

from .a2a_v03 import Rule, Shape, Tables
from .emit import python_str, table_header

OUT = "python/src/agentproto/a2a/generated/v03.py"


def rule(r: Rule) -> str:
    names = [python_str(n) for n in r.names] + ['""', '""']
    a, b = names[0], names[1]
    if r.op in ("Copy", "CopyRequired"):
        return f'("{r.op}", {a}, "", "")'
    if r.op in ("Rename", "Not", "Const"):
        return f'("{r.op}", {a}, {b}, "")'
    if r.op == "Field" and r.value:
        return f'("Field", {a}, {b}, ("value", {python_str(r.value)}))'
    if r.op in ("Field", "List", "Map"):
        return f'("{r.op}", {a}, {b}, {python_str(r.shape or "")})'
    if r.op == "Flatten":
        return f'("Flatten", {a}, "", {python_str(r.shape or "")})'
    if r.op == "Enum":
        return f'("Enum", {a}, {b}, {python_str(r.enum or "")})'
    if r.op == "Members":
        return f'("Members", "", "", {python_str(r.fn or "")})'
    raise AssertionError(r.op)


def shape(s: Shape) -> str:
    if s.kind == "object":
        return '("object", (' + "".join(rule(r) + ", " for r in s.rules) + "))"
    if s.kind == "union":
        variants = "".join(f"({python_str(v.v1_member)}, {python_str(v.tag)}, {python_str(v.shape)}), " for v in s.variants)
        return f'("union", {python_str(s.tag)}, ({variants}))'
    if s.kind == "wrapped":
        return f'("wrapped", {python_str(s.wrapped)}, {python_str(s.item)})'
    if s.kind in ("empty", "no_params"):
        return f'("{s.kind}",)'
    return f'("value", {python_str(s.custom)})'


def python(t: Tables) -> str:
    lines = [
        *table_header(t.sources[0], "#"),
        *(f"# and {f} sha256 {h}." for f, h in t.sources[1:]),
        '"""The A2A 0.3 <-> 1.0 shapes and the 0.3 JSON-RPC methods, as tables walked by',
        "`agentproto.a2a.compat_v03` (rules and shapes as tuples: see",
        "`codegen/agentproto_codegen/python_a2a_v03.py`). The hand-written conversions they name",
        '(`VALUE_FNS`, `MEMBERS_FNS`) are in `agentproto.a2a.compat_v03_custom`."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Final",
        "",
        '__all__ = ["ENUMS", "MEMBERS_FNS", "METHODS", "SHAPES", "VALUE_FNS"]',
        "",
        f"VALUE_FNS: Final = {tuple(t.value_fns)!r}",
        '"""The hand-written conversions of whole values."""',
        f"MEMBERS_FNS: Final = {tuple(t.members_fns)!r}",
        '"""The hand-written conversions that add members."""',
        "",
        "ENUMS: Final[dict[str, tuple[tuple[str, str, int], ...]]] = {",
        "    # name: ((0.3 value, 1.0 name, 1.0 number), ...)",
    ]
    for name, e in t.enums.items():
        rows = "".join(f"({python_str(a)}, {python_str(b)}, {n}), " for a, b, n in e.rows)
        lines.append(f"    {python_str(name)}: ({rows}),")
    lines += ["}", "", "SHAPES: Final[dict[str, Any]] = {"]
    for name, s in t.shapes.items():
        what = "no params" if s.v03 == "" else s.v03
        lines.append(f"    # 0.3 {what} <-> 1.0 {s.v1}")
        lines.append(f"    {python_str(name)}: {shape(s)},")
    lines += [
        "}",
        "",
        "METHODS: Final[dict[str, tuple[str, str, str]]] = {",
        "    # 0.3 method: (1.0 operation, params shape, result shape); 1.0 operations without a",
        "    # 0.3 method (ListTasks) are absent",
    ]
    for m in t.methods:
        lines.append(f"    {python_str(m.name)}: ({python_str(m.operation)}, {python_str(m.params)}, {python_str(m.result)}),")
    lines += ["}", ""]
    return "\n".join(lines)
