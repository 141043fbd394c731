"""The errors an A2A server answers with, as one table: `rules/a2a.toml [errors]` (one
row per kind: JSON-RPC code, HTTP and gRPC status under A2A 1.0.1 and 1.0.0, the
`ErrorInfo` reason, the default message) joined with the error definitions of the pinned
A2A 0.3 JSON schema, which give the code the 0.3 binding answers with.

The table is read into `ErrorRow`s, language-neutral; `rust()` writes the Rust crate's
`ErrorKind` and its rows. A Python or TypeScript A2A SDK adds its own writer over the
same rows.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .emit import rust_str, table_header

RULES = "rules/a2a.toml"
SCHEMA_V03 = "spec/a2a/v0.3/a2a.json"
RUST_OUT = "crates/a2a/src/generated/errors.rs"

# The gRPC status codes a row may name (google.rpc.Code).
GRPC_CODES = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
}

FIELDS = {
    "kind",
    "doc",
    "code",
    "http",
    "http_1_0_0",
    "grpc",
    "grpc_1_0_0",
    "status",
    "reason",
    "message",
    "v03",
    "guess",
    "origin",
}


@dataclass(frozen=True)
class ErrorRow:
    kind: str  # TaskNotFound
    doc: str
    code: int
    code_v03: int
    http: tuple[int, int]  # (1.0.1, 1.0.0)
    grpc: tuple[str, str]  # (1.0.1, 1.0.0)
    status: str  # the AIP-193 body's status on HTTP+JSON
    reason: str
    message: str
    guess: tuple[int, ...]
    origin: str


@dataclass(frozen=True)
class Table:
    rows: list[ErrorRow]
    docs: str
    sources: list[tuple[str, str]]  # (file, sha256)


def fail(where: str, what: str) -> ValueError:
    return ValueError(f"{RULES} [errors] {where}: {what}")


def read(root: Path) -> Table:
    """The table from the rules file and the 0.3 schema under `root`."""
    return parse((root / RULES).read_bytes(), (root / SCHEMA_V03).read_bytes())


def parse(rules_bytes: bytes, schema_bytes: bytes) -> Table:
    """The table from the rules file's and the 0.3 schema's bytes."""
    section = tomllib.loads(rules_bytes.decode("utf-8")).get("errors")
    if not isinstance(section, dict) or not isinstance(section.get("rows"), list):
        raise fail("", "missing: a [[errors.rows]] list")
    v03_codes = codes_v03(json.loads(schema_bytes))
    rows: list[ErrorRow] = []
    seen_kind: set[str] = set()
    seen_reason: set[str] = set()
    guessed: dict[int, str] = {}
    for i, raw in enumerate(section["rows"]):
        where = f"row {i + 1} ({raw.get('kind', '?')})"
        unknown = set(raw) - FIELDS
        if unknown:
            raise fail(where, f"unknown fields {sorted(unknown)}")
        kind = raw.get("kind")
        if not isinstance(kind, str) or not re.fullmatch(r"[A-Z][A-Za-z0-9]*", kind):
            raise fail(where, f"kind must be an UpperCamelCase name, found {kind!r}")
        if kind in seen_kind:
            raise fail(where, "kind listed twice")
        seen_kind.add(kind)
        reason = raw.get("reason")
        if not isinstance(reason, str) or not re.fullmatch(r"[A-Z][A-Z0-9_]*", reason) or reason in seen_reason:
            raise fail(where, f"reason must be a new UPPER_SNAKE name, found {reason!r}")
        seen_reason.add(reason)
        code = raw.get("code")
        if not isinstance(code, int):
            raise fail(where, f"code must be an integer, found {code!r}")
        http = (status(raw, "http", where), status(raw, "http_1_0_0", where, raw.get("http")))
        grpc = (grpc_name(raw, "grpc", where), grpc_name(raw, "grpc_1_0_0", where, raw.get("grpc")))
        body_status = grpc_name(raw, "status", where, grpc[0])
        v03 = raw.get("v03")
        if v03 is None:
            code_v03 = code
        elif v03 in v03_codes:
            code_v03 = v03_codes[v03]
        else:
            raise fail(where, f"v03 names {v03!r}, which is not an error definition of {SCHEMA_V03}")
        origin = raw.get("origin")
        if origin not in ("spec", "sdk"):
            raise fail(where, f"origin must be \"spec\" or \"sdk\", found {origin!r}")
        guess = tuple(raw.get("guess", ()))
        for s in guess:
            if s not in http:
                raise fail(where, f"guess {s} is not one of the row's HTTP statuses {http}")
            if s in guessed:
                raise fail(where, f"guess {s} already names {guessed[s]}")
            guessed[s] = kind
        for name in ("doc", "message"):
            if not isinstance(raw.get(name), str) or not raw[name]:
                raise fail(where, f"{name} must be a non-empty string")
        rows.append(
            ErrorRow(kind, raw["doc"], code, code_v03, http, grpc, body_status, reason, raw["message"], guess, origin)
        )
    if not any(r.kind == "Internal" for r in rows):
        raise fail("", "an Internal row is required (the fallback of every unknown code)")
    sources = [
        (RULES, hashlib.sha256(rules_bytes).hexdigest()),
        (SCHEMA_V03, hashlib.sha256(schema_bytes).hexdigest()),
    ]
    return Table(rows, str(section.get("docs", "")), sources)


def codes_v03(schema: dict[str, Any]) -> dict[str, int]:
    """Each error definition of the 0.3 schema by name, with its `code` const."""
    out = {}
    for name, d in schema.get("definitions", {}).items():
        const = d.get("properties", {}).get("code", {}).get("const")
        if name.endswith("Error") and isinstance(const, int):
            out[name] = const
    return out


def status(raw: dict[str, Any], key: str, where: str, default: Any = None) -> int:
    v = raw.get(key, default)
    if not isinstance(v, int) or not 100 <= v <= 599:
        raise fail(where, f"{key} must be an HTTP status, found {v!r}")
    return v


def grpc_name(raw: dict[str, Any], key: str, where: str, default: Any = None) -> str:
    v = raw.get(key, default)
    if v not in GRPC_CODES:
        raise fail(where, f"{key} must name a gRPC status code, found {v!r}")
    return str(v)


def rust(table: Table) -> str:
    header = table_header(table.sources[0], "//")
    lines = [
        *header,
        f"// and {table.sources[1][0]} sha256 {table.sources[1][1]}.",
        "//! The errors an A2A server answers with: one row per kind (codes, statuses, reason,",
        "//! default message). Read through `ErrorKind`'s methods and `crate::errors`.",
        "",
        "/// The kinds of error a server answers with (one per row of `rules/a2a.toml [errors]`).",
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]",
        "#[non_exhaustive]",
        "pub enum ErrorKind {",
    ]
    for r in table.rows:
        prefix = "A2A" if r.origin == "spec" and r.code > -32100 else ("JSON-RPC" if r.origin == "spec" else "agentproto")
        doc = r.doc[0].upper() + r.doc[1:]
        lines += [f"    /// {prefix} {r.code}: {doc}.".replace("..", "."), f"    {r.kind},"]
    lines += [
        "}",
        "",
        "/// One row of the table.",
        "#[derive(Debug)]",
        "pub(crate) struct Row {",
        "    pub(crate) kind: ErrorKind,",
        "    /// The JSON-RPC code.",
        "    pub(crate) code: i64,",
        "    /// The JSON-RPC code of the A2A 0.3 binding.",
        "    pub(crate) code_v03: i64,",
        "    /// The HTTP status under A2A 1.0.1, then 1.0.0.",
        "    pub(crate) http: [u16; 2],",
        "    /// The gRPC status name under A2A 1.0.1, then 1.0.0.",
        "    pub(crate) grpc: [&'static str; 2],",
        "    /// The `status` of the HTTP+JSON binding's AIP-193 body.",
        "    pub(crate) status: &'static str,",
        "    /// The `google.rpc.ErrorInfo` reason.",
        "    pub(crate) reason: &'static str,",
        "    /// The default message.",
        "    pub(crate) message: &'static str,",
        "}",
        "",
        "/// The rows, in the order of `ErrorKind`'s variants.",
        "pub(crate) static ROWS: &[Row] = &[",
    ]
    for r in table.rows:
        lines.append(
            f"    Row {{ kind: ErrorKind::{r.kind}, code: {r.code}, code_v03: {r.code_v03}, "
            f"http: [{r.http[0]}, {r.http[1]}], grpc: [{rust_str(r.grpc[0])}, {rust_str(r.grpc[1])}], "
            f"status: {rust_str(r.status)}, "
            f"reason: {rust_str(r.reason)}, message: {rust_str(r.message)} }},"
        )
    lines += [
        "];",
        "",
        "impl ErrorKind {",
        "    /// This kind's row.",
        "    pub(crate) fn row(self) -> &'static Row {",
        "        &ROWS[self as usize]",
        "    }",
        "",
        "    /// The kind a JSON-RPC error code stands for (the first row with that code).",
        "    pub fn from_code(code: i64) -> Option<Self> {",
        "        ROWS.iter().find(|r| r.code == code).map(|r| r.kind)",
        "    }",
        "",
        "    /// The kind a `google.rpc.ErrorInfo.reason` names.",
        "    pub fn from_reason(reason: &str) -> Option<Self> {",
        "        ROWS.iter().find(|r| r.reason == reason).map(|r| r.kind)",
        "    }",
        "",
        "    /// A guess from an HTTP status alone, for HTTP+JSON errors without an `ErrorInfo`:",
        "    /// the statuses that only one kind answers with.",
        "    pub fn from_http_status(status: u16) -> Option<Self> {",
        "        match status {",
    ]
    for r in table.rows:
        for s in r.guess:
            lines.append(f"            {s} => Some(ErrorKind::{r.kind}),")
    lines += [
        "            _ => None,",
        "        }",
        "    }",
        "}",
        "",
    ]
    return "\n".join(lines)
