"""Seed 001's payloads, built for every side alike (workloads.md, "Seed 001").

The dicts are the seed's deserialize inputs, read from the JSON files beside this
module. The objects are built from one description per size, so each side gets the
same content in its own types:

* Small: one text block, ``"Hello, world!"``.
* Medium: a ``session/prompt`` params with 10 text blocks ``"Message block i"`` and an
  ``initialize`` result (protocol 1; loadSession; image and audio prompts;
  agent ``bench-agent`` 1.0.0).
* Large: 20 tool calls (tc-0 … tc-19) with two locations and nested raw input and
  output each, the seed's ``ZD_LARGE``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _load(name: str) -> Any:
    return json.loads((HERE / name).read_text())


SMALL_WIRE = _load("small_wire.json")
MEDIUM_PROMPT_WIRE = _load("medium_prompt_wire.json")
MEDIUM_INIT_WIRE = _load("medium_init_wire.json")
LARGE_WIRE = _load("large_wire.json")
EXPECTED_ZERODEP_MEDIUM_INIT = _load("expected_to_dict_medium_init.json")

SMALL_TEXT = "Hello, world!"
MEDIUM_SESSION = "sess-medium"
MEDIUM_TEXTS = [f"Message block {i}" for i in range(10)]
KINDS = ["read", "edit", "execute"]
STATUSES = ["pending", "in_progress", "completed", "failed"]


def tool_call(i: int) -> dict[str, Any]:
    """The seed's Large item ``i``, as plain Python values (snake_case names)."""
    return {
        "tool_call_id": f"tc-{i}",
        "title": f"Tool call {i}: " + KINDS[i % 3],
        "kind": KINDS[i % 3],
        "status": STATUSES[i % 4],
        "locations": [(f"/project/src/file_{i}.py", i * 10 + 1), (f"/project/src/file_{i}_test.py", i * 5)],
        "raw_input": {
            "command": f"operation_{i}",
            "args": {"file": f"file_{i}.py", "line": i * 10},
            "nested": {"deep": {"value": i * 42}},
        },
        "raw_output": {
            "stdout": f"Output line {i}\nSecond line {i}",
            "exit_code": 0 if i % 4 != 3 else 1,
            "duration_ms": i * 100 + 50,
        },
    }


LARGE_ITEMS = [tool_call(i) for i in range(20)]
