"""Unit tests of the proto3 reader (the ProtoJSON mapping) and the A2A emitter."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from agentproto_codegen import __main__ as cli
from agentproto_codegen import proto, rules, rust_a2a
from agentproto_codegen.model import ArrayRef, Enum, JsonRef, MapRef, NamedRef, PrimRef, Spec, Struct, Union

ROOT = Path(__file__).resolve().parents[2]

SMALL = """
syntax = "proto3";
package demo.v1;
import "google/api/field_behavior.proto";

service S {
  // Gets a thing.
  rpc GetThing(GetThingRequest) returns (Thing) {
    option (google.api.http) = {
      get: "/things/{thing_id=*}"
      additional_bindings: { get: "/{tenant}/things/{thing_id=*}" }
    };
  }
}

// A thing.
message Thing {
  string id = 1 [(google.api.field_behavior) = REQUIRED];
  // The parts.
  repeated Part parts = 2 [(google.api.field_behavior) = REQUIRED];
  optional int32 count = 3;
  bool done = 4;
  map<string, string> labels = 5;
  Color color = 6;
}

message Part {
  oneof content {
    string text = 1;
    bytes raw_bytes = 2;
  }
  google.protobuf.Struct metadata = 3;
}

message GetThingRequest {
  string tenant = 1;
  string thing_id = 2 [(google.api.field_behavior) = REQUIRED];
  optional int32 page_size = 3;
}

message ThingsResponse {
  repeated Thing things = 1 [(google.api.field_behavior) = REQUIRED];
}

message Either {
  oneof payload {
    Thing thing = 1;
    Part part = 2;
  }
}

enum Color {
  COLOR_UNSPECIFIED = 0;
  COLOR_RED = 1;
}
"""


A2A_RULES, A2A_RULES_SOURCE = rules.load(ROOT / "rules/a2a.toml")


def read_small() -> Spec:
    with tempfile.NamedTemporaryFile("w", suffix=".proto", delete=False) as f:
        f.write(SMALL)
    spec = proto.read_proto(f.name, "demo.proto", "0" * 64, A2A_RULES)
    spec.sources.append(A2A_RULES_SOURCE)
    return spec


class ProtoReaderTests(unittest.TestCase):
    def test_fields_follow_protojson_presence(self) -> None:
        s = read_small()
        thing = s.decls["Thing"]
        assert isinstance(thing, Struct)
        f = {x.wire: x for x in thing.fields}
        self.assertTrue(f["id"].required)
        self.assertEqual((f["parts"].required, f["parts"].min_items), (True, 1))
        self.assertIsInstance(f["parts"].type, ArrayRef)
        self.assertEqual((f["count"].required, f["count"].has_default), (False, False))
        self.assertEqual((f["done"].default, f["done"].omit_default), (False, True))
        self.assertIsInstance(f["labels"].type, MapRef)
        self.assertEqual(f["color"].type, NamedRef("Color"))

    def test_names_are_camel_case_with_proto_aliases(self) -> None:
        req = read_small().decls["GetThingRequest"]
        assert isinstance(req, Struct)
        page = next(x for x in req.fields if x.wire == "pageSize")
        self.assertEqual(page.aliases, ["page_size"])

    def test_oneofs_become_keyed_unions(self) -> None:
        s = read_small()
        part = s.decls["Part"]
        assert isinstance(part, Struct)
        self.assertEqual([o.type_name for o in part.oneofs], ["PartContent"])
        content = s.decls["PartContent"]
        assert isinstance(content, Union)
        self.assertEqual((content.strategy, [v.tag for v in content.variants]), ("keyed", ["text", "rawBytes"]))
        self.assertEqual(content.aliases, {"rawBytes": "raw_bytes"})
        self.assertEqual(content.variants[1].payload, PrimRef("bytes"))
        self.assertEqual(part.fields[0].type, JsonRef(object_only=True))
        either = s.decls["Either"]
        assert isinstance(either, Union)
        self.assertEqual(either.strategy, "keyed")

    def test_responses_may_hold_empty_required_lists(self) -> None:
        resp = read_small().decls["ThingsResponse"]
        assert isinstance(resp, Struct)
        self.assertEqual((resp.fields[0].required, resp.fields[0].min_items), (True, None))

    def test_enums_drop_the_unspecified_zero(self) -> None:
        color = read_small().decls["Color"]
        assert isinstance(color, Enum)
        self.assertEqual((color.values, color.strip_prefix), (["COLOR_RED"], "COLOR_"))

    def test_rpcs_are_methods_with_their_http_rules_and_query_fields(self) -> None:
        rpc = read_small().methods[0]
        self.assertEqual((rpc.wire, rpc.kind, rpc.side, rpc.params, rpc.result, rpc.streaming), ("GetThing", "request", "server", "GetThingRequest", "Thing", False))
        self.assertEqual([(h.method, h.path, h.body) for h in rpc.http], [("get", "/things/{thing_id}", False), ("get", "/{tenant}/things/{thing_id}", False)])
        # Body-less: every field that is not a path variable (thing_id, tenant) travels in the query string.
        self.assertEqual([(q.wire, q.kind) for q in rpc.query], [("pageSize", "int")])
        self.assertEqual(rpc.handler, "get_thing")

    def test_the_rules_file_decides_list_and_oneof_rules(self) -> None:
        relaxed = json.loads(json.dumps(A2A_RULES))
        relaxed["messages"]["required_list_needs_item"] = False
        with tempfile.NamedTemporaryFile("w", suffix=".proto", delete=False) as f:
            f.write(SMALL)
        thing = proto.read_proto(f.name, "demo.proto", "0" * 64, relaxed).decls["Thing"]
        assert isinstance(thing, Struct)
        self.assertEqual(next(x for x in thing.fields if x.wire == "parts").min_items, None)
        relaxed["messages"]["oneof_required"] = False
        with self.assertRaises(ValueError):
            proto.read_proto(f.name, "demo.proto", "0" * 64, relaxed)

    def test_large_text_fields_are_the_text_primitive(self) -> None:
        content = read_small().decls["PartContent"]
        assert isinstance(content, Union)
        self.assertEqual([v.payload for v in content.variants], [PrimRef("text"), PrimRef("bytes")])
        thing = read_small().decls["Thing"]
        assert isinstance(thing, Struct)
        self.assertEqual(thing.fields[0].type, PrimRef("string"))
        with tempfile.NamedTemporaryFile("w", suffix=".proto", delete=False) as f:
            f.write(SMALL)
        for wrong, says in [("Part.raw_bytes", "not a singular string"), ("Thing.labels", "not a singular string"), ("Part.txt", "does not have")]:
            changed = json.loads(json.dumps(A2A_RULES))
            changed["messages"]["large_text"] = [wrong]
            with self.assertRaisesRegex(ValueError, says):
                proto.read_proto(f.name, "demo.proto", "0" * 64, changed)

    def test_enum_values_must_be_numbered_in_order(self) -> None:
        # The emitters read an enum given by number n as its n-th value (ProtoJSON
        # accepts both spellings), so a proto that numbers them otherwise is refused.
        with tempfile.NamedTemporaryFile("w", suffix=".proto", delete=False) as f:
            f.write("enum Color { COLOR_UNSPECIFIED = 0; COLOR_RED = 2; }")
        with self.assertRaises(ValueError):
            proto.read_proto(f.name, "x.proto", "0" * 64, A2A_RULES)

    def test_the_a2a_emitter_reads_protojson_leniently(self) -> None:
        out = rust_a2a.emit(read_small())
        self.assertIn("crate::protojson::Int32", out, "int32 accepts strings and integral numbers")
        self.assertIn("crate::protojson::enum_name(", out, "enums accept their numbers")

    def test_unknown_constructs_fail_loudly(self) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".proto", delete=False) as f:
            f.write("message A { message B {} }")
        with self.assertRaises(ValueError):
            proto.read_proto(f.name, "x.proto", "0" * 64, A2A_RULES)

    def test_the_pinned_a2a_proto_has_eleven_operations(self) -> None:
        s = cli.build_models(cli.verify_pins())["a2a-v1"]
        self.assertEqual(len(s.methods), 11)
        self.assertEqual(sum(r.streaming for r in s.methods), 2)
        subscribe = next(m for m in s.methods if m.wire == "SubscribeToTask")
        self.assertEqual(sorted({h.method for h in subscribe.http}), ["get", "post"], "rules/a2a.toml adds POST")
        out = rust_a2a.emit(s)
        self.assertIn("pub enum Operation", out)
        self.assertIn('"pageSize", QueryKind::Int', out)


if __name__ == "__main__":
    unittest.main()
