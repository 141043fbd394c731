"""Helpers called by generated code (`agentproto.acp.generated`); not meant for
hand-written code.

Two groups:

* struct hooks (`raw_object`, `nullable_raw`, `f64`, ...), called from generated
  `__post_init__` methods on both decode paths and on construction;
* the slow decode path's building blocks: type checks that raise `DecodeError` in the
  wording every SDK shares (vectors/README.md, "Error texts"), lenient decoding with warnings, tagged-union splitting and the
  re-emission of unknown variants (canonical rule 9).

Paths are plain strings built as the walk goes down (`$.params` + `.prompt` + `[0]`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeAlias, TypeVar

from msgspec import UNSET, Meta, Raw

from agentproto.codec.errors import DecodeError, DecodeWarning, WarningKind
from agentproto.codec.kind import DecodeErrorKind
from agentproto.codec.reader import JArray, JObject
from agentproto.codec.values import Flattened, Float64, Unknown, encode, encode_key, join_members

T = TypeVar("T")

# ---------------------------------------------------------------------------
# Types the generated annotations use.

I16 = Annotated[int, Meta(ge=-(2**15), le=2**15 - 1)]
I32 = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]
I64 = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
U16 = Annotated[int, Meta(ge=0, le=2**16 - 1)]
U32 = Annotated[int, Meta(ge=0, le=2**32 - 1)]
# msgspec takes no bound past int64: generated `__post_init__`s check the upper one.
U64 = Annotated[int, Meta(ge=0)]


class SlowOnly:
    """Stands, in the annotations msgspec reads, for a type msgspec cannot decode (an
    untagged union of objects, an object with a union flattened into it): msgspec fails
    on it and the slow path decodes the message. Never instantiated."""

    __slots__ = ()


# ---------------------------------------------------------------------------
# Struct hooks (from generated __post_init__).


def raw_object(value: Raw) -> Raw:
    """An object-only free-form value (`_meta`): it must be a JSON object."""
    if memoryview(value)[0] != 0x7B:  # "{"
        raise ValueError("expected a JSON object")
    return value


def nullable_raw_object(value: Raw | None) -> Raw | None:
    """A nullable object-only free-form value: `null` reads as `None`."""
    if value is None:
        return None
    first = memoryview(value)[0]
    if first == 0x6E:  # "n"ull
        return None
    if first != 0x7B:
        raise ValueError("expected a JSON object or null")
    return value


def nullable_raw(value: Raw | None) -> Raw | None:
    """A nullable free-form value: `null` reads as `None`."""
    if value is None or memoryview(value)[0] == 0x6E:
        return None
    return value


def f64(value: float) -> float:
    """A `double` field's value as a `Float64` (canonical encoding)."""
    if type(value) is float or type(value) is int:
        return Float64(value)
    return value


def f64_in_union(value: Any) -> Any:
    """A union member that may be a `double`: floats become `Float64`, the rest stays."""
    if type(value) is float:
        return Float64(value)
    return value


def f64_list(values: list[Any], wrap: Callable[[Any], Any]) -> list[Any]:
    return [wrap(v) for v in values]


def f64_map(values: dict[str, Any], wrap: Callable[[Any], Any]) -> dict[str, Any]:
    return {k: wrap(v) for k, v in values.items()}


# ---------------------------------------------------------------------------
# The slow path.


class Ctx:
    """One slow decode: the payload text (for raw slices) and the warnings so far."""

    __slots__ = ("text", "warnings")

    def __init__(self, text: str) -> None:
        self.text = text
        self.warnings: list[DecodeWarning] = []


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""A member that was not in the input (before defaults are applied)."""

_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_SURROGATE = re.compile("[\ud800-\udfff]")


def key_path(path: str, key: str) -> str:
    """`path` + `.key`, or `["odd key"]` for keys that are not identifiers."""
    if _PLAIN_KEY.fullmatch(key) and key.isascii():
        return f"{path}.{key}"
    return f"{path}[{encode_key(key).decode()}]"


def error(path: str, kind: DecodeErrorKind, expected: str, found: str) -> DecodeError:
    """A failure from its kind and parts; the message is rendered from them."""
    return DecodeError(path, kind, expected, found)


def describe(value: object) -> str:
    """A JSON value as a decode error's `found` names it (vectors/README.md, "Error
    texts"): "null", "the boolean true", "the integer 5", "the number 1.5",
    'the string "x"', "an array", "an object"."""
    if value is None:
        return "null"
    if value is True:
        return "the boolean true"
    if value is False:
        return "the boolean false"
    if type(value) is int:
        if -(2**63) <= value < 2**64:
            return f"the integer {value}"
        return f"the number {_rust_float(float(value))}"
    if type(value) is float:
        return f"the number {_rust_float(value)}"
    if type(value) is str:
        return f"the string {quote(value)}"
    if type(value) is JArray:
        return "an array"
    return "an object"


def quote(s: str) -> str:
    """A name or a value written as a JSON string (as in every SDK's error texts)."""
    return json.dumps(s, ensure_ascii=False)


def one_of(values: tuple[str, ...] | list[str]) -> str:
    """The `expected` phrase of a closed set of strings: 'one of "a", "b"', or the one value."""
    listed = ", ".join(quote(v) for v in values)
    return listed if len(values) == 1 else f"one of {listed}"


def _rust_float(x: float) -> str:
    """How Rust's `{}` writes an f64, plus `.0` when there is no point (the same in
    every SDK's error texts)."""
    if not math.isfinite(x):
        return {"nan": "NaN", "inf": "inf", "-inf": "-inf"}[repr(x)]
    text = format(Decimal(repr(x)), "f")
    return text if "." in text else text + ".0"


def rust_debug_str(s: str) -> str:
    """A string as Rust's `{:?}` writes it (quoted, escaped)."""
    out = ['"']
    for c in s:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c == "\0":
            out.append("\\0")
        elif not c.isprintable() and c != " ":
            out.append(f"\\u{{{ord(c):x}}}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def invalid_type(path: str, value: object, expected: str) -> DecodeError:
    """A value of the wrong JSON type (kind `wrong-type`)."""
    return error(path, DecodeErrorKind.WRONG_TYPE, expected, describe(value))


def missing(path: str, key: str) -> DecodeError:
    """A required member is absent (reported at the object that lacks it)."""
    return error(path, DecodeErrorKind.MISSING_FIELD, f"the field {quote(key)}", "an object without it")


def duplicate(path: str, key: str) -> DecodeError:
    """A known member appears twice (reported at the key)."""
    return error(key_path(path, key), DecodeErrorKind.REPEATED_KEY, "each key once", f"the key {quote(key)} twice")


def struct_decoder(
    fields: Callable[[Members, str, Ctx, type[T]], T], name: str, cls: type[T]
) -> Callable[[Any, str, Ctx], T]:
    """A struct's validator `d_<Name>`: the value must be an object (`an object (<Name>)`),
    whose members `fields` reads into `cls`."""

    def decode(value: Any, path: str, cx: Ctx) -> T:
        return fields(expect_object(value, path, name).members, path, cx, cls)

    return decode


def once(seen: int, bit: int, path: str, key: str) -> int:
    """`seen` with the member `bit` marked; a known member read twice fails at its key."""
    if seen & bit:
        raise duplicate(path, key)
    return seen | bit


def need(value: Any, path: str, key: str) -> Any:
    """A required member's value; `MISSING` fails at the object that lacks it."""
    if value is MISSING:
        raise missing(path, key)
    return value


def expect_object(value: object, path: str, name: str) -> JObject:
    if type(value) is not JObject:
        raise invalid_type(path, value, f"an object ({name})")
    return value


# Scalars: every validator takes (value, path, ctx).


def d_str(value: object, path: str, cx: Ctx) -> str:
    if type(value) is not str:
        raise invalid_type(path, value, "a string")
    if _SURROGATE.search(value):
        raise error(path, DecodeErrorKind.INVALID_UNICODE, "a string of valid Unicode", "an invalid escape")
    return value


def d_bool(value: object, path: str, cx: Ctx) -> bool:
    if value is True or value is False:
        return value
    raise invalid_type(path, value, "a boolean")


def _number_out_of_range(path: str) -> DecodeError:
    """A number too large for a double (read as an infinity)."""
    return error(path, DecodeErrorKind.NUMBER_TOO_LARGE, "a number within the range of a double", "a number beyond it")


def _int(value: object, path: str, low: int, high: int) -> int:
    if type(value) is int and low <= value <= high:
        return value
    if type(value) is float and value in (float("inf"), float("-inf")):
        raise _number_out_of_range(path)
    # The range is the integer format's (uint16, int64, …), as every SDK words it: a
    # number outside it (or not an integer) is out of range, anything else the wrong type.
    expected = f"an integer from {low} to {high}"
    if type(value) is int or type(value) is float:
        raise error(path, DecodeErrorKind.OUT_OF_RANGE, expected, describe(value))
    raise invalid_type(path, value, expected)


def d_i16(value: object, path: str, cx: Ctx) -> int:
    return _int(value, path, -(2**15), 2**15 - 1)


def d_i32(value: object, path: str, cx: Ctx) -> int:
    return _int(value, path, -(2**31), 2**31 - 1)


def d_i64(value: object, path: str, cx: Ctx) -> int:
    return _int(value, path, -(2**63), 2**63 - 1)


def d_u16(value: object, path: str, cx: Ctx) -> int:
    return _int(value, path, 0, 2**16 - 1)


def d_u32(value: object, path: str, cx: Ctx) -> int:
    return _int(value, path, 0, 2**32 - 1)


def d_u64(value: object, path: str, cx: Ctx) -> int:
    return _int(value, path, 0, 2**64 - 1)


def d_f64(value: object, path: str, cx: Ctx) -> float:
    if type(value) is float:
        if value in (float("inf"), float("-inf")):
            raise _number_out_of_range(path)
        return Float64(value)
    if type(value) is int:
        return Float64(value)
    raise invalid_type(path, value, "a number")


def d_request_id(value: object, path: str, cx: Ctx) -> int | str | None:
    """A JSON-RPC request id: an integer (i64), a string or null."""
    if value is None or type(value) is str:
        return value
    if type(value) is int and -(2**63) <= value <= 2**63 - 1:
        return value
    raise invalid_type(path, value, "an integer, a string or null")


def d_enum(value: object, path: str, values: tuple[str, ...]) -> str:
    """A value of a closed string enum."""
    if type(value) is not str:
        raise invalid_type(path, value, "a string")
    if value not in values:
        raise error(path, DecodeErrorKind.NOT_LISTED, one_of(values), describe(value))
    return value


def d_raw(cx: Ctx, start: int, end: int) -> Raw:
    """A free-form value: its text as received."""
    return Raw(cx.text[start:end].encode())


def d_raw_object(value: object, path: str, cx: Ctx, start: int, end: int) -> Raw:
    """An object-only free-form value (`_meta`)."""
    if type(value) is not JObject:
        raise invalid_type(path, value, "an object")
    return Raw(cx.text[start:end].encode())


Item = Callable[[Any, str, Ctx], Any]


def d_list(value: object, path: str, cx: Ctx, item: Item) -> list[Any]:
    if type(value) is not JArray:
        raise invalid_type(path, value, "an array")
    return [item(v, f"{path}[{i}]", cx) for i, (v, _, _) in enumerate(value.items)]


def d_list_raw(value: object, path: str, cx: Ctx) -> list[Raw]:
    if type(value) is not JArray:
        raise invalid_type(path, value, "an array")
    return [d_raw(cx, s, e) for _, s, e in value.items]


def d_map(value: object, path: str, cx: Ctx, item: Item) -> dict[str, Any]:
    if type(value) is not JObject:
        raise invalid_type(path, value, "an object")
    out: dict[str, Any] = {}
    for key, v, _, _ in value.members:
        if key in out:
            raise duplicate(path, key)
        out[key] = item(v, key_path(path, key), cx)
    return out


def d_map_raw(value: object, path: str, cx: Ctx) -> dict[str, Raw]:
    if type(value) is not JObject:
        raise invalid_type(path, value, "an object")
    out: dict[str, Raw] = {}
    for key, _, s, e in value.members:
        if key in out:
            raise duplicate(path, key)
        out[key] = d_raw(cx, s, e)
    return out


# Lenient decoding.


def warn(cx: Ctx, path: str, message: str, error: DecodeError, kind: WarningKind = WarningKind.SALVAGED) -> None:
    """Records a warning; `message` is written from `error`'s parts (or the tag's)."""
    cx.warnings.append(DecodeWarning(path, message, error, kind))


def salvaged(cx: Ctx, path: str, err: DecodeError) -> None:
    """Records that the value at `path` was dropped because of `err`."""
    warn(cx, path, f"dropped invalid value: {err}", err)


def lenient(cx: Ctx, value: object, path: str, item: Item, nullable: bool = False) -> Any:
    """`item(value)`, or `MISSING` and a warning when it fails
    (`x-deserialize-default-on-error`); `None` for `null` when `nullable`."""
    if value is None and nullable:
        return None
    mark = len(cx.warnings)
    try:
        return item(value, path, cx)
    except DecodeError as e:
        del cx.warnings[mark:]
        salvaged(cx, path, e)
        return MISSING


def lenient_raw_object(cx: Ctx, value: object, path: str, start: int, end: int, nullable: bool) -> Any:
    """A lenient object-only free-form value (`_meta`): `None` for `null` when `nullable`,
    `MISSING` and a warning when it is not an object."""
    if value is None and nullable:
        return None
    try:
        return d_raw_object(value, path, cx, start, end)
    except DecodeError as e:
        salvaged(cx, path, e)
        return MISSING


def items(cx: Ctx, value: object, path: str, item: Item, nullable: bool, lenient_whole: bool) -> Any:
    """An array whose invalid items are dropped with a warning each
    (`x-deserialize-skip-invalid-items`). `MISSING` when dropped as a whole (only when
    `lenient_whole`), `None` for `null` (only when `nullable`), else the kept items."""
    if value is None and nullable:
        return None
    if type(value) is not JArray:
        if lenient_whole:
            salvaged(cx, path, invalid_type(path, value, "an array"))
            return MISSING
        raise invalid_type(path, value, "an array")
    out = []
    for i, (v, _, _) in enumerate(value.items):
        kept = lenient(cx, v, f"{path}[{i}]", item)
        if kept is not MISSING:
            out.append(kept)
    return out


def default_on_null(cx: Ctx, value: object, path: str, item: Item) -> Any:
    """`x-deserialize-default-on-null`: `null` gives `MISSING` and a warning."""
    if value is None:
        warn(cx, path, "null read as the default value", _refusal_of_null(cx, path, item))
        return MISSING
    return item(value, path, cx)


def _refusal_of_null(cx: Ctx, path: str, item: Item) -> DecodeError:
    """What `item` says of `null` (the failure a `null` read as the default stands for):
    asked of the validator itself, so that `expected` names what it reads."""
    mark = len(cx.warnings)
    try:
        item(None, path, cx)
    except DecodeError as e:
        return e
    finally:
        del cx.warnings[mark:]
    return invalid_type(path, None, "a value other than null")  # pragma: no cover - such members are not nullable


def min_length(path: str, value: str, minimum: int) -> None:
    if len(value) < minimum:
        raise error(
            path,
            DecodeErrorKind.TOO_SHORT,
            f"a string of at least {minimum} characters",
            f"a string of {len(value)} characters",
        )


def min_items(path: str, value: list[Any], minimum: int) -> None:
    if len(value) < minimum:
        raise error(
            path, DecodeErrorKind.TOO_SHORT, f"an array of at least {minimum} items", f"an array of {len(value)} items"
        )


# Tagged unions.

Members = list[tuple[str, Any, int, int]]


def split_tag(value: JObject, tag_field: str, path: str) -> tuple[str | None, Members]:
    """The tag (the first member named `tag_field`, which must be a string) and the other
    members in received order; `(None, members)` when there is no tag."""
    members = value.members
    for i, member in enumerate(members):
        if member[0] == tag_field:
            tag = member[1]
            if type(tag) is not str:
                raise invalid_type(key_path(path, tag_field), tag, "a string")
            return tag, members[:i] + members[i + 1 :]
    return None, members


def unknown(cx: Ctx, value: JObject, tag_field: str, tag: str | None) -> Unknown:
    """An unknown variant re-emitted member by member (canonical rule 9): received order,
    values as received, keys and the tag value re-spelled."""
    text = cx.text
    parts = []
    tag_seen = False
    for key, v, s, e in value.members:
        if key == tag_field and not tag_seen:
            tag_seen = True
            parts.append((key, encode_key(v)))
        else:
            parts.append((key, text[s:e].encode()))
    return Unknown(tag, Raw(join_members(parts)))


def warn_unknown(cx: Ctx, path: str, union: str, tag: str) -> None:
    """Records that a variant `union` does not list was kept raw; its `error` (kind
    `unknown-variant`) is what refusing it would say (outgoing checks do)."""
    refusal = error(path, DecodeErrorKind.UNKNOWN_VARIANT, f"a known variant of {union}", f"the string {quote(tag)}")
    warn(cx, path, f"unknown {union} variant {quote(tag)} kept as raw JSON", refusal, WarningKind.UNKNOWN_VARIANT)


def attempt(cx: Ctx, value: object, path: str, item: Item) -> Any:
    """`item(value)`, or `MISSING` leaving no trace (untagged unions try their variants)."""
    mark = len(cx.warnings)
    try:
        return item(value, path, cx)
    except DecodeError:
        del cx.warnings[mark:]
        return MISSING


def no_variant(path: str, value: object, expected: str) -> DecodeError:
    """None of an untagged union's variants accepts the value (kind `no-variant`)."""
    return error(path, DecodeErrorKind.NO_VARIANT, expected, describe(value))


# Encoding objects with a flattened union.


def member_bytes(value: object) -> bytes:
    return b"null" if value is None else encode(value)


def variant_members(variant: object, skip: tuple[str, ...]) -> list[tuple[str, bytes]]:
    """The members a flattened variant adds to its enclosing object, without the keys the
    object writes itself."""
    if isinstance(variant, Flattened):
        members = variant._members()
    else:
        from agentproto.codec.reader import parse

        raw = variant.raw if isinstance(variant, Unknown) else Raw(encode(variant))
        text = bytes(raw).decode()
        node = parse(text)
        if type(node) is not JObject:
            raise ValueError("a flattened variant must encode as an object")
        members = [(k, text[s:e].encode()) for k, _, s, e in node.members]
    return [(k, v) for k, v in members if k not in skip]


def is_unset(value: object) -> bool:
    return value is UNSET


Decoder = Callable[[Any, str, Ctx], Any]
"""A generated validator: (value, path, ctx) -> decoded value."""


def dropped(cx: Ctx, mark: int, path: str, err: DecodeError) -> Any:
    """A lenient member's value failed: roll its warnings back, warn, give `MISSING`."""
    del cx.warnings[mark:]
    salvaged(cx, path, err)
    return MISSING


def d_error_object(value: object, path: str, cx: Ctx) -> Any:
    """A JSON-RPC error object (`code`, `message`, optional `data`)."""
    from agentproto.jsonrpc.error import ErrorObject

    obj = expect_object(value, path, "ErrorObject")
    code: Any = MISSING
    message: Any = MISSING
    data: Any = UNSET
    for key, v, s, e in obj.members:
        if key == "code":
            if code is not MISSING:
                raise duplicate(path, key)
            code = d_i32(v, key_path(path, key), cx)
        elif key == "message":
            if message is not MISSING:
                raise duplicate(path, key)
            message = d_str(v, key_path(path, key), cx)
        elif key == "data":
            if data is not UNSET:
                raise duplicate(path, key)
            data = d_raw(cx, s, e)
    if code is MISSING:
        raise missing(path, "code")
    if message is MISSING:
        raise missing(path, "message")
    return ErrorObject(code=code, message=message, data=data)


if TYPE_CHECKING:
    NullableRaw: TypeAlias = Raw | None
    """Free-form JSON that may be `null` (`None`)."""
else:
    # msgspec cannot put `Raw` in a union: it reads the value raw and the struct's
    # `__post_init__` turns `null` into `None`.
    NullableRaw = Raw

RequestId = I64 | str | None
"""A JSON-RPC request id: an integer (i64), a string, or `None` for `null`."""


def d_raw_node(value: object, path: str, cx: Ctx) -> Raw:
    """Any value as free-form JSON (an untagged union's catch-all variant): containers as
    received; a scalar, whose span the caller did not pass, re-encoded."""
    if type(value) is JObject or type(value) is JArray:
        return Raw(cx.text[value.start : value.end].encode())
    return Raw(encode(value))


def u64(value: int) -> int:
    """A `uint64` field's value: msgspec checks the lower bound, this the upper one."""
    if value > 2**64 - 1:
        raise ValueError("integer out of the uint64 range")
    return value
