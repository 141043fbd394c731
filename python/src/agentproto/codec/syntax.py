"""Where a line stops being JSON, for the position a parse error (-32700) reports.

The position is defined without reference to any parser, so that every SDK reports the
same one (vectors/README.md, "Error texts"): it is the first character at which the text
stops being the beginning of some JSON text (RFC 8259, whitespace allowed around the
value), or the end of the input when all of it is such a beginning. Lines and columns
count from 1; a column counts characters (code points) from the start of its line. The
scan runs only after the parser has refused a line.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Position", "first_invalid", "position_at", "string_stop"]

_WHITESPACE = " \t\n\r"
_HEX = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")
_ESCAPES = frozenset('"\\/bfnrt')
_LITERALS = {"t": "true", "f": "false", "n": "null"}


@dataclass(frozen=True, slots=True)
class Position:
    """Where a line stopped being JSON."""

    line: int
    """Line number, from 1 (lines end at LF)."""
    column: int
    """Column, from 1, in characters from the start of the line."""
    eof: bool
    """Whether the input ended before the JSON text was complete."""


class _Stop(Exception):
    def __init__(self, offset: int, eof: bool) -> None:
        self.offset = offset
        self.eof = eof


def first_invalid(text: str) -> Position | None:
    """The position of the first character of `text` that cannot continue a JSON text,
    or `None` when `text` is one whole JSON text."""
    try:
        _scan(text)
    except _Stop as stop:
        at = position_at(text[: stop.offset])
        return Position(at.line, at.column, stop.eof)
    return None


def string_stop(text: str, start: int) -> tuple[int, bool] | None:
    """Where the JSON string that opens at `start` (its `"`) stops being one: the offset
    and whether the input ended first; `None` when it is a whole string."""
    try:
        _string(text, start)
    except _Stop as stop:
        return stop.offset, stop.eof
    return None


def position_at(before: str) -> Position:
    """The position just after `before` (the text of a line up to some point)."""
    line_start = before.rfind("\n") + 1
    return Position(before.count("\n") + 1, len(before) - line_start + 1, False)


def _ws(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WHITESPACE:
        i += 1
    return i


def _scan(s: str) -> None:
    n = len(s)
    stack: list[str] = []
    want = "value"
    i = _ws(s, 0)
    while True:
        if want == "value":
            i = _ws(s, i)
            if i == n:
                raise _Stop(n, True)
            c = s[i]
            if c in "{[":
                close = "}" if c == "{" else "]"
                i = _ws(s, i + 1)
                if i < n and s[i] == close:
                    i += 1
                    want = "after"
                else:
                    stack.append(c)
                    want = "key" if c == "{" else "value"
                continue
            if c == '"':
                i = _string(s, i)
            elif c in _LITERALS:
                i = _literal(s, i, _LITERALS[c])
            elif c == "-" or c in _DIGITS:
                i = _number(s, i)
            else:
                raise _Stop(i, False)
            want = "after"
        elif want == "key":
            i = _ws(s, i)
            if i == n:
                raise _Stop(n, True)
            if s[i] != '"':
                raise _Stop(i, False)
            i = _ws(s, _string(s, i))
            if i == n:
                raise _Stop(n, True)
            if s[i] != ":":
                raise _Stop(i, False)
            i += 1
            want = "value"
        else:
            i = _ws(s, i)
            if not stack:
                if i < n:
                    raise _Stop(i, False)
                return
            if i == n:
                raise _Stop(n, True)
            c, top = s[i], stack[-1]
            if c == ",":
                want = "key" if top == "{" else "value"
            elif (c, top) in (("}", "{"), ("]", "[")):
                stack.pop()
            else:
                raise _Stop(i, False)
            i += 1


def _string(s: str, i: int) -> int:
    n = len(s)
    j = i + 1
    while True:
        if j == n:
            raise _Stop(n, True)
        c = s[j]
        if c == '"':
            return j + 1
        if c < " ":
            raise _Stop(j, False)
        if c != "\\":
            j += 1
            continue
        if j + 1 == n:
            raise _Stop(n, True)
        e = s[j + 1]
        if e in _ESCAPES:
            j += 2
        elif e == "u":
            for k in range(j + 2, j + 6):
                if k == n:
                    raise _Stop(n, True)
                if s[k] not in _HEX:
                    raise _Stop(k, False)
            j += 6
        else:
            raise _Stop(j + 1, False)


def _literal(s: str, i: int, word: str) -> int:
    for k, c in enumerate(word):
        if i + k == len(s):
            raise _Stop(len(s), True)
        if s[i + k] != c:
            raise _Stop(i + k, False)
    return i + len(word)


def _digits(s: str, j: int) -> int:
    while j < len(s) and s[j] in _DIGITS:
        j += 1
    return j


def _first_digit(s: str, j: int) -> int:
    """One required digit at `j`, then any more."""
    if j == len(s):
        raise _Stop(j, True)
    if s[j] not in _DIGITS:
        raise _Stop(j, False)
    return _digits(s, j + 1)


def _number(s: str, i: int) -> int:
    n = len(s)
    j = i + 1 if s[i] == "-" else i
    if j == n:
        raise _Stop(n, True)
    if s[j] == "0":
        j += 1
    elif s[j] in _DIGITS:
        j = _digits(s, j + 1)
    else:
        raise _Stop(j, False)
    if j < n and s[j] == ".":
        j = _first_digit(s, j + 1)
    if j < n and s[j] in "eE":
        j += 1
        if j < n and s[j] in "+-":
            j += 1
        j = _first_digit(s, j)
    return j
