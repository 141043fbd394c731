"""ProtoJSON readings the generated A2A code calls (vectors/README.md, "The decoding model
(ProtoJSON, A2A 1.0.1)"): int32 from a number or a string, enums by name or number,
base64 in both alphabets, RFC 3339 timestamps rewritten in UTC with milliseconds, and the
failures of a `oneof`. Every failure is a `DecodeError` in the shared wording; not meant
for hand-written code outside this package.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import math
import re
from decimal import Decimal, InvalidOperation
from typing import NoReturn

from msgspec import Raw

from agentproto.codec.errors import DecodeError
from agentproto.codec.kind import DecodeErrorKind
from agentproto.codec.reader import JObject
from agentproto.codec.runtime import Ctx, describe, error, invalid_type, key_path, one_of, quote

INT32 = "an integer from -2147483648 to 2147483647, or a string holding one"
_I32_LOW, _I32_HIGH = -(2**31), 2**31 - 1
_INTEGER_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _integer_of_text(text: str) -> int | None:
    """The integer a string spells in any JSON-like notation (`"5"`, `"5.0"`, `"1e1"`), or
    `None` when it spells no integer that fits 64 bits."""
    if not _INTEGER_TEXT.fullmatch(text):
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        return None
    if number != 0 and number.adjusted() > 19:
        return None
    if number != number.to_integral_value():
        return None
    value = int(number)
    return value if -(2**63) <= value < 2**63 else None


def d_int32(value: object, path: str, cx: Ctx) -> int:
    """An `int32`: an integral number or a string holding one, within the int32 range."""
    if type(value) is int:
        if _I32_LOW <= value <= _I32_HIGH:
            return value
        raise error(path, DecodeErrorKind.OUT_OF_RANGE, INT32, describe(value))
    if type(value) is float:
        if math.isfinite(value) and value.is_integer() and _I32_LOW <= value <= _I32_HIGH:
            return int(value)
        raise error(path, DecodeErrorKind.OUT_OF_RANGE, INT32, describe(value))
    if type(value) is str:
        number = _integer_of_text(value)
        if number is None or not _I32_LOW <= number <= _I32_HIGH:
            raise error(path, DecodeErrorKind.OUT_OF_RANGE, INT32, describe(value))
        return number
    raise invalid_type(path, value, INT32)


_URL_SAFE = re.compile(r"[A-Za-z0-9_-]*=*")
_STANDARD = re.compile(r"[A-Za-z0-9+/]*=*")


def bytes_of_base64(text: str) -> bytes | None:
    """The bytes of standard or URL-safe base64, padded or not; `None` when it is neither."""
    url_safe = "-" in text or "_" in text
    if not (_URL_SAFE if url_safe else _STANDARD).fullmatch(text):
        return None
    padded = text.endswith("=")
    if padded and len(text) % 4 != 0:
        return None
    if not padded:
        if len(text) % 4 == 1:
            return None
        text += "=" * (-len(text) % 4)
    try:
        if url_safe:
            return base64.urlsafe_b64decode(text)
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def d_bytes(value: object, path: str, cx: Ctx) -> bytes:
    """A `bytes` field: base64 text."""
    if type(value) is not str:
        raise invalid_type(path, value, "a string")
    decoded = bytes_of_base64(value)
    if decoded is None:
        raise error(path, DecodeErrorKind.WRONG_FORMAT, "base64 text", describe(value))
    return decoded


_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))"
)
_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def timestamp_text(text: str) -> str | None:
    """Any RFC 3339 date-time rewritten in UTC with milliseconds
    (`2026-01-02T03:04:05.000Z`); `None` when the text is not one."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = m.groups()
    try:
        moment = datetime.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=datetime.UTC
        )
        if not zulu:
            if int(off_h) > 23 or int(off_m) > 59:
                return None
            offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m))
            moment = moment - offset if sign == "+" else moment + offset
    except (ValueError, OverflowError):
        return None
    millis = (fraction or "").ljust(3, "0")[:3]
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}.{millis}Z"


def _real_instant(text: str) -> bool:
    """Whether canonical-shaped text (`_CANONICAL`) names a date and time that exist."""
    try:
        datetime.datetime(
            int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[14:16]), int(text[17:19])
        )
    except ValueError:
        return False
    return True


_checked_second = "\x00"
"""The text up to the milliseconds (`YYYY-MM-DDTHH:MM:SS.`) of the last canonical timestamp
`timestamp` found valid: a timestamp of the same second only needs its milliseconds
checked (the timestamps a server writes come many to a second)."""


def timestamp(text: str) -> str:
    """A timestamp member's value in its canonical text (for generated `__post_init__`s).

    Raises:
        ValueError: the text is not an RFC 3339 date-time.
    """
    global _checked_second
    millis = text[20:23]
    if (
        len(text) == 24
        and text.startswith(_checked_second)
        and text[23] == "Z"
        and millis.isascii()
        and millis.isdigit()
    ):
        return text
    # Already canonical (every timestamp this server writes): only the ranges are left to check.
    if _CANONICAL.fullmatch(text) and _real_instant(text):
        _checked_second = text[:20]
        return text
    canonical = timestamp_text(text)
    if canonical is None:
        raise ValueError(f"not an RFC 3339 date-time: {quote(text)}")
    return canonical


def d_timestamp(value: object, path: str, cx: Ctx) -> str:
    """A `google.protobuf.Timestamp`: an RFC 3339 string, read as its canonical text."""
    if type(value) is not str:
        raise invalid_type(path, value, "a string")
    canonical = timestamp_text(value)
    if canonical is None:
        raise error(path, DecodeErrorKind.WRONG_FORMAT, "an RFC 3339 date-time", describe(value))
    return canonical


_ENUM = "an enum value name or number"


def d_enum(value: object, path: str, values: tuple[str, ...], numbers: tuple[int, ...]) -> str:
    """An enum value by its name or its proto number; the zero value is not listed."""
    if type(value) is str:
        if value in values:
            return value
        raise error(path, DecodeErrorKind.NOT_LISTED, one_of(values), describe(value))
    number: int
    if type(value) is int:
        number = value
    elif type(value) is float and math.isfinite(value) and value.is_integer() and abs(value) <= 1e9:
        number = int(value)
    else:
        raise invalid_type(path, value, _ENUM)
    for name, n in zip(values, numbers, strict=True):
        if n == number:
            return name
    listed = ", ".join(f"{n} ({name})" for name, n in zip(values, numbers, strict=True))
    raise error(path, DecodeErrorKind.NOT_LISTED, f"one of {listed}", f"the integer {number}")


def one_of_twice(path: str, key: str, first: str, second: str) -> DecodeError:
    """A second member of one `oneof` (reported at the second)."""
    return error(
        key_path(path, key),
        DecodeErrorKind.ONE_OF_TWICE,
        f"at most one of the fields {quote(first)} and {quote(second)}",
        "both",
    )


def missing_one_of(path: str, wires: tuple[str, ...]) -> DecodeError:
    """An object with none of the members of a `oneof` that needs one."""
    listed = ", ".join(quote(w) for w in wires)
    return error(path, DecodeErrorKind.MISSING_ONE_OF, f"one of the fields {listed}", "an object without any of them")


def not_one(wires: tuple[str, ...]) -> NoReturn:
    """A constructed value whose `oneof` has not exactly one member set.

    Raises:
        ValueError: always.
    """
    raise ValueError("exactly one of " + ", ".join(wires) + " must be set")


def d_raw_object_node(value: object, path: str, cx: Ctx) -> Raw:
    """An object-only free-form value inside an array or a map: its text as received."""
    if type(value) is not JObject:
        raise invalid_type(path, value, "an object")
    return Raw(cx.text[value.start : value.end].encode())
