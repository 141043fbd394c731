"""The A2A task store's schema (`rules/store/store.toml` and the SQL scripts it lists),
emitted as constants of each language: the Rust stores (`crates/a2a/src/store/`), the
Python stores (`agentproto.a2a.sqlite_store`, `postgres_store`) and the TypeScript SQLite
store run these scripts and no other, so a database written by one opens in the others.

A script is copied as it is, byte for byte (a Rust raw string, a Python triple-quoted
string, a TypeScript template literal); a script holding what one of those cannot carry
verbatim is refused rather than escaped.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .emit import table_header

RUST_OUT = "crates/a2a/src/generated/store_schema.rs"
PYTHON_OUT = "python/src/agentproto/a2a/generated/store_schema.py"
TS_OUT = "ts/src/generated/a2a/store-schema.ts"

BACKENDS = ("sqlite", "postgres")


class StoreSchemaError(Exception):
    pass


@dataclass(frozen=True)
class Schema:
    migrations: dict[str, list[str]]  # backend -> its scripts, in order
    migration_lock: int  # PostgreSQL's advisory lock
    sources: list[tuple[str, str]]  # (file, sha256), store.toml first


def read(root: Path) -> Schema:
    """The schema under `root/rules/store/`, checked."""
    base = root / "rules" / "store"
    data = (base / "store.toml").read_bytes()
    sources = [("rules/store/store.toml", hashlib.sha256(data).hexdigest())]
    table = tomllib.loads(data.decode("utf-8"))
    if table.get("format") != 1:
        raise StoreSchemaError(f"store.toml: format {table.get('format')!r}, this reader knows 1")
    migrations: dict[str, list[str]] = {}
    for backend in BACKENDS:
        files = table.get(backend, {}).get("migrations", [])
        if not files:
            raise StoreSchemaError(f"store.toml [{backend}]: no migrations")
        scripts = []
        for i, name in enumerate(files, start=1):
            if name != f"{backend}/v{i}.sql":
                raise StoreSchemaError(f"store.toml [{backend}]: migration {i} is {name!r}, expected {backend}/v{i}.sql")
            raw = (base / name).read_bytes()
            sources.append((f"rules/store/{name}", hashlib.sha256(raw).hexdigest()))
            text = raw.decode("utf-8")
            for bad in ('"#', "`", "${", "\\", '"""'):
                if bad in text:
                    raise StoreSchemaError(f"rules/store/{name}: holds {bad!r}, which a generated literal cannot carry as is")
            if not text.endswith("\n"):
                raise StoreSchemaError(f"rules/store/{name}: must end with a newline")
            scripts.append(text)
        migrations[backend] = scripts
    lock = table.get("postgres", {}).get("migration_lock")
    if not isinstance(lock, int) or not -(2**63) <= lock < 2**63:
        raise StoreSchemaError("store.toml [postgres]: migration_lock must be a 64-bit integer")
    return Schema(migrations, lock, sources)


def _header(schema: Schema, comment: str) -> list[str]:
    lines = table_header(schema.sources[0], comment)
    lines += [f"{comment} and {file} sha256 {digest}." for file, digest in schema.sources[1:]]
    return lines


def _lock_hex(lock: int) -> str:
    digits = f"{lock:016x}"
    return "0x" + "_".join(digits[i : i + 4] for i in range(0, 16, 4))


def rust(schema: Schema) -> str:
    out = _header(schema, "//")
    out += [
        "//! The A2A store's migrations (`rules/store/`), for the SQLite and PostgreSQL stores.",
        "",
    ]
    for backend in BACKENDS:
        scripts = schema.migrations[backend]
        out += [
            f'#[cfg(feature = "{backend}")]',
            f"/// The {backend} store's schema: `MIGRATIONS[n]` takes it from version `n` to `n + 1`.",
            f"pub(crate) mod {backend} {{",
            "    /// The schema version this build writes.",
            f"    pub(crate) const SCHEMA_VERSION: i64 = {len(scripts)};",
            "",
            "    /// The migrations, in order.",
            f"    pub(crate) const MIGRATIONS: [&str; {len(scripts)}] = [{', '.join(f'V{i}' for i in range(1, len(scripts) + 1))}];",
        ]
        if backend == "postgres":
            out += [
                "",
                "    /// The advisory lock migrations run under.",
                f"    pub(crate) const MIGRATION_LOCK: i64 = {_lock_hex(schema.migration_lock)};",
            ]
        for i, script in enumerate(scripts, start=1):
            out += ["", f"    /// `rules/store/{backend}/v{i}.sql`.", f'    pub(crate) const V{i}: &str = r#"{script}"#;']
        out += ["}", ""]
    return "\n".join(out)


def python(schema: Schema) -> str:
    out = [*_header(schema, "#")]
    out += [
        '"""The A2A store\'s migrations (`rules/store/`), for the SQLite and PostgreSQL stores:',
        '`*_MIGRATIONS[n]` takes the schema from version `n` to `n + 1`."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        "__all__ = [",
        '    "POSTGRES_MIGRATIONS",',
        '    "POSTGRES_MIGRATION_LOCK",',
        '    "POSTGRES_SCHEMA_VERSION",',
        '    "SQLITE_MIGRATIONS",',
        '    "SQLITE_SCHEMA_VERSION",',
        "]",
        "",
    ]
    for backend in BACKENDS:
        upper = backend.upper()
        out.append(f"{upper}_MIGRATIONS: Final[tuple[str, ...]] = (")
        for script in schema.migrations[backend]:
            out.append(f'    """{script}""",')
        out += [")", "", f"{upper}_SCHEMA_VERSION: Final = {len(schema.migrations[backend])}", ""]
    out += [f"POSTGRES_MIGRATION_LOCK: Final = {_lock_hex(schema.migration_lock).upper().replace('0X', '0x')}", ""]
    return "\n".join(out)


def typescript(schema: Schema) -> str:
    out = [*_header(schema, "//")]
    out += [
        "/** The A2A store's migrations (`rules/store/`): `*_MIGRATIONS[n]` takes the schema",
        " * from version `n` to `n + 1`. */",
        "",
    ]
    for backend in BACKENDS:
        upper = backend.upper()
        out.append(f"export const {upper}_MIGRATIONS: readonly string[] = [")
        for script in schema.migrations[backend]:
            out.append(f"  `{script}`,")
        out += ["];", "", f"export const {upper}_SCHEMA_VERSION = {len(schema.migrations[backend])};", ""]
    out += [f"export const POSTGRES_MIGRATION_LOCK = {schema.migration_lock}n;", ""]
    return "\n".join(out)
