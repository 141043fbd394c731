"""Identifier spelling shared by the schema readers and every emitter.

Spelling (``snake``, ``lower_camel``, ``upper_camel``) and escaping are separate
steps: spell a wire name in a language's convention, then make it a legal
identifier of that language with ``rust_ident`` / ``python_ident`` / ``ts_ident``.
"""

from __future__ import annotations

import keyword
import re

from .emit import ts_str


def camel(s: str) -> str:
    """``user_message_chunk`` / ``date-time`` / ``$/cancel_request`` -> ``UserMessageChunk`` ...

    A result that would start with a digit (or be empty) gets a ``V`` prefix.
    """
    parts = re.split(r"[^A-Za-z0-9]+", s)
    out = "".join(p[:1].upper() + p[1:] for p in parts if p)
    return out if out and not out[0].isdigit() else "V" + out


def snake(s: str) -> str:
    """``sessionId`` -> ``session_id``, ``HTTPAuth`` -> ``http_auth``, ``date-time`` ->
    ``date_time``; leading and trailing separators are dropped.  Not escaped."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return re.sub(r"[^A-Za-z0-9]+", "_", s).lower().strip("_")


def words(s: str) -> list[str]:
    """The lower-case words of a name, split as ``snake`` splits them."""
    return [w for w in snake(s).split("_") if w]


def lower_camel(s: str) -> str:
    """``session_id`` / ``SessionId`` / ``TASK_STATE`` -> ``sessionId`` / ``sessionId`` / ``taskState``."""
    ws = words(s)
    return "".join([*ws[:1], *(w.capitalize() for w in ws[1:])])


def upper_camel(s: str) -> str:
    """``task_state`` / ``TASK_STATE_WORKING`` / ``HTTPAuth`` -> ``TaskState`` /
    ``TaskStateWorking`` / ``HttpAuth``.  Unlike ``camel``, it re-cases every word."""
    return "".join(w.capitalize() for w in words(s))


# ---------------------------------------------------------------------------
# Reserved words, per language

# Strict and reserved keywords of Rust (2021, plus `gen` reserved by 2024).  The weak
# keywords (`union`, `raw`, `safe`, `macro_rules`) are legal identifiers.
RUST_KEYWORDS = frozenset(
    """as async await break const continue crate dyn else enum extern false fn for if impl in
    let loop match mod move mut pub ref return self Self static struct super trait true type
    unsafe use where while abstract become box do final gen macro override priv try typeof
    unsized virtual yield""".split()
)
# Keywords that cannot be raw identifiers (`r#self` does not compile).
_RUST_NOT_RAW = frozenset({"self", "Self", "super", "crate", "_"})

# Hard keywords, and the soft ones a generated name could collide with: `type` (3.12),
# `match` and `case` are legal names, but a field called `type` shadows the builtin in
# its class body.  Fixed here rather than read from `keyword.softkwlist`, so that the
# output does not depend on the Python that runs the generator.
PYTHON_KEYWORDS = frozenset(keyword.kwlist) | {"match", "case", "type"}

# ECMAScript reserved words, those reserved in strict mode and modules, the names strict
# mode forbids binding, and TypeScript's predefined type names (illegal as type names).
TS_RESERVED = frozenset(
    """break case catch class const continue debugger default delete do else enum export
    extends false finally for function if import in instanceof new null return super switch
    this throw true try typeof var void while with
    implements interface let package private protected public static yield await
    arguments eval
    any bigint boolean never number object string symbol undefined unknown""".split()
)


def _nonempty(name: str) -> str:
    if not name:
        raise ValueError("an empty identifier")
    return name


def rust_ident(name: str) -> str:
    """``type`` -> ``r#type``; ``self`` -> ``self_``; ``2fa`` -> ``_2fa``."""
    if _nonempty(name) in _RUST_NOT_RAW:
        return name + "_"
    if name in RUST_KEYWORDS:
        return "r#" + name
    return "_" + name if name[0].isdigit() else name


def python_ident(name: str) -> str:
    """``type`` -> ``type_``, ``from`` -> ``from_``; ``2fa`` -> ``_2fa``."""
    if _nonempty(name) in PYTHON_KEYWORDS:
        return name + "_"
    return "_" + name if name[0].isdigit() else name


def ts_ident(name: str) -> str:
    """A name to bind (variable, parameter, type): ``default`` -> ``default_``."""
    if _nonempty(name) in TS_RESERVED:
        return name + "_"
    return "_" + name if name[0].isdigit() else name


def ts_property(name: str) -> str:
    """A property key: bare when it is an identifier (reserved words are fine there),
    quoted otherwise (``"$/cancel_request"``, ``"content-type"``)."""
    return name if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", name) else ts_str(name)
