"""Unit tests of the ACP schema reader and the Rust emitter (python3 -m unittest)."""

from __future__ import annotations

import json
import unittest
from pathlib import Path

from agentproto_codegen import __main__ as cli
from agentproto_codegen import acp, rules, rust
from agentproto_codegen.model import ArrayRef, JsonRef, NamedRef, Struct, Union

ROOT = Path(__file__).resolve().parents[2]


def read(version: str = "v1", surface: str = "schema") -> acp.Spec:
    meta = surface.replace("schema", "meta")
    return acp.read_spec(str(ROOT / f"spec/acp/{version}/{surface}.json"), str(ROOT / f"spec/acp/{version}/{meta}.json"), "0" * 64, version, surface, None)


def surface(version: str = "v1") -> acp.Spec:
    """The stable surface as the generator emits it: cut from the one model, rules applied."""
    hashes = cli.verify_pins()
    model = acp.read_version(str(ROOT / "spec"), version, hashes)
    rules.apply_acp(model, ROOT / "rules/acp.toml", ROOT / f"spec/acp/{version}/schema.unstable.json")
    schema = f"acp/{version}/schema.json"
    return model.narrow({"stable"} if version == "v1" else {"draft"}, "stable", schema, hashes[schema])


class ReaderTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.v1 = read()

    def test_stable_v1_has_the_25_method_names(self) -> None:
        names = {m.wire for m in self.v1.methods}
        self.assertEqual(len(names), 25)
        prompt = next(m for m in self.v1.methods if m.wire == "session/prompt")
        self.assertEqual((prompt.kind, prompt.side, prompt.params, prompt.result), ("request", "agent", "PromptRequest", "PromptResponse"))
        cancel = next(m for m in self.v1.methods if m.wire == "$/cancel_request")
        self.assertEqual((cancel.kind, cancel.side), ("notification", "protocol"))

    def test_union_strategies(self) -> None:
        d = self.v1.decls
        mcp = d["McpServer"]
        assert isinstance(mcp, Union)
        self.assertEqual((mcp.strategy, mcp.tag_field, mcp.default, mcp.open), ("tagged", "type", "Stdio", False))
        self.assertFalse(mcp.unknown_to_default)
        update = d["SessionUpdate"]
        assert isinstance(update, Union)
        self.assertEqual(update.tag_field, "sessionUpdate")
        self.assertEqual(len(update.variants), 19)
        self.assertFalse(update.open)
        elicit = d["CreateElicitationRequestVariant"]
        assert isinstance(elicit, Union)
        self.assertTrue(elicit.open)
        self.assertEqual(d["EmbeddedResourceResource"].strategy, "untagged")  # type: ignore[union-attr]

    def test_fields_keep_presence_nullability_and_annotations(self) -> None:
        update = self.v1.decls["ToolCallUpdate"]
        assert isinstance(update, Struct)
        fields = {f.wire: f for f in update.fields}
        self.assertTrue(fields["toolCallId"].required)
        content = fields["content"]
        self.assertEqual((content.required, content.nullable, content.lenient, content.skip_invalid_items), (False, True, True, True))
        self.assertIsInstance(content.type, ArrayRef)
        self.assertEqual(fields["rawInput"].type, JsonRef())
        self.assertEqual(fields["_meta"].type, JsonRef(object_only=True))
        caps = self.v1.decls["AgentCapabilities"]
        assert isinstance(caps, Struct)
        load = next(f for f in caps.fields if f.wire == "loadSession")
        self.assertEqual((load.has_default, load.default), (True, False))

    def test_open_and_closed_enums(self) -> None:
        self.assertFalse(self.v1.decls["ToolKind"].open)  # type: ignore[union-attr]
        self.assertTrue(self.v1.decls["NoticeSeverity"].open)  # type: ignore[union-attr]

    def test_every_surface_reads(self) -> None:
        for version in ("v1", "v2"):
            for surface in ("schema", "schema.unstable"):
                spec = read(version, surface)
                self.assertTrue(spec.methods)
                json.loads(spec.to_json())  # the model dumps as JSON

    def test_unknown_construct_fails_loudly(self) -> None:
        schema = {"$defs": {"Weird": {"type": "object", "properties": {"x": {"type": ["string", "integer"]}}}}}
        with self.assertRaises(acp.SchemaError):
            acp.Reader(schema, None).read()


class RustEmitterTests(unittest.TestCase):
    def test_header_names_source_and_sha(self) -> None:
        spec = surface()
        spec.source_sha256 = "ab" * 32
        text = rust.emit(spec)
        self.assertIn("// @generated", text.splitlines()[0])
        self.assertIn("ab" * 32, text.splitlines()[1])

    def test_field_types(self) -> None:
        e = rust.Emitter(surface())
        info = next(d for d in e.decls.values() if d.name == "SessionInfoUpdate")
        assert isinstance(info, Struct)
        title = next(f for f in info.fields if f.wire == "title")
        self.assertEqual(e.field_type(title), "MaybeUndefined<String>")
        self.assertEqual(rust.snake("_meta"), "meta")
        self.assertEqual(rust.snake("type"), "r#type")
        self.assertEqual(e.rtype(NamedRef("RequestId")), "crate::RequestId")


if __name__ == "__main__":
    unittest.main()
