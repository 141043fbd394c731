"""Seed 001's table as pytest-benchmark tests: nine classes
``Test{Serialize,Deserialize,JsonRoundTrip}{Small,Medium,Large}``, each with one test
per implementation (``sides.py``), as the seed's ``acp/test_acp_benchmark.py`` has one
per library. Run by ``bench/run.py`` (``bench/seed001.py``):

    python3 -m pytest bench/python/seed001 --benchmark-only          # timed
    python3 -m pytest bench/python/seed001 --benchmark-disable       # each call once, checked

Before timing, every test checks once that its call gives the right answer (the same
content as the seed's dicts), so a broken side cannot post a number.
"""

from __future__ import annotations

import json
from typing import Any

import agentproto_dicts as ap
import payloads as p
import pytest
import sides

OPERATIONS = {"Serialize": "serialize", "Deserialize": "deserialize", "JsonRoundTrip": "roundtrip"}
SIZES = ("Small", "Medium", "Large")
_ops: dict[str, sides.Ops | None] = {}


def ops(side: str) -> sides.Ops:
    if side not in _ops:
        _ops[side] = sides.SIDES[side]()
    found = _ops[side]
    if found is None:
        pytest.skip(f"zerodep not measured: {sides.ZERODEP_ENV} is not set (bench/README.md, seed 001)")
    return found


def _plain(value: Any, side: str) -> Any:
    """What a side's serialize gives, as plain data to compare with the seed's dicts."""
    return json.loads(value) if side == "agentproto_json" else value


def _reserialize(value: Any, side: str) -> Any:
    """A decoded object back to plain data, with the side's own serialize."""
    if side == "official":
        return value.model_dump(by_alias=True, exclude_none=True)
    if side == "agentproto":
        return ap.to_dict(value)
    return json.loads(ap.to_json(value))


def _same_content(got: Any, wire: Any, where: str) -> None:
    """Every member of the seed's dict is there with its value; sides may add members
    (defaults they write) and leave out the tags the seed's dicts carry but their own
    type does not (the official ``TextContent`` has no ``type``; a ``ToolCallUpdate`` has
    no ``sessionUpdate``)."""
    if isinstance(wire, dict):
        assert isinstance(got, dict), f"{where}: {got!r} is not an object"
        for key, value in wire.items():
            if key in ("sessionUpdate", "type") and key not in got:
                continue
            assert key in got, f"{where}: {key} missing in {got}"
            _same_content(got[key], value, f"{where}.{key}")
    elif isinstance(wire, list):
        assert isinstance(got, list) and len(got) == len(wire), f"{where}: {got!r}"
        for i, (g, w) in enumerate(zip(got, wire, strict=True)):
            _same_content(g, w, f"{where}[{i}]")
    else:
        assert got == wire and type(got) is type(wire), f"{where}: {got!r}, the seed has {wire!r}"


WIRES = {"small": [p.SMALL_WIRE], "medium": [p.MEDIUM_PROMPT_WIRE, p.MEDIUM_INIT_WIRE], "large": p.LARGE_WIRE}


def _check(side: str, operation: str, size: str) -> None:
    """One call, its answer checked against the seed's dicts: serializing gives their
    content; decoding (alone or after the round trip) gives objects that serialize to
    it again (zerodep: dicts with the same values under snake_case keys)."""
    result = ops(side)[f"{operation}-{size}"]()
    results = [result] if size == "small" else list(result)
    wires = WIRES[size]
    assert len(results) == len(wires)
    if side == "zerodep" and operation == "serialize":
        # zerodep's own output is what the seed's files were written from, exactly.
        exact = {"small": [p.SMALL_WIRE], "medium": [p.MEDIUM_PROMPT_WIRE, p.EXPECTED_ZERODEP_MEDIUM_INIT]}
        assert results == exact.get(size, p.LARGE_WIRE), f"zerodep serialize-{size}"
    for i, (got, wire) in enumerate(zip(results, wires, strict=True)):
        where = f"{side} {operation}-{size}[{i}]"
        if operation == "serialize":
            _same_content(_plain(got, side), wire, where)
        elif side == "zerodep":
            assert isinstance(got, dict), where
            _same_content(list(got.values()), list(wire.values()), where)
        else:
            _same_content(_reserialize(got, side), wire, where)


def _bench(side: str, operation: str, size: str, benchmark: Any) -> None:
    _check(side, operation, size.lower())
    benchmark(ops(side)[f"{operation}-{size.lower()}"])


def _make_class(op_title: str, size: str) -> type:
    operation = OPERATIONS[op_title]
    group = f"{operation}-{size.lower()}"
    members: dict[str, Any] = {"__doc__": f"Seed 001, {operation}, {size}."}
    for side in sides.SIDES:

        def test(self: Any, benchmark: Any, side: str = side) -> None:
            _bench(side, operation, size, benchmark)

        test.__name__ = f"test_{side}"
        members[f"test_{side}"] = pytest.mark.benchmark(group=group)(test)
    return type(f"Test{op_title}{size}", (), members)


for _op in OPERATIONS:
    for _size in SIZES:
        _cls = _make_class(_op, _size)
        globals()[_cls.__name__] = _cls
