"""A strict JSON reader that keeps what the slow decode path needs.

`json.loads` forgets repeated keys and where each value was in the text; the slow path
needs both (a repeated known key is an error; free-form values and unknown union
variants are re-emitted from their received text). This reader accepts exactly RFC 8259
JSON (no `NaN`, no trailing commas, no control characters in strings) and returns:

* `JObject` for objects: `members`, a list of `(key, value, start, end)` in received
  order (repeated keys included), `text[start:end]` being the value's exact text;
* `JArray` for arrays: `items`, a list of `(value, start, end)`;
* `str`, `int`, `float`, `bool` and `None` for scalars (a number with a fraction or
  an exponent is a `float`, as in the Rust SDK's reader).

Strings and numbers are scanned by the standard library's C scanner; only the
structure is walked in Python. It is the slow path: correctness over speed.
"""

from __future__ import annotations

import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from agentproto.codec.syntax import string_stop

__all__ = ["JArray", "JObject", "JsonSyntaxError", "parse"]

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class JsonSyntaxError(ValueError):
    """The text is not JSON. `eof` tells whether the input ended too early."""

    def __init__(self, message: str, position: int, eof: bool) -> None:
        super().__init__(f"{message} at offset {position}")
        self.position = position
        self.eof = eof


class JObject:
    """A JSON object: its members in received order, each with the span of its value."""

    __slots__ = ("end", "members", "start")

    def __init__(self, members: list[tuple[str, Any, int, int]], start: int, end: int) -> None:
        self.members = members
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"JObject({self.members!r})"


class JArray:
    """A JSON array: its items, each with the span of its text."""

    __slots__ = ("end", "items", "start")

    def __init__(self, items: list[tuple[Any, int, int]], start: int, end: int) -> None:
        self.items = items
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"JArray({self.items!r})"


def parse(text: str) -> Any:
    """Parses one JSON value, optionally surrounded by whitespace.

    Raises:
        JsonSyntaxError: the text is not exactly one JSON value.
    """
    reader = _Reader(text)
    start = reader.skip(0)
    value, end = reader.value(start)
    end = reader.skip(end)
    if end != len(text):
        raise JsonSyntaxError("trailing characters", end, eof=False)
    return value


class _Reader:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def skip(self, i: int) -> int:
        match = _WHITESPACE.match(self.text, i)
        return match.end() if match else i

    def fail(self, message: str, i: int) -> JsonSyntaxError:
        return JsonSyntaxError(message, i, eof=i >= len(self.text))

    def value(self, i: int) -> tuple[Any, int]:
        text = self.text
        if i >= len(text):
            raise self.fail("unexpected end of input", i)
        c = text[i]
        if c == '"':
            return self.string(i)
        if c == "{":
            return self.object(i)
        if c == "[":
            return self.array(i)
        if c == "t" and text.startswith("true", i):
            return True, i + 4
        if c == "f" and text.startswith("false", i):
            return False, i + 5
        if c == "n" and text.startswith("null", i):
            return None, i + 4
        match = _NUMBER.match(text, i)
        if match and match.end() > i and (match.group() != "-"):
            end = match.end()
            if match.group(1) is None and match.group(2) is None:
                number = int(match.group())
                # `-0` reads as the double -0.0, as serde_json reads it.
                return (-0.0 if number == 0 and text[i] == "-" else number), end
            return float(match.group()), end
        # A prefix of a literal or a number cut off by the end of the input.
        rest = text[i:]
        if any(word.startswith(rest) for word in ("true", "false", "null")) or rest == "-":
            raise JsonSyntaxError("unexpected end of input", len(text), eof=True)
        raise self.fail("expected a value", i)

    def string(self, i: int) -> tuple[str, int]:
        try:
            value, end = scanstring(self.text, i + 1, True)
        except ValueError:
            # Where and why the string stops is the grammar's to say (its own scan), not
            # the scanner's message.
            stop = string_stop(self.text, i)
            if stop is not None and stop[1]:
                raise JsonSyntaxError("unterminated string", len(self.text), eof=True) from None
            raise self.fail("invalid string", i if stop is None else stop[0]) from None
        return value, end

    def object(self, start: int) -> tuple[JObject, int]:
        text = self.text
        members: list[tuple[str, Any, int, int]] = []
        i = self.skip(start + 1)
        if i < len(text) and text[i] == "}":
            return JObject(members, start, i + 1), i + 1
        while True:
            if i >= len(text):
                raise self.fail("unexpected end of input", i)
            if text[i] != '"':
                raise self.fail("expected a key", i)
            key, i = self.string(i)
            i = self.skip(i)
            if i >= len(text):
                raise self.fail("unexpected end of input", i)
            if text[i] != ":":
                raise self.fail("expected ':'", i)
            vstart = self.skip(i + 1)
            value, vend = self.value(vstart)
            members.append((key, value, vstart, vend))
            i = self.skip(vend)
            if i >= len(text):
                raise self.fail("unexpected end of input", i)
            c = text[i]
            if c == ",":
                i = self.skip(i + 1)
                continue
            if c == "}":
                return JObject(members, start, i + 1), i + 1
            raise self.fail("expected ',' or '}'", i)

    def array(self, start: int) -> tuple[JArray, int]:
        text = self.text
        items: list[tuple[Any, int, int]] = []
        i = self.skip(start + 1)
        if i < len(text) and text[i] == "]":
            return JArray(items, start, i + 1), i + 1
        while True:
            value, end = self.value(i)
            items.append((value, i, end))
            i = self.skip(end)
            if i >= len(text):
                raise self.fail("unexpected end of input", i)
            c = text[i]
            if c == ",":
                i = self.skip(i + 1)
                continue
            if c == "]":
                return JArray(items, start, i + 1), i + 1
            raise self.fail("expected ',' or ']'", i)
