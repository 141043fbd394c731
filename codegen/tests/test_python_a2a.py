"""The Python A2A emitter (`python_a2a.py`) on small models: what each model shape
becomes (a oneof, a keyed union, a shadowed builtin) and the error table's rows."""

from __future__ import annotations

import unittest
from typing import Any

from agentproto_codegen import python_a2a
from agentproto_codegen.a2a_errors import ErrorRow, Table


def field(wire: str, t: dict[str, Any], **extra: Any) -> dict[str, Any]:
    base = {"wire": wire, "type": t, "required": False, "has_default": False, "default": None, "aliases": []}
    return {**base, **extra}


STRING = {"kind": "prim", "prim": "string"}


def model(decls: dict[str, Any]) -> dict[str, Any]:
    return {
        "sources": [{"file": "a.proto", "sha256": "00"}],
        "wire_version": "1.0",
        "rules": {"rest": {"query_true": ["true"], "query_false": ["false"]}},
        "methods": [],
        "decls": {name: {"name": name, **d} for name, d in decls.items()},
    }


PART = {
    "decl": "struct",
    "fields": [field("mediaType", STRING, has_default=True, default="", aliases=["media_type"])],
    "oneofs": [
        {
            "name": "content",
            "type_name": "PartContent",
            "members": [field("text", STRING), field("data", {"kind": "json", "object_only": False})],
        }
    ],
}
CHOICE = {"decl": "union", "strategy": "keyed", "variants": [], "aliases": {}}
EVENT = {
    "decl": "union",
    "strategy": "keyed",
    "variants": [{"tag": "statusUpdate", "payload": {"kind": "named", "name": "Part"}}],
    "aliases": {"statusUpdate": "status_update"},
}
LISTED = {"decl": "struct", "fields": [field("list", {"kind": "array", "item": STRING}, has_default=True, default=[])], "oneofs": []}


class PythonA2aEmitterTests(unittest.TestCase):
    def setUp(self) -> None:
        m = model({"Part": PART, "PartContent": CHOICE, "Event": EVENT, "Listed": LISTED})
        self.types = python_a2a.types_module(m)
        self.decode = python_a2a.decode_module(m)

    def test_a_oneof_is_one_optional_member_per_choice_checked_after_init(self) -> None:
        self.assertIn("    text: str | UnsetType = field(default=UNSET)", self.types)
        self.assertIn('_pj.not_one(("text", "data",))', self.types)
        self.assertNotIn("class PartContent", self.types, "the choice union is the struct's members")

    def test_a_value_member_reads_null_as_a_value(self) -> None:
        data = self.decode.split('key == "data"')[1].split("return Part(")[0]
        self.assertNotIn("if v is None", data)
        text = self.decode.split('key == "text"')[1].split("elif")[0]
        self.assertIn("if v is None", text)

    def test_a_keyed_union_reads_its_aliases(self) -> None:
        self.assertIn("class Event(Struct", self.types)
        self.assertIn('key == "statusUpdate" or key == "status_update"', self.decode)
        self.assertIn('raise _pj.missing_one_of(path, ("statusUpdate",))', self.decode)

    def test_a_member_named_like_a_builtin_does_not_shadow_it(self) -> None:
        self.assertIn("list: builtins.list[str] = field(default_factory=builtins.list)", self.types)

    def test_only_a_type_on_a_reference_cycle_is_tracked_by_the_garbage_collector(self) -> None:
        self.assertIn("class Part(Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, gc=False):", self.types)
        self.assertIn("class Event(Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, gc=False):", self.types)
        tree = {"decl": "struct", "fields": [field("children", {"kind": "array", "item": {"kind": "named", "name": "Tree"}})], "oneofs": []}
        holder = {"decl": "struct", "fields": [field("trees", {"kind": "map", "value": {"kind": "named", "name": "Tree"}})], "oneofs": []}
        ping = {"decl": "struct", "fields": [field("pong", {"kind": "named", "name": "Pong"})], "oneofs": []}
        pong = {"decl": "struct", "fields": [field("pings", {"kind": "array", "item": {"kind": "named", "name": "Ping"}})], "oneofs": []}
        types = python_a2a.types_module(model({"Tree": tree, "Holder": holder, "Ping": ping, "Pong": pong}))
        for tracked in ("Tree", "Ping", "Pong"):
            self.assertIn(f"class {tracked}(Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):", types)
        self.assertIn("class Holder(Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, gc=False):", types)

    def test_an_enum_is_hashed_by_identity(self) -> None:
        m = model({"State": {"decl": "enum", "values": ["STATE_A", "STATE_B"], "strip_prefix": "STATE_"}})
        types = python_a2a.types_module(m)
        state = types.split("class State(enum.Enum):")[1].split("\nclass ")[0]
        self.assertIn("    __hash__ = object.__hash__", state)
        self.assertIn("    __hash__ = object.__hash__", types.split("class Operation(enum.Enum):")[1])

    def test_the_error_table_is_written_from_its_rows(self) -> None:
        row = ErrorRow("TaskNotFound", "no such task", -32001, -32001, (404, 404), ("NOT_FOUND", "NOT_FOUND"),
                       "NOT_FOUND", "TASK_NOT_FOUND", "Task not found", (404,), "spec")
        text = python_a2a.errors_module(Table([row], "https://example", [("rules.toml", "aa"), ("s.json", "bb")]))
        self.assertIn('TASK_NOT_FOUND = "TaskNotFound"', text)
        self.assertIn('ErrorKind.TASK_NOT_FOUND: ErrorRow(ErrorKind.TASK_NOT_FOUND, -32001, -32001, (404, 404)', text)
        self.assertIn("_BY_HTTP: Final = {404: ErrorKind.TASK_NOT_FOUND}", text)


if __name__ == "__main__":
    unittest.main()
