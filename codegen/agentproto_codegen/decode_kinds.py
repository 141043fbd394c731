"""The kinds of decode failure (`[[kinds]]` in rules/decode.toml), emitted as each
SDK's `DecodeErrorKind`: a Rust enum, a Python `enum.Enum` and a TypeScript union of
string literals. A kind's name is what a -32602 reply carries in `data.kind` and what
the vectors state; the phrases of each kind stay in the table as documentation of
their shape (the runtimes build them where the failure happens).
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .emit import python_str, rust_str, table_header, ts_str

RUST_OUT = "crates/codec/src/kind.rs"
PYTHON_OUT = "python/src/agentproto/codec/kind.py"
TS_OUT = "ts/src/codec/kind.ts"

_NAME = re.compile(r"[a-z]+(-[a-z]+)*")


@dataclass(frozen=True)
class Kind:
    name: str  # kebab-case, the stable name
    doc: str
    expected: str
    found: str

    @property
    def camel(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("-"))

    @property
    def upper(self) -> str:
        return self.name.replace("-", "_").upper()


class DecodeKindsError(Exception):
    pass


def read(path: Path) -> tuple[list[Kind], tuple[str, str]]:
    """The kinds of the table at `path`, checked, and its source (file, sha256)."""
    data = path.read_bytes()
    table = tomllib.loads(data.decode("utf-8"))
    if table.get("format") != 1:
        raise DecodeKindsError(f"{path.name}: format {table.get('format')!r}, this reader knows 1")
    kinds = []
    for i, row in enumerate(table.get("kinds", [])):
        name = row.get("name", "")
        if not _NAME.fullmatch(name):
            raise DecodeKindsError(f"{path.name} kinds[{i}]: name {name!r} is not kebab-case")
        if any(k.name == name for k in kinds):
            raise DecodeKindsError(f"{path.name} kinds[{i}]: {name!r} twice")
        kinds.append(Kind(name, row["doc"], row["expected"], row["found"]))
    if not kinds:
        raise DecodeKindsError(f"{path.name} has no [[kinds]]")
    return kinds, (f"rules/{path.name}", hashlib.sha256(data).hexdigest())


def _shape(k: Kind) -> str:
    return f"Expected: `{k.expected}`; found: `{k.found}`."


def rust(kinds: list[Kind], source: tuple[str, str]) -> str:
    lines = table_header(source, "//")
    lines += [
        "//! The kinds of decode failure, generated from `rules/decode.toml`.",
        "",
        "use std::fmt;",
        "",
        "/// What kind of failure a [`DecodeError`](crate::DecodeError) is; the name",
        "/// ([`DecodeErrorKind::as_str`]) is the same in every SDK.",
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]",
        "#[non_exhaustive]",
        "pub enum DecodeErrorKind {",
    ]
    for k in kinds:
        lines += [f"    /// {k.doc}", "    ///", f"    /// {_shape(k)}", f"    {k.camel},"]
    lines += [
        "}",
        "",
        "impl DecodeErrorKind {",
        "    /// Every kind, in the table's order.",
        "    pub const ALL: &'static [DecodeErrorKind] = &[" + ", ".join(f"Self::{k.camel}" for k in kinds) + "];",
        "",
        "    /// The kind's stable name (`data.kind` of a -32602 reply).",
        "    pub const fn as_str(self) -> &'static str {",
        "        match self {",
    ]
    lines += [f"            Self::{k.camel} => {rust_str(k.name)}," for k in kinds]
    lines += [
        "        }",
        "    }",
        "",
        "    /// The kind of a stable name.",
        "    pub fn from_name(name: &str) -> Option<Self> {",
        "        Self::ALL.iter().copied().find(|k| k.as_str() == name)",
        "    }",
        "}",
        "",
        "impl fmt::Display for DecodeErrorKind {",
        "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {",
        "        f.write_str(self.as_str())",
        "    }",
        "}",
        "",
    ]
    return "\n".join(lines)


def python(kinds: list[Kind], source: tuple[str, str]) -> str:
    lines = table_header(source, "#")
    lines += [
        '"""The kinds of decode failure, generated from `rules/decode.toml`."""',
        "",
        "from __future__ import annotations",
        "",
        "import enum",
        "",
        "",
        "class DecodeErrorKind(enum.Enum):",
        '    """What kind of failure a `DecodeError` is; the value is the same in every SDK."""',
        "",
    ]
    for k in kinds:
        doc = f"{k.doc} {_shape(k)}".replace('"', '\\"')
        lines += [f"    {k.upper} = {python_str(k.name)}", f'    """{doc}"""', ""]
    return "\n".join(lines).rstrip() + "\n"


def typescript(kinds: list[Kind], source: tuple[str, str]) -> str:
    lines = table_header(source, "//")
    lines += [
        "/** The kinds of decode failure, generated from `rules/decode.toml`. */",
        "",
        "/**",
        " * What kind of failure a `DecodeError` is; the name is the same in every SDK.",
        " *",
    ]
    for k in kinds:
        lines.append(f" * - `{k.name}`: {k.doc.replace('*/', '* /')}")
    lines += [
        " */",
        "export type DecodeErrorKind =",
    ]
    lines += [f"  | {ts_str(k.name)}" for k in kinds]
    lines[-1] += ";"
    lines += [
        "",
        "/** Every kind, in the table's order. */",
        "export const DECODE_ERROR_KINDS: readonly DecodeErrorKind[] = [" + ", ".join(ts_str(k.name) for k in kinds) + "];",
        "",
    ]
    return "\n".join(lines)
