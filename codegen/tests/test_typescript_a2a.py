"""The TypeScript A2A emitter (`typescript_a2a.py`) on a small hand-made ProtoJSON model:
what each construct becomes (aliases, implicit presence, oneofs, keyed unions, enums by
number, `null` as absent except for a `google.protobuf.Value`), and the constructs it
refuses. The real output is compiled and run against every A2A vector by
`ts/test/a2a/vectors.test.ts`."""

from __future__ import annotations

import unittest

from agentproto_codegen import typescript_a2a
from agentproto_codegen.model import ArrayRef, Enum, Field, HttpRule, JsonRef, Method, NamedRef, Oneof, PrimRef, QueryField, Spec, Struct, Union, Variant

STRING = PrimRef("string")


def make_spec() -> Spec:
    role = Enum("Role", ["ROLE_USER", "ROLE_AGENT"], numbers=[1, 2], strip_prefix="ROLE_")
    part_content = Union(
        "PartContent",
        "keyed",
        [Variant("Text", "text", PrimRef("text")), Variant("Data", "data", JsonRef(object_only=False))],
        on_unknown="error",
    )
    part = Struct(
        "Part",
        [Field("mediaType", STRING, required=False, omit_default=True, aliases=["media_type"])],
        oneofs=[Oneof("content", "PartContent", [Field("text", PrimRef("text"), required=False), Field("data", JsonRef(), required=False)])],
    )
    message = Struct(
        "Message",
        [
            Field("messageId", STRING, required=True, aliases=["message_id"]),
            Field("role", NamedRef("Role"), required=True),
            Field("parts", ArrayRef(NamedRef("Part")), required=True, min_items=1),
            Field("historyLength", PrimRef("i32"), required=False),
            Field("metadata", JsonRef(object_only=True), required=False),
        ],
    )
    response = Union(
        "SendResponse",
        "keyed",
        [Variant("Message", "message", NamedRef("Message")), Variant("StatusUpdate", "statusUpdate", NamedRef("Part"))],
        aliases={"statusUpdate": "status_update"},
        on_unknown="error",
    )
    request = Struct("SendRequest", [Field("tenant", STRING, required=False, omit_default=True), Field("message", NamedRef("Message"), required=True)])
    get = Struct("GetRequest", [Field("id", STRING, required=True), Field("historyLength", PrimRef("i32"), required=False, aliases=["history_length"])])
    methods = [
        Method("Send", "request", "server", "SendRequest", "SendResponse", http=[HttpRule("post", "/send", True)]),
        Method("Get", "request", "server", "GetRequest", "Message", http=[HttpRule("get", "/things/{id}", False)], query=[QueryField("historyLength", "int", False)]),
    ]
    decls = [role, part_content, part, message, response, request, get]
    return Spec(
        protocol="a2a",
        version="v1",
        surface="stable",
        source_file="a2a/v1.0/a2a.proto",
        source_sha256="ab" * 32,
        wire_version="1.0",
        decls={d.name: d for d in decls},
        methods=methods,
        package="test.v1",
        sources=[{"file": "spec/a2a/v1.0/a2a.proto", "sha256": "ab" * 32}, {"file": "rules/a2a.toml", "sha256": "cd" * 32}],
    )


class TypesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.text = typescript_a2a.emit_types(make_spec())

    def test_a_message_with_a_oneof_is_its_fields_and_the_choice(self) -> None:
        self.assertIn("export interface PartFields {", self.text)
        self.assertIn("export type Part = PartFields & PartContent;", self.text)

    def test_a_keyed_union_is_one_member_of_each_object(self) -> None:
        self.assertIn("| { message: Message; statusUpdate?: undefined }", self.text)
        self.assertIn("| { statusUpdate: Part; message?: undefined };", self.text)

    def test_presence_follows_required(self) -> None:
        self.assertIn("  messageId: string;", self.text)
        self.assertIn("  historyLength?: number;", self.text)
        self.assertIn("  metadata?: RawJson;", self.text)

    def test_the_operation_table_has_rules_query_fields_and_aliases(self) -> None:
        self.assertIn('http: [{ method: "get", path: "/things/{id}", body: false }],', self.text)
        self.assertIn('query: [{ wire: "historyLength", kind: "int", repeated: false }],', self.text)
        self.assertIn('aliases: { "history_length": "historyLength" },', self.text)
        self.assertIn("Send: { params: SendRequest; result: SendResponse; streaming: false };", self.text)


class CodecTest(unittest.TestCase):
    def setUp(self) -> None:
        self.text = typescript_a2a.emit_codec(make_spec())

    def test_an_alias_shares_the_member_slot_and_names_the_key_received(self) -> None:
        self.assertIn('case "messageId":\n      case "message_id":', self.text)
        self.assertIn('x0 = rt.d_str(m.value, path + "." + m.key, cx);', self.text)

    def test_null_reads_as_absent_except_for_a_value(self) -> None:
        part = self.text[self.text.index("export function d_Part(") : self.text.index("export function e_Part(")]
        text_case = part[part.index('case "text":') : part.index('case "data":')]
        data_case = part[part.index('case "data":') :]
        self.assertIn("if (m.value === null) break;", text_case)
        self.assertNotIn("if (m.value === null) break;", data_case.split("break;")[0])

    def test_ProtoJSON_scalars_and_enums_use_the_protojson_helpers(self) -> None:
        self.assertIn("pj.d_int32(", self.text)
        self.assertIn("return pj.d_enum(v, path, Role_NAMES, Role_NUMBERS);", self.text)
        self.assertIn("const Role_NUMBERS: readonly number[] = [1, 2];", self.text)

    def test_oneofs_and_keyed_unions_refuse_none_and_two(self) -> None:
        self.assertIn('if (c0 !== null) throw pj.oneOfTwice(path + "." + m.key, c0, "text");', self.text)
        self.assertIn('if (c0 === null) throw pj.missingOneOf(path, ["text", "data"]);', self.text)
        self.assertIn('if (chosen === null) throw pj.missingOneOf(path, ["message", "statusUpdate"]);', self.text)
        self.assertIn('case "statusUpdate":\n      case "status_update":', self.text)

    def test_required_lists_need_an_item(self) -> None:
        self.assertIn('rt.minItems(path + "." + m.key, x2, 1);', self.text)

    def test_encoders_write_fields_in_order_then_the_oneof_and_skip_implicit_defaults(self) -> None:
        e_part = self.text[self.text.index("export function e_Part(") :]
        self.assertLess(e_part.index('",\\"mediaType\\":"'), e_part.index('",\\"text\\":"'))
        self.assertIn('if (x.mediaType !== undefined && x.mediaType !== "")', e_part)
        self.assertIn('if (x.tenant !== undefined && x.tenant !== "")', self.text)
        self.assertIn('if (x.historyLength !== undefined) out +=', self.text)


class RefusalsTest(unittest.TestCase):
    def test_constructs_a_proto_does_not_have_are_refused(self) -> None:
        spec = make_spec()
        spec.decls["Tagged"] = Union("Tagged", "tagged", [Variant("A", "a", None)], tag_field="type")
        with self.assertRaises(ValueError):
            typescript_a2a.emit_types(spec)
        spec = make_spec()
        spec.decls["Wide"] = Struct("Wide", [Field("n", PrimRef("i64"), required=True)])
        with self.assertRaises(ValueError):
            typescript_a2a.emit_types(spec)


if __name__ == "__main__":
    unittest.main()
