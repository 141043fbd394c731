"""Unit tests of the Python A2A table emitters: the protobuf tables
(`python_a2a_proto.py`) and the 0.3 <-> 1.0 tables (`python_a2a_v03.py`)."""

from __future__ import annotations

import json
import unittest
from pathlib import Path
from typing import Any

from agentproto_codegen import a2a_v03, python_a2a_proto, python_a2a_v03

from .test_proto_reader import read_small

ROOT = Path(__file__).resolve().parents[2]


def load(text: str) -> dict[str, Any]:
    """The names a generated module defines."""
    names: dict[str, Any] = {}
    exec(compile(text, "<generated>", "exec"), names)  # noqa: S102 - our own emitter's output
    return names


class ProtoTableTests(unittest.TestCase):
    def setUp(self) -> None:
        self.model = json.loads(read_small().to_json())
        self.tables = load(python_a2a_proto.emit(self.model, ["# header"]))

    def test_messages_and_keyed_unions_get_rows_and_choices_do_not(self) -> None:
        messages = self.tables["MESSAGES"]
        for name in ("Thing", "Part", "Either"):
            self.assertIn(name, messages)
        self.assertNotIn("PartContent", messages)
        self.assertEqual([(n, key) for n, key, *_ in messages["Either"]], [(1, "thing"), (2, "part")])
        self.assertEqual({r[2] for r in messages["Either"]}, {"oneof"})

    def test_rows_are_in_number_order_with_presence_as_proto3_has_it(self) -> None:
        rows = {key: row for row in self.tables["MESSAGES"]["Thing"] for key in [row[1]]}
        numbers = [row[0] for row in self.tables["MESSAGES"]["Thing"]]
        self.assertEqual(numbers, sorted(numbers))
        self.assertEqual(rows["parts"][2:], ("repeated", "message", "Part"))
        self.assertEqual(rows["count"][2:], ("optional", "int32", ""))
        self.assertEqual(rows["color"][2:], ("implicit", "enum", "Color"))
        self.assertEqual(self.tables["ENUMS"]["Color"], {"COLOR_RED": 1})

    def test_the_real_model_has_every_operation_and_unique_numbers(self) -> None:
        model = json.loads((ROOT / "codegen/model/a2a-v1.json").read_bytes())
        tables = load(python_a2a_proto.emit(model, ["# header"]))
        self.assertEqual(tables["SERVICE"], "lf.a2a.v1.A2AService")
        self.assertEqual(set(tables["METHODS"]), {m["wire"] for m in model["methods"]})
        for name, rows in tables["MESSAGES"].items():
            numbers = [row[0] for row in rows]
            self.assertEqual(len(numbers), len(set(numbers)), name)
            for _, _, _, kind, type_name in rows:
                if kind == "message":
                    self.assertIn(type_name, tables["MESSAGES"], name)
                if kind == "enum":
                    self.assertIn(type_name, tables["ENUMS"], name)


class V03TableTests(unittest.TestCase):
    def test_the_python_tables_hold_what_the_reader_derived(self) -> None:
        tables = a2a_v03.read(ROOT)
        names = load(python_a2a_v03.python(tables))
        self.assertEqual(set(names["SHAPES"]), set(tables.shapes))
        self.assertEqual(
            names["METHODS"], {m.name: (m.operation, m.params, m.result) for m in tables.methods}
        )
        self.assertEqual(names["ENUMS"], {k: tuple(e.rows) for k, e in tables.enums.items()})
        for name, shape in tables.shapes.items():
            emitted = names["SHAPES"][name]
            self.assertEqual(emitted[0], "value" if shape.kind == "custom" else shape.kind, name)
            if shape.kind == "object":
                self.assertEqual([r[0] for r in emitted[1]], [r.op for r in shape.rules], name)
            # Every shape a rule names is a shape of the table.
            for rule in emitted[1] if shape.kind == "object" else ():
                if rule[0] in ("Field", "List", "Map", "Flatten") and isinstance(rule[3], str):
                    self.assertIn(rule[3], names["SHAPES"], f"{name}: {rule}")


if __name__ == "__main__":
    unittest.main()
