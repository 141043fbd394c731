"""A2A 0.3 <-> 1.0: the conversion engine. A shape says how one JSON value looks in 0.3
and in 1.0, and the same description is walked either way. The shapes are generated
tables (`agentproto.a2a.generated.v03`, from the pinned 0.3 schema, the 1.0 proto and
`rules/a2a.toml [v03]`, the tables the Rust and TypeScript SDKs walk too); where the two
versions differ in structure (parts, push authentication schemes, the card's
interfaces, …) the tables name the hand-written functions of `compat_v03_custom`.

Every conversion is JSON in, JSON out (trees as `msgspec.json.decode` gives them). Bad
input is an `INVALID_PARAMS` `A2aError` whose message and `path` name the JSON path of
the offending value. What 1.0 cannot say is dropped on the way up (0.3 `final`, all but
the first push authentication scheme), and what 0.3 cannot say on the way down
(`tenant`, `mediaType` and `filename` on text and data parts). An absent `blocking`
stays absent; a present one becomes `returnImmediately: not blocking`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.generated.v03 import ENUMS, METHODS, SHAPES

__all__ = [
    "Direction",
    "Method",
    "bad",
    "convert",
    "is_final_event",
    "method_named",
    "params_to_v03",
    "params_to_v1",
    "result_to_v03",
    "result_to_v1",
]

Direction = Literal["v1", "v03"]
"""Which way a conversion goes: `v1` from the 0.3 shapes to 1.0 ProtoJSON, `v03` back."""

Method = tuple[str, str, str, str]
"""A 0.3 method: (0.3 name, 1.0 operation, params shape, result shape)."""


def _describe(v: Any) -> str:
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False) if len(v) <= 40 else "a string"
    return "an array" if isinstance(v, list) else "an object"


def bad(path: str, expected: str, found: Any) -> A2aError:
    """An `INVALID_PARAMS` error at `path`."""
    text = _describe(found)
    error = A2aError(ErrorKind.INVALID_PARAMS, f"Invalid parameters at {path}: expected {expected}, found {text}")
    return error.with_metadata("path", path).with_metadata("expected", expected).with_metadata("found", text)


def obj(v: Any, path: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise bad(path, "an object", v)
    return v


def text(v: Any, path: str) -> str:
    if not isinstance(v, str):
        raise bad(path, "a string", v)
    return v


def get(m: dict[str, Any], name: str) -> Any:
    """A member that is present and not `null` (else `None`)."""
    return m.get(name)


def member(path: str, name: str) -> str:
    return f"{path}.{name}"


def convert(shape: Any, direction: Direction, value: Any, path: str) -> Any:
    """Converts `value` (found at `path`) by `shape` (a shape's name or an inline shape)."""
    from agentproto.a2a import compat_v03_custom as custom

    s = SHAPES[shape] if isinstance(shape, str) else shape
    kind = s[0]
    if kind == "object":
        src = obj(value, path)
        out: dict[str, Any] = {}
        for rule in s[1]:
            _apply(rule, direction, src, out, path)
        return out
    if kind == "union":
        return _union(s[1], s[2], direction, value, path)
    if kind == "wrapped":
        field, item = s[1], s[2]
        if direction == "v1":
            if not isinstance(value, list):
                raise bad(path, "an array", value)
            return {field: _list(item, direction, value, path)}
        src = obj(value, path)
        items = get(src, field)
        if items is None:
            return []
        p = member(path, field)
        if not isinstance(items, list):
            raise bad(p, "an array", items)
        return _list(item, direction, items, p)
    if kind == "empty":
        return {} if direction == "v1" else None
    if kind == "no_params":
        return {}  # 0.3 sends no params (whatever is there is ignored); the 1.0 request is empty
    return custom.value(s[1], direction, value, path)


def _list(shape: str, direction: Direction, items: list[Any], path: str) -> list[Any]:
    return [convert(shape, direction, v, f"{path}[{i}]") for i, v in enumerate(items)]


def _union(tag: str, variants: tuple[tuple[str, str, str], ...], direction: Direction, value: Any, path: str) -> Any:
    src = obj(value, path)
    if direction == "v1":
        tags = "one of " + ", ".join(json.dumps(t) for _, t, _ in variants)
        p = member(path, tag)
        t = get(src, tag)
        if t is None:
            raise bad(p, tags, None)
        found = next((v for v in variants if v[1] == text(t, p)), None)
        if found is None:
            raise bad(p, tags, t)
        return {found[0]: convert(found[2], direction, value, path)}
    present = [v for v in variants if get(src, v[0]) is not None]
    if len(present) != 1:
        raise bad(path, "exactly one of " + ", ".join(m for m, _, _ in variants), value)
    m, t, shape = present[0]
    p = member(path, m)
    inner = convert(shape, direction, src[m], p)
    if not isinstance(inner, dict):
        raise bad(p, "an object", inner)
    inner[tag] = t
    return inner


def enum_value(table: str, direction: Direction, v: Any, path: str) -> Any:
    """Looks a value up in an enum table, in the direction's source column; 1.0 values may
    also be numbers, as ProtoJSON allows."""
    rows = ENUMS[table]
    if direction == "v1":
        row = next((r for r in rows if r[0] == v), None)
    else:
        number = type(v) is int
        row = next((r for r in rows if r[1] == v or (number and r[2] == v)), None)
    if row is not None:
        return row[1] if direction == "v1" else row[0]
    column = 0 if direction == "v1" else 1
    raise bad(path, "one of " + ", ".join(json.dumps(r[column]) for r in rows), v)


def _names(direction: Direction, v03: str, v1: str) -> tuple[str, str]:
    return (v03, v1) if direction == "v1" else (v1, v03)


def _apply(
    rule: tuple[str, str, str, Any], direction: Direction, src: dict[str, Any], out: dict[str, Any], path: str
) -> None:
    from agentproto.a2a import compat_v03_custom as custom

    op, a, b, x = rule
    if op == "Copy":
        if (v := get(src, a)) is not None:
            out[a] = v
        return
    if op == "CopyRequired":
        v = get(src, a)
        if v is not None:
            out[a] = v
        elif direction == "v03":
            out[a] = ""
        return
    if op == "Const":
        if direction == "v03":
            out[a] = b
            return
        v = get(src, a)
        if v is not None and v != b:
            raise bad(member(path, a), json.dumps(b), v)
        return
    if op == "Flatten":
        if direction == "v1":
            v = get(src, a)
            if v is None:
                return
            inner = convert(x, direction, v, member(path, a))
            if isinstance(inner, dict):
                out.update(inner)
            return
        out[a] = convert(x, direction, src, path)
        return
    if op == "Members":
        custom.members(x, direction, src, out, path)
        return
    source, target = _names(direction, a, b)
    v = get(src, source)
    if v is None:
        return
    p = member(path, source)
    if op == "Rename":
        out[target] = v
    elif op == "Field":
        out[target] = convert(x, direction, v, p)
    elif op == "List":
        if not isinstance(v, list):
            raise bad(p, "an array", v)
        out[target] = _list(x, direction, v, p)
    elif op == "Map":
        out[target] = {k: convert(x, direction, item, member(p, k)) for k, item in obj(v, p).items()}
    elif op == "Enum":
        out[target] = enum_value(x, direction, v, p)
    elif op == "Not":
        if not isinstance(v, bool):
            raise bad(p, "a boolean", v)
        out[target] = not v
    else:
        raise AssertionError(op)


def method_named(name: str) -> Method | None:
    """The 0.3 method with this name."""
    found = METHODS.get(name)
    return None if found is None else (name, *found)


def params_to_v1(method: Method, params: Any) -> Any:
    """0.3 params → 1.0 request (paths start at `$.params`; absent params are `None`)."""
    return convert(method[2], "v1", params, "$.params")


def params_to_v03(method: Method, params: Any) -> Any:
    """1.0 request → 0.3 params."""
    return convert(method[2], "v03", params, "$.params")


def result_to_v03(method: Method, result: Any) -> Any:
    """1.0 answer → 0.3 result; for the streaming methods, one event."""
    return convert(method[3], "v03", result, "$.result")


def result_to_v1(method: Method, result: Any) -> Any:
    """0.3 result → 1.0 answer; for the streaming methods, one event."""
    return convert(method[3], "v1", result, "$.result")


def is_final_event(event: Any) -> bool:
    """Whether a 0.3 stream event closes the stream: a status update whose `final` is
    true, or whose state is terminal or interrupted."""
    from agentproto.a2a.compat_v03_custom import FINAL_STATES

    if not isinstance(event, dict) or event.get("kind") != "status-update":
        return False
    if event.get("final") is True:
        return True
    status = event.get("status")
    return isinstance(status, dict) and status.get("state") in FINAL_STATES
