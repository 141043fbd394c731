"""One ACP surface (v1, v1 unstable, v2, ...): its method table, its rules as generated
code (`checks`), and the decoding of payloads by type, on two paths with one meaning.

* Fast path: a cached `msgspec.json.Decoder(<type>)` over the raw bytes the envelope
  kept. It accepts only what is plainly valid; any failure falls through.
* Slow path (authoritative, and the source of every error and warning): the payload is
  read with `agentproto.codec.reader` and walked by the generated validators
  (`generated/_<surface>_decode.py`, imported on first use), which apply the lenient
  annotations, keep unknown variants, and raise `DecodeError` with the Rust SDK's texts.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import Raw

from agentproto.acp.rules import MethodInfo, SurfaceRules
from agentproto.codec.errors import Decoded, DecodeError
from agentproto.codec.kind import DecodeErrorKind
from agentproto.codec.reader import JsonSyntaxError, parse
from agentproto.codec.runtime import Ctx
from agentproto.codec.syntax import first_invalid, position_at
from agentproto.jsonrpc.message import MAX_NESTING_DEPTH, _nesting_exceeds, has_duplicate_keys

if TYPE_CHECKING:
    from agentproto.acp.refusal import MethodChecks  # loaded with the roles, which use it

__all__ = ["Surface"]

_FAST_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, ValueError, TypeError)
_EMPTY = b"{}"


# The number `-0`: msgspec reads the integer 0, the decoding model the double -0.0, so a
# payload that holds it takes the slow path.
_NEGATIVE_ZERO = re.compile(rb"-0(?![.0-9eE])")
# What may precede a number in JSON text: a number starts the text or follows one of these.
_BEFORE_A_NUMBER = frozenset(b":[, \t\n\r")


def _holds_negative_zero(data: Raw | bytes) -> bool:
    """Whether the JSON text may hold the number `-0`. A `-0` inside a string (an id such
    as `"tc-0"`) is not preceded by what precedes a number and does not count, so such
    payloads keep the fast path; a doubtful match (`"a,-0"` in a string) still counts."""
    for match in _NEGATIVE_ZERO.finditer(data):
        start = match.start()
        if start == 0 or memoryview(data)[start - 1] in _BEFORE_A_NUMBER:
            return True
    return False


_UNKNOWN: Any = object()


def _not_json(root: str, text: str, stopped: int | None = None) -> DecodeError:
    """The failure of a payload that is not one JSON value, with the line and column
    where it stops being JSON: the grammar's position (vectors/README.md, "Error texts"),
    else `stopped`, the offset where the reader stopped, else the end of `text` (the
    text before a byte that is not UTF-8)."""
    at = first_invalid(text)
    if at is None:
        at = position_at(text if stopped is None else text[:stopped])
    found = f"text that is not JSON (line {at.line}, column {at.column})"
    return DecodeError(root, DecodeErrorKind.NOT_JSON, "JSON text", found)


class Surface:
    """The method table of one generated module and the decoders of its payload types."""

    def __init__(self, types: ModuleType, decoders: str, roles: str | None = None) -> None:
        self.module = types
        self.methods: tuple[MethodInfo, ...] = types.METHODS
        self.rules: SurfaceRules = types.RULES
        self.protocol_version: int = types.PROTOCOL_VERSION
        self._decoders_name = decoders
        self._slow: Mapping[str, Callable[[Any, str, Ctx], Any]] | None = None
        self._fast: dict[str, Callable[[Raw | bytes], Any] | None] = {}
        by_side: dict[tuple[str, str], dict[str, MethodInfo]] = {}
        for m in self.methods:
            by_side.setdefault((m.kind, m.side), {})[m.name] = m
        for side in ("agent", "client", "proxy"):
            protocol = by_side.get(("notification", "protocol"), {})
            by_side[("notification", side)] = {**protocol, **by_side.get(("notification", side), {})}
        self._by_side = by_side
        self._roles_name = roles
        self._checks: Mapping[str, MethodChecks[Any, Any, Any]] | None = None

    def requests(self, side: str) -> dict[str, MethodInfo]:
        """The requests `side` handles, by wire name."""
        return self._by_side.get(("request", side), {})

    def notifications(self, side: str) -> dict[str, MethodInfo]:
        """The notifications `side` handles (its own and the `protocol` ones), by wire name."""
        return self._by_side.get(("notification", side), {})

    def type(self, name: str) -> type[Any]:
        """The generated class of a payload type."""
        cls: type[Any] = getattr(self.module, name)
        return cls

    @property
    def checks(self) -> Mapping[str, MethodChecks[Any, Any, Any]]:
        """The protocol rules as generated code, by wire name: the roles module's `CHECKS`
        (read on first use; empty for a surface without roles)."""
        checks = self._checks
        if checks is None:
            checks = {} if self._roles_name is None else importlib.import_module(self._roles_name).CHECKS
            self._checks = checks
        return checks

    def fast_decoder(self, type_name: str) -> Callable[[Raw | bytes], Any] | None:
        """The msgspec decoder of a type, or `None` when msgspec cannot express it."""
        try:
            return self._fast[type_name]
        except KeyError:
            pass
        cls = self.type(type_name)
        decoder: Callable[[Raw | bytes], Any] | None
        try:
            decoder = msgspec.json.Decoder(cls).decode
        except (TypeError, ValueError):
            decoder = None
        self._fast[type_name] = decoder
        return decoder

    def slow_decoders(self) -> Mapping[str, Callable[[Any, str, Ctx], Any]]:
        if self._slow is None:
            module = importlib.import_module(self._decoders_name)
            self._slow = module.DECODERS
        return self._slow

    def decode(
        self,
        type_name: str,
        payload: Raw | bytes | None,
        root: str,
        *,
        check_duplicate_keys: bool = False,
        fast: bool = True,
    ) -> Decoded[Any]:
        """Decodes a payload as `type_name`; absent or `null` payloads decode as `{}`.

        Args:
            type_name: the schema name of the payload type (a method's `params` or `result`).
            payload: the raw bytes the envelope kept.
            root: the JSON path of the payload in its message (`$.params`, `$.result`).
            check_duplicate_keys: look for repeated keys before taking the fast path.
            fast: take the fast path (`False`: the authoritative path only).

        Raises:
            DecodeError: the payload does not match the type.
        """
        return self._decode(type_name, payload, root, check_duplicate_keys, fast)

    def _decode(
        self, type_name: str, payload: Raw | bytes | None, root: str, check_duplicate_keys: bool, fast: bool
    ) -> Decoded[Any]:
        # Params that are absent or `null` read as `{}`; a `null` result is `{}` only for a
        # method whose result may be empty, and the caller decides that (rule 10).
        null = payload is not None and len(payload) == 4 and bytes(payload) == b"null"
        data: Raw | bytes = _EMPTY if payload is None or (null and root != "$.result") else payload
        if fast:
            decoder = self._fast.get(type_name, _UNKNOWN)
            if decoder is _UNKNOWN:
                decoder = self.fast_decoder(type_name)
            if (
                decoder is not None
                and (_NEGATIVE_ZERO.search(data) is None or not _holds_negative_zero(data))
                and not (check_duplicate_keys and has_duplicate_keys(bytes(data)))
            ):
                try:
                    return Decoded(decoder(data))
                except _FAST_ERRORS:
                    pass
        return self.decode_slow(type_name, bytes(data), root)

    def decode_slow(self, type_name: str, data: bytes, root: str) -> Decoded[Any]:
        """The authoritative path alone (what `decode` falls back to)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise _not_json(root, data[: e.start].decode("utf-8")) from None
        if (text.count("{") + text.count("[")) > MAX_NESTING_DEPTH and _nesting_exceeds(text, MAX_NESTING_DEPTH):
            expected = f"JSON text nested at most {MAX_NESTING_DEPTH} deep"
            raise DecodeError(root, DecodeErrorKind.NOT_JSON, expected, "text nested deeper")
        try:
            node = parse(text)
        except JsonSyntaxError as e:
            raise _not_json(root, text, e.position) from None
        cx = Ctx(text)
        value = self.slow_decoders()[type_name](node, root, cx)
        return Decoded(value, cx.warnings)
