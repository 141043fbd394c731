"""The Rust emitter on small hand-built models: what it writes for each kind of
declaration and for the method table (no schema file involved)."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
import unittest

from agentproto_codegen import rust
from agentproto_codegen.model import Alias, Decl, Enum, Field, Method, NamedRef, PrimRef, Spec, Struct, Union, Variant

STRING = PrimRef("string")


# Every surface with methods has `initialize`: the rules read both sides' messages.
INITIALIZE = [
    Struct(name="InitializeRequest", fields=[Field(wire="protocolVersion", type=PrimRef("u16"), required=True)]),
    Struct(name="InitializeResponse", fields=[Field(wire="protocolVersion", type=PrimRef("u16"), required=True)]),
]
INITIALIZE_METHOD = Method(
    wire="initialize", kind="request", side="agent", params="InitializeRequest", result="InitializeResponse",
    handler="initialize", required=True,
)


def make_spec(decls: list[Decl], methods: list[Method] | None = None) -> Spec:
    if methods and not any(m.wire == "initialize" for m in methods):
        methods = [*(methods or []), INITIALIZE_METHOD]
        decls = [*decls, *(d for d in INITIALIZE if all(x.name != d.name for x in decls))]
    return Spec(
        protocol="acp",
        version="v1",
        surface="stable",
        source_file="acp/v1/schema.json",
        source_sha256="ab" * 32,
        wire_version=1,
        decls={d.name: d for d in decls},
        methods=methods or [],
        sources=[{"file": "spec/acp/v1/schema.json", "sha256": "ab" * 32}, {"file": "rules/acp.toml", "sha256": "cd" * 32}],
        rules={
            "capabilities": {"agent": "agentCapabilities", "client": "clientCapabilities"},
            "lifecycle": {"initialize": "initialize", "cancel_request": "$/cancel_request", "session_cancel": "session/cancel", "prompt_turn": "session/prompt"},
            "envelope": {"null_request_id": True},
        },
    )


def emit(decls: list[Decl], methods: list[Method] | None = None) -> str:
    return rust.emit(make_spec(decls, methods))


def block(text: str, indent: int = 0) -> str:
    """An expected stretch of output, written indented in the test, at `indent` columns."""
    return textwrap.indent(textwrap.dedent(text).strip("\n"), " " * indent)


THING = Struct(
    "Thing",
    [
        Field("id", STRING, required=True, doc="The id.\n\nNot this paragraph."),
        Field("parent", STRING, required=True, nullable=True),
        Field("title", STRING, required=False),
        Field("note", STRING, required=False, nullable=True),
        Field("count", PrimRef("u32"), required=False, default=3, has_default=True),
        Field("type", STRING, required=True),
    ],
    doc="A thing.",
)


class StructTests(unittest.TestCase):
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.text = emit([THING])

    def test_field_types_by_presence_and_nullability(self) -> None:
        self.assertIn(
            block(
                """
                /// A thing.
                #[derive(Debug, Clone, PartialEq)]
                pub struct Thing {
                    /// The id.
                    pub id: String,
                    pub parent: Option<String>,
                    pub title: Option<String>,
                    pub note: MaybeUndefined<String>,
                    pub count: u32,
                    pub r#type: String,
                }
                """
            ),
            self.text,
        )
        self.assertNotIn("Not this paragraph", self.text)

    def test_constructor_takes_the_required_fields(self) -> None:
        self.assertIn(
            block(
                """
                impl Thing {
                    /// A `Thing` from its required fields; the others are absent or at their defaults.
                    pub fn new(id: impl Into<String>, parent: impl Into<Option<String>>, r#type: impl Into<String>) -> Self {
                        Self {
                            id: id.into(),
                            parent: parent.into(),
                            title: None,
                            note: MaybeUndefined::Undefined,
                            count: 3,
                            r#type: r#type.into(),
                        }
                    }
                }
                """
            ),
            self.text,
        )

    def test_serializer_writes_absent_null_and_value_apart(self) -> None:
        self.assertIn(
            block(
                """
                        m.serialize_entry("parent", &self.parent)?;
                        if let Some(v) = &self.title { m.serialize_entry("title", v)?; }
                        match &self.note {
                            MaybeUndefined::Undefined => {}
                            MaybeUndefined::Null => m.serialize_entry("note", &())?,
                            MaybeUndefined::Value(v) => m.serialize_entry("note", v)?,
                        }
                        m.serialize_entry("count", &self.count)?;
                """,
                8,
            ),
            self.text,
        )

    def test_decoder_reads_each_member_once_then_assembles(self) -> None:
        text = self.text
        self.assertIn("let mut f_type: Option<String> = None;", text)
        self.assertIn("let mut f_parent: Option<Option<String>> = None;", text)
        self.assertIn(
            block(
                """
                            "note" => {
                                de::seen::<A::Error>(&mut seen, 3, "note")?;
                                f_note = Some(de::field::<A, Option<String>>(&mut map, "note")?);
                            }
                """,
                16,
            ),
            text,
        )
        self.assertIn('let id = match f_id { Some(v) => v, None => return Err(de::missing::<A::Error>("id")) };', text)
        self.assertIn('let parent = match f_parent { Some(v) => v, None => return Err(de::missing::<A::Error>("parent")) };', text)
        self.assertIn("let title = f_title;", text)
        self.assertIn("let note = MaybeUndefined::from_present(f_note);", text)
        self.assertIn("let count = match f_count { Some(v) => v, None => 3 };", text)
        self.assertIn("Ok(Thing { id, parent, title, note, count, r#type })", text)

    def test_all_optional_struct_gets_default_not_new(self) -> None:
        opts = Struct("Opts", [Field("flag", PrimRef("bool"), required=False, default=True, has_default=True), Field("name", STRING, required=False)])
        text = emit([opts])
        self.assertIn(
            block(
                """
                impl Default for Opts {
                    fn default() -> Self {
                        Self {
                            flag: true,
                            name: None,
                        }
                    }
                }
                """
            ),
            text,
        )
        self.assertNotIn("pub fn new(", text)

    def test_string_alias_is_a_newtype(self) -> None:
        text = emit([Alias("SessionId", STRING, doc="An id.")])
        self.assertIn("/// An id.\n#[derive(", text)
        self.assertIn("pub struct SessionId(pub String);", text)

    def test_header_and_snake_names(self) -> None:
        lines = self.text.splitlines()
        self.assertEqual(lines[0], "// @generated by `make codegen` from spec/acp/v1/schema.json and rules/acp.toml")
        self.assertIn("ab" * 32, lines[1])
        self.assertIn("cd" * 32, lines[1])
        self.assertIn("pub const PROTOCOL_VERSION: u16 = 1;", self.text)
        for wire, ident in [("_meta", "meta"), ("type", "r#type"), ("sessionId", "session_id"), ("mcpServers", "mcp_servers"), ("URL", "url")]:
            self.assertEqual(rust.snake(wire), ident)


TEXT = Struct("TextContent", [Field("text", STRING, required=True)])
IMAGE = Struct("ImageContent", [Field("data", STRING, required=True)])


def content_union(name: str, open_: bool) -> Union:
    variants = [Variant("Text", "text", NamedRef("TextContent")), Variant("Image", "image", NamedRef("ImageContent")), Variant("Unknown", "unknown", None)]
    return Union(name, "tagged", variants, tag_field="type", open=open_, on_unknown="keep" if open_ else "keep-warn")


class UnionTests(unittest.TestCase):
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.text = emit([TEXT, IMAGE, content_union("Closed", False), content_union("Open", True)])

    def section(self, name: str) -> str:
        start = self.text.index(f"pub enum {name} {{")
        end = self.text.find("pub enum ", start + 1)
        return self.text[start : end if end > 0 else len(self.text)]

    def test_enum_has_a_raw_catch_all(self) -> None:
        self.assertIn(
            block(
                """
                pub enum Closed {
                    Text(TextContent),
                    Image(ImageContent),
                    UnknownVariant,
                    /// a variant this schema does not list, kept as its raw JSON.
                    Unknown(RawJson),
                }
                """
            ),
            self.text,
        )
        self.assertIn("/// a future or extension variant, kept as its raw JSON.", self.section("Open"))

    def test_tag_selects_the_variant_in_one_pass(self) -> None:
        closed = self.section("Closed")
        self.assertIn('let (tag, mut buffered) = de::read_until_tag(&mut map, "type")?;', closed)
        self.assertIn('Some("text") => Self::Text(TextContent::visit_fields(de::Replay::new(buffered, live))?),', closed)
        self.assertIn('Some("unknown") => { de::drain(de::Replay::new(buffered, live), &mut Vec::new())?; Self::UnknownVariant },', closed)
        self.assertIn('None => return Err(de::missing::<A::Error>("type")),', closed)
        self.assertIn('Self::Text(v) => { m.serialize_entry("type", "text")?; v.serialize_fields(m, skip)?; }', closed)
        self.assertIn("agentproto_codec::serialize_via_fields!(Closed, unknown = Unknown);", closed)
        self.assertIn("impl From<TextContent> for Closed { fn from(v: TextContent) -> Self { Self::Text(v) } }", closed)

    def test_only_a_closed_union_warns_on_an_unknown_tag(self) -> None:
        self.assertIn('de::warn_unknown("Closed", other);', self.section("Closed"))
        self.assertNotIn("warn_unknown", self.section("Open"))
        for name in ("Closed", "Open"):
            self.assertIn("Self::Unknown(raw)\n", self.section(name))

    def test_a_default_variant_reads_an_absent_tag(self) -> None:
        u = Union("WithDefault", "tagged", [Variant("Text", None, NamedRef("TextContent")), Variant("Image", "image", NamedRef("ImageContent"))], tag_field="kind")
        text = emit([TEXT, IMAGE, u])
        self.assertIn("None => Self::Text(TextContent::visit_fields(de::Replay::new(buffered, live))?),", text)
        self.assertIn("Self::Text(v) => { v.serialize_fields(m, skip)?; }", text)

    def test_untagged_tries_each_variant(self) -> None:
        u = Union("Either", "untagged", [Variant("Text", None, NamedRef("TextContent")), Variant("Words", None, STRING)])
        text = emit([TEXT, u])
        self.assertIn("if let Some(v) = de::try_variant::<TextContent>(raw) { return Ok(Self::Text(v)); }", text)
        self.assertIn('Err(de::no_variant::<D::Error>("one of TextContent, a string", raw))', text)
        self.assertNotIn("Unknown(RawJson)", text)


class EnumTests(unittest.TestCase):
    closed: str
    open: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.closed = emit([Enum("Role", ["user", "assistant"])])
        cls.open = emit([Enum("StopReason", ["end_turn", "unknown"], open=True, value_docs=["The turn ended.", ""])])

    def test_closed_enum(self) -> None:
        self.assertIn("#[derive(Debug, Clone, PartialEq, Eq, Hash, Copy)]", self.closed)
        self.assertIn(
            block(
                """
                pub enum Role {
                    /// Wire value `user`.
                    User,
                    /// Wire value `assistant`.
                    Assistant,
                }
                """
            ),
            self.closed,
        )
        self.assertIn('pub const VALUES: &\'static [&\'static str] = &["user", "assistant"];', self.closed)
        self.assertIn("other => return Err(de::unknown_value::<D::Error>(other, Self::VALUES)),", self.closed)
        self.assertNotIn("Unknown(String)", self.closed)

    def test_open_enum_keeps_unknown_values(self) -> None:
        self.assertIn("#[derive(Debug, Clone, PartialEq, Eq, Hash)]\npub enum StopReason", self.open)
        self.assertIn("    /// The turn ended.\n    ///\n    EndTurn,", self.open)
        self.assertIn("    UnknownValue,", self.open)  # the spec's own `unknown` steps aside
        self.assertIn("    Unknown(String),", self.open)
        self.assertIn('"unknown" => Self::UnknownValue,', self.open)
        self.assertIn("other => Self::Unknown(other.to_owned()),", self.open)
        self.assertIn("Self::Unknown(s) => s,", self.open)


def method_model() -> tuple[list[Decl], list[Method]]:
    session = Field("sessionId", NamedRef("SessionId"), required=True)
    decls: list[Decl] = [
        Alias("SessionId", STRING),
        Struct("PromptRequest", [session, Field("text", STRING, required=True)]),
        Struct("PromptResponse", [Field("stopReason", STRING, required=False)]),
        Struct("LoadSessionRequest", [session]),
        Struct("LoadSessionResponse", [session]),  # a result naming a session is not session-scoped
        Struct("SessionNotification", [session]),
        Struct("CancelNotification", [session]),
    ]
    methods = [
        # Handler names and baseline flags come from the rules file in real runs.
        Method(wire="session/prompt", kind="request", side="agent", params="PromptRequest", result="PromptResponse", handler="prompt", required=True),
        Method(wire="session/load", kind="request", side="agent", params="LoadSessionRequest", result="LoadSessionResponse", stability="unstable", handler="load_session"),
        Method(wire="session/cancel", kind="notification", side="agent", params="CancelNotification", result=None, handler="cancel"),
        Method(wire="session/update", kind="notification", side="client", params="SessionNotification", result=None, handler="session_update", required=True),
    ]
    return decls, methods


class MethodTableTests(unittest.TestCase):
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.text = emit(*method_model())

    def test_marker_types(self) -> None:
        self.assertIn(
            block(
                """
                    /// `session/prompt`: request handled by the agent side (stable).
                    #[derive(Debug, Clone, Copy)]
                    pub struct SessionPrompt;
                    impl RequestMethod for SessionPrompt {
                        const NAME: &'static str = "session/prompt";
                        const SIDE: Side = Side::Agent;
                        type Params = super::PromptRequest;
                        type Result = super::PromptResponse;
                        type Surface = super::V1;
                        fn session_id(params: &Self::Params) -> Option<&str> {
                            Some(params.session_id.as_str())
                        }
                    }
                """,
                4,
            ),
            self.text,
        )
        self.assertIn(
            block(
                """
                    impl NotificationMethod for SessionUpdate {
                        const NAME: &'static str = "session/update";
                        const SIDE: Side = Side::Client;
                        type Params = super::SessionNotification;
                        fn session_id(params: &Self::Params) -> Option<&str> {
                            Some(params.session_id.as_str())
                        }
                    }
                """,
                4,
            ),
            self.text,
        )
        self.assertIn(
            '        MethodInfo { name: "session/update", kind: MethodKind::Notification, side: Side::Client, '
            'params: "SessionNotification", result: None, stability: Stability::Stable, '
            "required: true, null_result: false, gate: None, values: &[], session: None, session_gate: None },\n",
            self.text,
        )

    def test_dispatch_enums_by_direction(self) -> None:
        self.assertIn("pub enum ClientRequest {\n    /// `session/prompt`\n    SessionPrompt(PromptRequest),", self.text)
        self.assertIn("pub enum ClientNotification {\n    /// `session/cancel`\n    SessionCancel(CancelNotification),", self.text)
        self.assertIn("pub enum AgentResponse {\n    /// `session/prompt`\n    SessionPrompt(PromptResponse),", self.text)
        self.assertIn("pub enum AgentNotification {\n    /// `session/update`\n    SessionUpdate(SessionNotification),", self.text)
        self.assertIn('"session/prompt" => crate::decode_as::<PromptRequest, Self>(text, "$.params", Self::SessionPrompt),', self.text)
        self.assertIn('"session/prompt" => crate::decode_as::<PromptResponse, Self>(text, "$.result", Self::SessionPrompt),', self.text)
        self.assertIn("Self::SessionPrompt(p) => Some(p.session_id.as_str()),", self.text)
        response = self.text[self.text.index("impl crate::Payload for AgentResponse") :]
        self.assertNotIn("fn session_id", response[: response.index("\n}\n")])

    def test_handler_traits_require_only_the_baseline(self) -> None:
        agent = self.text[self.text.index("pub trait Agent") :]
        agent = agent[: agent.index("\n}\n")]
        self.assertIn("fn prompt(&self, cx: AgentContext, params: PromptRequest) -> impl std::future::Future<Output = Result<PromptResponse, agentproto_jsonrpc::ErrorObject>> + Send;", agent)
        self.assertIn(
            '    fn load_session(&self, cx: AgentContext, params: LoadSessionRequest) -> impl std::future::Future<Output = Result<LoadSessionResponse, agentproto_jsonrpc::ErrorObject>> + Send '
            '{ async { Err(agentproto_jsonrpc::ErrorObject::method_not_found("session/load")) } }',
            agent,
        )
        self.assertIn("    /// Handles `session/load` (unstable).", agent)
        self.assertIn("fn cancel(&self, cx: AgentContext, params: CancelNotification) -> impl std::future::Future<Output = ()> + Send { async {} }", agent)
        self.assertIn("fn session_update(&self, cx: ClientContext, params: SessionNotification) -> impl std::future::Future<Output = ()> + Send;", self.text)

    def test_dispatch_and_typed_calls(self) -> None:
        self.assertIn('ClientRequest::SessionPrompt(p) => crate::answer::<method::SessionPrompt>(self.prompt(cx, p).await?, strict),', self.text)
        self.assertIn("ClientNotification::SessionCancel(p) => self.cancel(cx, p).await,", self.text)
        self.assertIn(
            block(
                """
                impl crate::AgentConnection<V1> {
                    /// Sends `session/prompt` and waits for its validated result.
                    pub async fn prompt(&self, params: PromptRequest) -> Result<PromptResponse, crate::AcpError> {
                        self.request::<method::SessionPrompt>(params).await
                    }
                """
            ),
            self.text,
        )
        self.assertIn("    pub async fn session_update(&self, params: SessionNotification) -> Result<(), crate::AcpError> {\n        self.notify::<method::SessionUpdate>(params).await", self.text)

    def test_a_method_without_params_type_fails_loudly(self) -> None:
        decls, methods = method_model()
        methods[0].params = None
        with self.assertRaisesRegex(ValueError, "session/prompt: params type"):
            emit(decls, methods)


class CompatTests(unittest.TestCase):
    def test_w_and_doc_lines_for_emitters_that_indent_themselves(self) -> None:
        e = rust.Emitter(make_spec([]))
        e.w("    /// pre-indented")
        e.w()
        self.assertEqual(e.out.text(), "    /// pre-indented\n\n")
        self.assertEqual(rust.doc_lines("One.\nTwo.\n\nThree.", "    "), ["    /// One.", "    /// Two."])
        self.assertEqual(rust.rstr('é"'), '"é\\""')

    @unittest.skipUnless(shutil.which("rustfmt"), "rustfmt is not installed")
    def test_every_emitted_sample_is_well_formed_rust(self) -> None:
        samples = {
            "struct": emit([THING]),
            "unions": emit([TEXT, IMAGE, content_union("Closed", False), content_union("Open", True)]),
            "enums": emit([Enum("Role", ["user"]), Enum("StopReason", ["end_turn"], open=True)]),
            "methods": emit(*method_model()),
        }
        for name, text in samples.items():
            with self.subTest(name):
                proc = subprocess.run(["rustfmt", "--edition", "2021", "--emit", "stdout"], input=text, capture_output=True, text=True)
                self.assertEqual(proc.returncode, 0, proc.stderr[:2000])


if __name__ == "__main__":
    unittest.main()


class RuleRowTests(unittest.TestCase):
    """The rule fields of `MethodInfo` rows, from the model's gates and session rules."""

    def test_gate_rows(self) -> None:
        from agentproto_codegen import rust_rules
        from agentproto_codegen.model import Gate, SessionRule

        elicit = Gate(where="initialize.params", path=["clientCapabilities", "elicitation", "{mode}"], refusal=-32602)
        self.assertEqual(
            rust_rules.gate_expr(elicit),
            "Some(crate::rules::Gate { init: crate::rules::InitMessage::Params, path: &[crate::rules::Segment::Key(\"clientCapabilities\"), "
            "crate::rules::Segment::Key(\"elicitation\"), crate::rules::Segment::Param(\"mode\")], "
            "test: crate::rules::GateTest::Advertised, refusal: agentproto_jsonrpc::ErrorCode(-32602) })",
        )
        login = Gate(where="initialize.result", path=["authMethods"], test="non-empty")
        self.assertIn("InitMessage::Result", rust_rules.gate_expr(login))
        self.assertIn("GateTest::NonEmpty", rust_rules.gate_expr(login))
        self.assertEqual(rust_rules.gate_expr(None), "None")
        self.assertEqual(
            rust_rules.session_expr(SessionRule(effect="opened", unseen_ok=True)),
            "Some(crate::rules::SessionRule { effect: Some(crate::rules::SessionEffect::OpenedByParams), unseen_ok: true })",
        )
        self.assertIn('Segment::Key("a\\"b")', rust_rules.gate_expr(Gate(where="initialize.result", path=['a"b'])))

    def test_session_gate_rows(self) -> None:
        from agentproto_codegen import rust_rules
        from agentproto_codegen.model import SessionGate

        gate = SessionGate(member="modes", opened_by=["session/new", "session/load"])
        self.assertEqual(
            rust_rules.session_gate_expr(gate),
            'Some(crate::rules::SessionGate { member: "modes", opened_by: &["session/new", "session/load"] })',
        )
        self.assertEqual(rust_rules.session_gate_expr(None), "None")


class RuleCodeTests(unittest.TestCase):
    """The rules as code: a capability path becomes a typed access chain."""

    def setUp(self) -> None:
        inner = Struct(name="ListCaps", fields=[])
        caps = Struct(
            name="Caps",
            fields=[
                Field(wire="flag", type=PrimRef("bool"), required=False, has_default=True, default=False),
                Field(wire="list", type=NamedRef("ListCaps"), required=False),
                Field(wire="always", type=NamedRef("ListCaps"), required=False, has_default=True, default={}),
            ],
        )
        root = Struct(name="Init", fields=[Field(wire="caps", type=NamedRef("Caps"), required=False, has_default=True, default={})])
        self.e = rust.Emitter(make_spec([inner, caps, root]))

    def test_plain_steps_stay_places_and_optional_ones_chain(self) -> None:
        from agentproto_codegen import rust_rules

        self.assertEqual(rust_rules.capability_test(self.e, "Init", "hs.agent", ["caps", "flag"], "advertised"), "hs.agent.caps.flag")
        self.assertEqual(
            rust_rules.capability_test(self.e, "Init", "hs.agent", ["caps", "list"], "advertised"),
            "hs.agent.caps.list.as_ref().is_some()",
        )

    def test_an_object_capability_that_is_always_there_is_refused(self) -> None:
        from agentproto_codegen import rust_rules

        with self.assertRaises(ValueError):
            rust_rules.capability_test(self.e, "Init", "hs.agent", ["caps", "always"], "advertised")


class SharedDeclarationTests(unittest.TestCase):
    """A declaration another surface's module writes is re-exported, not written again."""

    def test_a_shared_declaration_is_a_re_export(self) -> None:
        text = rust.emit(make_spec([THING]), {"Thing": "v1"})
        self.assertIn("pub use crate::v1::{Thing};", text)
        self.assertNotIn("pub struct Thing", text)
        self.assertIn("pub struct Thing", emit([THING]))
