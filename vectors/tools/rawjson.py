"""A JSON reader that keeps the source text of every value.

The canonical encoder (canonical.py) writes free-form values (`_meta`, `rawInput`,
extension payloads) and the members of unknown union variants exactly as they were
received, so it needs the text of each value, not only its parsed form. `json` does
not give positions; this small reader does. It accepts exactly RFC 8259 JSON and keeps
repeated keys (free-form objects may repeat them).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_WS = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


@dataclass
class Node:
    """One JSON value: its kind, its exact source text and its children."""

    kind: str  # object, array, string, number, true, false, null
    text: str
    members: list[tuple[str, "Node"]] = field(default_factory=list)  # objects, in source order
    items: list["Node"] = field(default_factory=list)  # arrays

    def member(self, key: str) -> "Node | None":
        """The first member named `key` (known keys are never repeated in a decoded message)."""
        for k, v in self.members:
            if k == key:
                return v
        return None

    def value(self):
        """The parsed value (repeated keys: the last one wins, as in most JSON readers)."""
        return json.loads(self.text)


def parse(text: str) -> Node:
    """Parses one JSON value, optionally surrounded by whitespace."""
    node, end = _value(text, _skip(text, 0))
    end = _skip(text, end)
    if end != len(text):
        raise ValueError(f"trailing data at offset {end}")
    return node


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def _string_end(s: str, i: int) -> int:
    """The offset just after the string that starts at `s[i] == '"'`."""
    j = i + 1
    while True:
        if j >= len(s):
            raise ValueError(f"unterminated string at offset {i}")
        c = s[j]
        if c == '"':
            return j + 1
        if c == "\\":
            j += 2
            continue
        if ord(c) < 0x20:
            raise ValueError(f"control character in string at offset {j}")
        j += 1


def _value(s: str, i: int) -> tuple[Node, int]:
    if i >= len(s):
        raise ValueError("unexpected end of input")
    c = s[i]
    if c == "{":
        return _object(s, i)
    if c == "[":
        return _array(s, i)
    if c == '"':
        end = _string_end(s, i)
        json.loads(s[i:end])  # validates the escapes
        return Node("string", s[i:end]), end
    for word in _LITERALS:
        if s.startswith(word, i):
            return Node(word, word), i + len(word)
    m = _NUMBER.match(s, i)
    if m:
        return Node("number", m.group()), m.end()
    raise ValueError(f"unexpected {c!r} at offset {i}")


def _object(s: str, start: int) -> tuple[Node, int]:
    node = Node("object", "")
    i = _skip(s, start + 1)
    if i < len(s) and s[i] == "}":
        node.text = s[start:i + 1]
        return node, i + 1
    while True:
        if i >= len(s) or s[i] != '"':
            raise ValueError(f"expected a key at offset {i}")
        end = _string_end(s, i)
        key = json.loads(s[i:end])
        i = _skip(s, end)
        if i >= len(s) or s[i] != ":":
            raise ValueError(f"expected ':' at offset {i}")
        value, i = _value(s, _skip(s, i + 1))
        node.members.append((key, value))
        i = _skip(s, i)
        if i < len(s) and s[i] == ",":
            i = _skip(s, i + 1)
            continue
        if i < len(s) and s[i] == "}":
            node.text = s[start:i + 1]
            return node, i + 1
        raise ValueError(f"expected ',' or '}}' at offset {i}")


def _array(s: str, start: int) -> tuple[Node, int]:
    node = Node("array", "")
    i = _skip(s, start + 1)
    if i < len(s) and s[i] == "]":
        node.text = s[start:i + 1]
        return node, i + 1
    while True:
        item, i = _value(s, i)
        node.items.append(item)
        i = _skip(s, i)
        if i < len(s) and s[i] == ",":
            i = _skip(s, i + 1)
            continue
        if i < len(s) and s[i] == "]":
            node.text = s[start:i + 1]
            return node, i + 1
        raise ValueError(f"expected ',' or ']' at offset {i}")
