"""Unit tests of the protobuf codec emitter (`rust_a2a_proto.py`) and of the proto
numbers the reader keeps for it."""

from __future__ import annotations

import json
import unittest

from agentproto_codegen import __main__ as cli
from agentproto_codegen import rust_a2a_proto
from agentproto_codegen.model import Enum, Struct, Union

from .test_proto_reader import read_small


class ProtoNumberTests(unittest.TestCase):
    def test_fields_members_and_enum_values_keep_their_numbers(self) -> None:
        s = read_small()
        thing = s.decls["Thing"]
        assert isinstance(thing, Struct)
        self.assertEqual([(f.wire, f.number) for f in thing.fields], [("id", 1), ("parts", 2), ("count", 3), ("done", 4), ("labels", 5), ("color", 6)])
        part = s.decls["Part"]
        assert isinstance(part, Struct)
        self.assertEqual([(m.wire, m.number) for m in part.oneofs[0].members], [("text", 1), ("rawBytes", 2)])
        either = s.decls["Either"]
        assert isinstance(either, Union)
        self.assertEqual([(v.tag, v.number) for v in either.variants], [("thing", 1), ("part", 2)])
        color = s.decls["Color"]
        assert isinstance(color, Enum)
        self.assertEqual(color.numbers, [1])

    def test_the_dump_carries_numbers_only_for_a_proto_model(self) -> None:
        models = cli.build_models(cli.verify_pins())

        def numbered(name: str) -> int:
            decls = json.loads(models[name].to_json())["decls"].values()
            fields = [f for d in decls for f in d.get("fields", []) + d.get("variants", [])]
            return sum("number" in f for f in fields) + sum("numbers" in d for d in decls)

        self.assertGreater(numbered("a2a-v1"), 100)
        self.assertEqual(numbered("acp-v1"), 0)


class ProtoEmitterTests(unittest.TestCase):
    def setUp(self) -> None:
        self.text = rust_a2a_proto.emit(read_small())

    def test_every_message_gets_a_codec_and_choices_do_not(self) -> None:
        for name in ("Thing", "Part", "GetThingRequest", "ThingsResponse", "Either", "Empty"):
            self.assertIn(f"impl Proto for {name} {{", self.text)
        self.assertNotIn("impl Proto for PartContent", self.text)
        self.assertIn("impl wire::ProtoEnum for Color {", self.text)
        self.assertIn("1 => Self::Red,", self.text)

    def test_presence_follows_proto3(self) -> None:
        t = self.text
        # Implicit presence: written only when not zero; `optional`: when set.
        self.assertIn("if *v {", t)  # bool done
        self.assertIn("if let Some(v) = &self.count {", t)
        # A REQUIRED repeated field needs an item; a REQUIRED oneof a member.
        self.assertIn('at.key("parts").min_items(&f_parts, 1)?;', t)
        self.assertIn('_ => return Err(at.missing_one_of("\\"text\\", \\"rawBytes\\"")),', t)
        # A message member merges when given twice; a string member does not.
        self.assertIn('1 => o_content.set(1, r.len(wt, &at.key("text"))?, false),', t)
        self.assertIn('1 => choice.set(1, r.len(wt, &at.key("thing"))?, true),', t)
        # Maps are entries of key 1 and value 2.
        self.assertIn('wire::map_entry(r.len(wt, &k)?, &k, false)?', t)

    def test_fields_are_written_in_number_order(self) -> None:
        body = self.text[self.text.index("impl Proto for Part {"):]
        body = body[: body.index("fn encode_raw")]
        self.assertLess(body.index("PartContent::Text"), body.index("struct_field(3"))

    def test_unsupported_constructs_fail_loudly(self) -> None:
        s = read_small()
        thing = s.decls["Thing"]
        assert isinstance(thing, Struct)
        thing.fields[0].number = None
        with self.assertRaisesRegex(ValueError, "no proto field number"):
            rust_a2a_proto.emit(s)

    def test_the_committed_module_is_current(self) -> None:
        models = cli.build_models(cli.verify_pins())
        committed = (cli.ROOT / rust_a2a_proto.RUST_OUT).read_text()
        self.assertEqual(cli.rustfmt(rust_a2a_proto.emit(models["a2a-v1"])), committed)


if __name__ == "__main__":
    unittest.main()
