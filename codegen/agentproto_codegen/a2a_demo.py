"""The demo A2A agent as data: `rules/a2a-demo.toml` (its card, and an ordered list of
steps per messageId prefix) read into a `Demo`, checked, and written as a table into
each language. Each language's demo module interprets the table over its own executor
API; the step language is documented at the top of the rules file.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .emit import python_str, rust_str, table_header, ts_str

RULES = "rules/a2a-demo.toml"
RUST_OUT = "crates/a2a/src/generated/demo.rs"
PYTHON_OUT = "python/src/agentproto/a2a/generated/demo.py"
TS_OUT = "ts/src/generated/a2a/demo.ts"

# op -> (the fields it takes, the fields it requires)
OPS: dict[str, tuple[set[str], set[str]]] = {
    "working": (set(), set()),
    "wait": ({"delays"}, {"delays"}),
    "artifact": ({"parts"}, {"parts"}),
    "chunks": ({"parts"}, {"parts"}),
    "complete": ({"text"}, set()),
    "reject": ({"text"}, {"text"}),
    "input_required": ({"text"}, {"text"}),
    "reply": ({"text"}, {"text"}),
    "ticks": (set(), set()),
    "echo": (set(), set()),
}
PART_KINDS = ("text", "raw", "url", "data")
CARD_FIELDS = {"name", "description", "streaming", "push_notifications", "input_modes", "output_modes", "skill"}
SKILL_FIELDS = {"id", "name", "description", "tags", "examples"}


@dataclass(frozen=True)
class DemoPart:
    kind: str  # one of PART_KINDS
    value: str  # the text, the bytes as UTF-8, the URL, or the data as compact JSON
    media_type: str | None
    filename: str | None


@dataclass(frozen=True)
class Step:
    op: str
    text: str | None
    delays: int
    parts: tuple[DemoPart, ...]


@dataclass(frozen=True)
class Demo:
    card: dict[str, Any]
    max_ticks: int
    scenarios: list[tuple[str, tuple[Step, ...]]]  # longest prefix first
    fallback: tuple[Step, ...]
    source: tuple[str, str]  # (file, sha256)


def read(root: Path) -> Demo:
    return parse((root / RULES).read_bytes())


def parse(data: bytes) -> Demo:
    table = tomllib.loads(data.decode("utf-8"))
    if table.get("format") != 1:
        raise ValueError(f"{RULES}: format {table.get('format')!r}, this reader knows 1")
    card = table.get("card", {})
    if set(card) != CARD_FIELDS or set(card["skill"]) != SKILL_FIELDS:
        raise ValueError(f"{RULES} [card]: expected the fields {sorted(CARD_FIELDS)}, skill {sorted(SKILL_FIELDS)}")
    scenarios: list[tuple[str, tuple[Step, ...]]] = []
    for i, row in enumerate(table.get("scenarios", [])):
        prefix = row.get("prefix", "")
        if not prefix or any(p == prefix for p, _ in scenarios):
            raise ValueError(f"{RULES} scenarios[{i}]: prefix {prefix!r} is empty or given twice")
        scenarios.append((prefix, _steps(row.get("steps", []), f"scenarios[{i}]")))
    # Longest first, so that a prefix never shadows a longer one (stable otherwise).
    scenarios.sort(key=lambda s: -len(s[0]))
    max_ticks = table.get("max_ticks")
    if not isinstance(max_ticks, int) or max_ticks < 1:
        raise ValueError(f"{RULES}: max_ticks must be a positive integer")
    fallback = _steps(table.get("fallback", {}).get("steps", []), "fallback")
    return Demo(card, max_ticks, scenarios, fallback, (RULES, hashlib.sha256(data).hexdigest()))


def _steps(rows: list[dict[str, Any]], where: str) -> tuple[Step, ...]:
    if not rows:
        raise ValueError(f"{RULES} {where}: no steps")
    steps = []
    for i, row in enumerate(rows):
        op = row.get("op")
        if op not in OPS:
            raise ValueError(f"{RULES} {where}.steps[{i}]: unknown op {op!r}")
        takes, needs = OPS[op]
        fields = set(row) - {"op"}
        if not fields <= takes or not needs <= fields:
            raise ValueError(f"{RULES} {where}.steps[{i}] ({op}): takes {sorted(takes)}, needs {sorted(needs)}")
        delays = row.get("delays", 0)
        if not isinstance(delays, int) or delays < 0:
            raise ValueError(f"{RULES} {where}.steps[{i}]: delays must be a whole number")
        parts = tuple(_part(p, f"{where}.steps[{i}].parts[{j}]") for j, p in enumerate(row.get("parts", [])))
        if "parts" in takes and not parts:
            raise ValueError(f"{RULES} {where}.steps[{i}]: no parts")
        if op == "chunks" and any(p.kind != "text" for p in parts):
            raise ValueError(f"{RULES} {where}.steps[{i}]: chunks are text parts")
        steps.append(Step(op, row.get("text"), delays, parts))
    return tuple(steps)


def _part(row: dict[str, Any], where: str) -> DemoPart:
    kinds = [k for k in PART_KINDS if k in row]
    if len(kinds) != 1 or not set(row) <= set(PART_KINDS) | {"media_type", "filename"}:
        raise ValueError(f"{RULES} {where}: a part holds exactly one of {PART_KINDS} (and media_type, filename)")
    kind = kinds[0]
    value = json.dumps(row[kind], separators=(",", ":")) if kind == "data" else row[kind]
    if kind == "data" and not isinstance(row[kind], dict):
        raise ValueError(f"{RULES} {where}: data is a JSON object")
    return DemoPart(kind, value, row.get("media_type"), row.get("filename"))


def _camel(op: str) -> str:
    return "".join(w.capitalize() for w in op.split("_"))


# ---------------------------------------------------------------------------
# Rust


def _rust_opt(s: str | None) -> str:
    return "None" if s is None else f"Some({rust_str(s)})"


def _rust_steps(steps: tuple[Step, ...]) -> str:
    out = []
    for s in steps:
        parts = ", ".join(
            f"DemoPart {{ kind: PartKind::{_camel(p.kind)}, value: {rust_str(p.value)}, "
            f"media_type: {_rust_opt(p.media_type)}, filename: {_rust_opt(p.filename)} }}"
            for p in s.parts
        )
        out.append(f"Step {{ op: Op::{_camel(s.op)}, text: {_rust_opt(s.text)}, delays: {s.delays}, parts: &[{parts}] }}")
    return "&[" + ", ".join(out) + "]"


def rust(demo: Demo) -> str:
    c, k = demo.card, demo.card["skill"]
    lines = table_header(demo.source, "//")
    lines += [
        "//! The demo agent's card and scenarios, generated from `rules/a2a-demo.toml` (whose",
        "//! header documents the steps); `crate::demo` interprets them.",
        "",
        "/// What a step does.",
        "#[derive(Debug, Clone, Copy, PartialEq, Eq)]",
        "pub enum Op {",
    ]
    lines += [f"    /// `{op}`.\n    {_camel(op)}," for op in OPS]
    lines += [
        "}",
        "",
        "/// What a part holds.",
        "#[derive(Debug, Clone, Copy, PartialEq, Eq)]",
        "pub enum PartKind {",
    ]
    lines += [f"    /// `{kind}`.\n    {_camel(kind)}," for kind in PART_KINDS]
    lines += [
        "}",
        "",
        "/// One part of an artifact: its value is the text, the bytes as UTF-8, the URL or the",
        "/// data as JSON.",
        "#[derive(Debug, Clone, Copy)]",
        "pub struct DemoPart {",
        "    /// What the part holds.",
        "    pub kind: PartKind,",
        "    /// The value.",
        "    pub value: &'static str,",
        "    /// The media type, when given.",
        "    pub media_type: Option<&'static str>,",
        "    /// The file name, when given.",
        "    pub filename: Option<&'static str>,",
        "}",
        "",
        "/// One step of a scenario.",
        "#[derive(Debug, Clone, Copy)]",
        "pub struct Step {",
        "    /// What it does.",
        "    pub op: Op,",
        "    /// The status or reply text, when given.",
        "    pub text: Option<&'static str>,",
        "    /// How many of the agent's delays a `wait` lasts.",
        "    pub delays: u32,",
        "    /// The parts of an `artifact`, or the pieces of `chunks`.",
        "    pub parts: &'static [DemoPart],",
        "}",
        "",
        "/// The most ticks an `agentproto-ticks` turn writes.",
        f"pub const MAX_TICKS: u64 = {demo.max_ticks};",
        "",
        "/// The scenarios by messageId prefix, longest prefix first.",
        "pub const SCENARIOS: &[(&str, &[Step])] = &[",
    ]
    lines += [f"    ({rust_str(p)}, {_rust_steps(s)})," for p, s in demo.scenarios]
    lines += [
        "];",
        "",
        "/// What a message no prefix matches runs.",
        f"pub const FALLBACK: &[Step] = {_rust_steps(demo.fallback)};",
        "",
        "/// The card's name.",
        f"pub const CARD_NAME: &str = {rust_str(c['name'])};",
        "/// The card's description.",
        f"pub const CARD_DESCRIPTION: &str = {rust_str(c['description'])};",
        "/// Whether the card declares streaming.",
        f"pub const CARD_STREAMING: bool = {str(c['streaming']).lower()};",
        "/// Whether the card declares push notifications.",
        f"pub const CARD_PUSH_NOTIFICATIONS: bool = {str(c['push_notifications']).lower()};",
        "/// The card's default input modes.",
        f"pub const CARD_INPUT_MODES: &[&str] = &[{', '.join(rust_str(m) for m in c['input_modes'])}];",
        "/// The card's default output modes.",
        f"pub const CARD_OUTPUT_MODES: &[&str] = &[{', '.join(rust_str(m) for m in c['output_modes'])}];",
        "/// The skill's id, name and description.",
        f"pub const SKILL: (&str, &str, &str) = ({rust_str(k['id'])}, {rust_str(k['name'])}, {rust_str(k['description'])});",
        "/// The skill's tags.",
        f"pub const SKILL_TAGS: &[&str] = &[{', '.join(rust_str(t) for t in k['tags'])}];",
        "/// The skill's examples.",
        f"pub const SKILL_EXAMPLES: &[&str] = &[{', '.join(rust_str(t) for t in k['examples'])}];",
        "",
    ]
    # The crate's demo module is the only reader.
    return "\n".join(re.sub(r"^(\s*)pub ", r"\1pub(crate) ", line) for line in lines)


# ---------------------------------------------------------------------------
# Python


def _py_opt(s: str | None) -> str:
    return "None" if s is None else python_str(s)


def _py_steps(steps: tuple[Step, ...], indent: str) -> list[str]:
    out = [f"{indent}("]
    for s in steps:
        parts = "".join(
            f"DemoPart({python_str(p.kind)}, {python_str(p.value)}, {_py_opt(p.media_type)}, {_py_opt(p.filename)}), "
            for p in s.parts
        )
        out.append(f"{indent}    Step({python_str(s.op)}, {_py_opt(s.text)}, {s.delays}, ({parts.rstrip(' ')})),")
    out.append(f"{indent})")
    return out


def _py_list(xs: list[str]) -> str:
    return "(" + "".join(f"{python_str(x)}, " for x in xs).rstrip(" ") + ")"


def python(demo: Demo) -> str:
    c, k = demo.card, demo.card["skill"]
    lines = table_header(demo.source, "#")
    lines += [
        '"""The demo agent\'s card and scenarios, generated from `rules/a2a-demo.toml` (whose',
        'header documents the steps); `agentproto.a2a.demo` interprets them."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import NamedTuple",
        "",
        "",
        "class DemoPart(NamedTuple):",
        '    """One part of an artifact: `value` is the text, the bytes as UTF-8, the URL or the',
        '    data as JSON, by `kind` (`text`, `raw`, `url`, `data`)."""',
        "",
        "    kind: str",
        "    value: str",
        "    media_type: str | None",
        "    filename: str | None",
        "",
        "",
        "class Step(NamedTuple):",
        '    """One step of a scenario: `op`, its status or reply `text`, how many delays a',
        '    `wait` lasts, the parts of an `artifact` or the pieces of `chunks`."""',
        "",
        "    op: str",
        "    text: str | None",
        "    delays: int",
        "    parts: tuple[DemoPart, ...]",
        "",
        "",
        f"MAX_TICKS = {demo.max_ticks}",
        '"""The most ticks an `agentproto-ticks` turn writes."""',
        "",
        "SCENARIOS: tuple[tuple[str, tuple[Step, ...]], ...] = (",
    ]
    for p, s in demo.scenarios:
        lines.append("    (")
        lines.append(f"        {python_str(p)},")
        steps = _py_steps(s, "        ")
        steps[-1] += ","
        lines += steps
        lines.append("    ),")
    lines += [")", '"""The scenarios by messageId prefix, longest prefix first."""', ""]
    fallback = _py_steps(demo.fallback, "")
    lines += [f"FALLBACK: tuple[Step, ...] = {fallback[0]}", *fallback[1:]]
    lines += [
        '"""What a message no prefix matches runs."""',
        "",
        f"CARD_NAME = {python_str(c['name'])}",
        f"CARD_DESCRIPTION = {python_str(c['description'])}",
        f"CARD_STREAMING = {c['streaming']}",
        f"CARD_PUSH_NOTIFICATIONS = {c['push_notifications']}",
        f"CARD_INPUT_MODES = {_py_list(c['input_modes'])}",
        f"CARD_OUTPUT_MODES = {_py_list(c['output_modes'])}",
        f"SKILL = ({python_str(k['id'])}, {python_str(k['name'])}, {python_str(k['description'])})",
        f"SKILL_TAGS = {_py_list(k['tags'])}",
        f"SKILL_EXAMPLES = {_py_list(k['examples'])}",
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# TypeScript


def _ts_steps(steps: tuple[Step, ...]) -> str:
    out = []
    for s in steps:
        fields = [f"op: {ts_str(s.op)}"]
        if s.text is not None:
            fields.append(f"text: {ts_str(s.text)}")
        if s.delays:
            fields.append(f"delays: {s.delays}")
        if s.parts:
            parts = []
            for p in s.parts:
                pf = [f"kind: {ts_str(p.kind)}", f"value: {ts_str(p.value)}"]
                if p.media_type is not None:
                    pf.append(f"mediaType: {ts_str(p.media_type)}")
                if p.filename is not None:
                    pf.append(f"filename: {ts_str(p.filename)}")
                parts.append("{ " + ", ".join(pf) + " }")
            fields.append(f"parts: [{', '.join(parts)}]")
        out.append("{ " + ", ".join(fields) + " }")
    return "[" + ", ".join(out) + "]"


def typescript(demo: Demo) -> str:
    c, k = demo.card, demo.card["skill"]
    ops = " | ".join(ts_str(op) for op in OPS)
    kinds = " | ".join(ts_str(kind) for kind in PART_KINDS)
    lines = table_header(demo.source, "//")
    lines += [
        "/** The demo agent's card and scenarios, generated from `rules/a2a-demo.toml` (whose",
        " * header documents the steps); `a2a/server/demo.ts` interprets them. */",
        "",
        "/** One part of an artifact: `value` is the text, the bytes as UTF-8, the URL or the data as JSON. */",
        "export interface DemoPart {",
        f"  readonly kind: {kinds};",
        "  readonly value: string;",
        "  readonly mediaType?: string;",
        "  readonly filename?: string;",
        "}",
        "",
        "/** One step of a scenario. */",
        "export interface Step {",
        f"  readonly op: {ops};",
        "  readonly text?: string;",
        "  readonly delays?: number;",
        "  readonly parts?: readonly DemoPart[];",
        "}",
        "",
        "/** The most ticks an `agentproto-ticks` turn writes. */",
        f"export const MAX_TICKS = {demo.max_ticks};",
        "",
        "/** The scenarios by messageId prefix, longest prefix first. */",
        "export const SCENARIOS: readonly (readonly [string, readonly Step[]])[] = [",
    ]
    lines += [f"  [{ts_str(p)}, {_ts_steps(s)}]," for p, s in demo.scenarios]
    lines += [
        "];",
        "",
        "/** What a message no prefix matches runs. */",
        f"export const FALLBACK: readonly Step[] = {_ts_steps(demo.fallback)};",
        "",
        "/** The card's fixed fields (its interfaces are the server's). */",
        "export const CARD = {",
        f"  name: {ts_str(c['name'])},",
        f"  description: {ts_str(c['description'])},",
        f"  streaming: {str(c['streaming']).lower()},",
        f"  pushNotifications: {str(c['push_notifications']).lower()},",
        f"  inputModes: [{', '.join(ts_str(m) for m in c['input_modes'])}],",
        f"  outputModes: [{', '.join(ts_str(m) for m in c['output_modes'])}],",
        "  skill: {",
        f"    id: {ts_str(k['id'])},",
        f"    name: {ts_str(k['name'])},",
        f"    description: {ts_str(k['description'])},",
        f"    tags: [{', '.join(ts_str(t) for t in k['tags'])}],",
        f"    examples: [{', '.join(ts_str(t) for t in k['examples'])}],",
        "  },",
        "} as const;",
        "",
    ]
    return "\n".join(lines)
