"""The Python emitters on small hand-built models: the msgspec types and method table
(`python.py`) and the slow-path validators (`python_decode.py`)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import textwrap
import unittest
from dataclasses import replace
from pathlib import Path

from agentproto_codegen import python, python_decode, python_roles
from agentproto_codegen.model import (
    Alias,
    ArrayRef,
    Decl,
    Enum,
    Field,
    Gate,
    JsonRef,
    Method,
    NamedRef,
    PrimRef,
    SessionGate,
    SessionRule,
    Spec,
    Struct,
    Union,
    ValueGate,
    Variant,
)

STRING = PrimRef("string")
META = Field("_meta", JsonRef(object_only=True), required=False, nullable=True, lenient=True)


def make_spec(decls: list[Decl], methods: list[Method] | None = None) -> Spec:
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
            "lifecycle": {
                "initialize": "initialize",
                "cancel_request": "$/cancel_request",
                "session_cancel": "session/cancel",
                "prompt_turn": "session/prompt",
            },
            "envelope": {"null_request_id": True},
        },
    )


def block(text: str, indent: int = 0) -> str:
    """An expected stretch of output, written indented in the test, at `indent` columns."""
    return textwrap.indent(textwrap.dedent(text).strip("\n"), " " * indent)


THING = Struct(
    "Thing",
    [
        Field("id", STRING, required=True, doc="The id.\n\nNot this paragraph."),
        Field("parent", STRING, required=True, nullable=True),
        Field("title", STRING, required=False),
        Field("count", PrimRef("u32"), required=False, default=3, has_default=True),
        Field("type", STRING, required=True),
        META,
    ],
    doc="A thing.",
)

TEXT = Struct("TextContent", [Field("text", STRING, required=True, min_length=1)])
CHUNK = Struct("Chunk", [Field("content", NamedRef("Block"), required=True)])
BLOCK = Union(
    "Block",
    "tagged",
    [Variant("Text", "text", NamedRef("TextContent")), Variant("Gone", "gone", None)],
    tag_field="type",
)
UPDATE = Union(
    "Update",
    "tagged",
    [Variant("UserChunk", "user_chunk", NamedRef("Chunk")), Variant("AgentChunk", "agent_chunk", NamedRef("Chunk"))],
    tag_field="kind",
    open=True,
    on_unknown="keep",
)
KIND = Enum("Kind", ["read", "edit"], doc="A kind.")
SEVERITY = Enum("Severity", ["info"], open=True)
# The `initialize` messages the capability rules read.
BOOL = PrimRef("bool")
U16 = PrimRef("u16")
PROMPT_CAPS = Struct("PromptCapabilities", [Field("image", BOOL, required=False, default=False, has_default=True)])
AGENT_CAPS = Struct(
    "AgentCapabilities",
    [Field("promptCapabilities", NamedRef("PromptCapabilities"), required=False, default={"image": False}, has_default=True)],
)
CLIENT_CAPS = Struct("ClientCapabilities", [Field("terminal", BOOL, required=False, default=False, has_default=True)])
INIT_PARAMS = Struct(
    "InitializeRequest",
    [
        Field("protocolVersion", U16, required=True),
        Field("clientCapabilities", NamedRef("ClientCapabilities"), required=False, default={"terminal": False}, has_default=True),
    ],
)
INIT_RESULT = Struct(
    "InitializeResponse",
    [
        Field("protocolVersion", U16, required=True),
        Field(
            "agentCapabilities",
            NamedRef("AgentCapabilities"),
            required=False,
            default={"promptCapabilities": {"image": False}},
            has_default=True,
        ),
    ],
)
INIT_DECLS: list[Decl] = [PROMPT_CAPS, AGENT_CAPS, CLIENT_CAPS, INIT_PARAMS, INIT_RESULT]
SCOPED = Struct("Scoped", [Field("sessionId", NamedRef("SessionId"), required=True)])
INITIALIZE = Method("initialize", "request", "agent", "InitializeRequest", "InitializeResponse", handler="initialize")
PROMPT = Method(
    "session/prompt",
    "request",
    "agent",
    "Thing",
    "Chunk",
    handler="prompt",
    required=True,
    gate=Gate("initialize.result", ["agentCapabilities", "promptCapabilities", "image"]),
    session=SessionRule(None),
)


class TypesTests(unittest.TestCase):
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        decls = [THING, TEXT, CHUNK, BLOCK, UPDATE, KIND, SEVERITY, Alias("SessionId", STRING), *INIT_DECLS]
        spec = make_spec(decls, [INITIALIZE, PROMPT])
        cls.text = python.emit(spec)

    def test_header_names_the_sources_and_their_hashes(self) -> None:
        self.assertTrue(self.text.startswith("# @generated by `make codegen` from spec/acp/v1/schema.json"))
        self.assertIn(f"# sha256 {'ab' * 32} (schema), {'cd' * 32} (rules).", self.text)
        self.assertIn("Do not edit", self.text)

    def test_struct_fields_are_renamed_to_wire_keys_with_three_states(self) -> None:
        self.assertIn(
            block('''
            class Thing(Struct, kw_only=True):
                """A thing."""

                id: str
                """The id."""
                parent: str | None
                title: str | UnsetType = UNSET
                count: U32 = 3
                type_: str = field(name="type")
                meta: NullableRaw | UnsetType = field(default=UNSET, name="_meta")

                def __post_init__(self) -> None:
                    if self.meta is not UNSET:
                        self.meta = _rt.nullable_raw_object(self.meta)
            '''),
            self.text,
        )

    def test_a_payload_used_once_carries_the_tag_itself(self) -> None:
        self.assertIn('class TextContent(Struct, kw_only=True, tag_field="type", tag="text"):', self.text)
        self.assertIn("text: Annotated[str, Meta(min_length=1)]", self.text)

    def test_a_shared_payload_gets_a_tagged_subclass_per_variant(self) -> None:
        self.assertIn('class UpdateUserChunk(Chunk, tag_field="kind", tag="user_chunk"):', self.text)
        self.assertIn('class UpdateAgentChunk(Chunk, tag_field="kind", tag="agent_chunk"):', self.text)

    def test_a_variant_without_a_body_is_an_empty_tagged_struct(self) -> None:
        self.assertIn('class BlockGone(Struct, kw_only=True, tag_field="type", tag="gone"):', self.text)

    def test_unions_have_a_static_and_a_runtime_spelling(self) -> None:
        self.assertIn(
            block("""
            if TYPE_CHECKING:
                Block: TypeAlias = TextContent | BlockGone | Unknown
            else:
                Block = TextContent | BlockGone
            """),
            self.text,
        )

    def test_enums_are_literals_or_strings(self) -> None:
        self.assertIn('Kind: TypeAlias = Literal["read", "edit"]', self.text)
        self.assertIn("Severity: TypeAlias = str", self.text)
        self.assertIn("SessionId: TypeAlias = str", self.text)

    def test_the_method_table_carries_the_rules(self) -> None:
        self.assertIn(
            block("""
                MethodInfo(
                    name="session/prompt",
                    kind="request",
                    side="agent",
                    params="Thing",
                    result="Chunk",
                    stability="stable",
                    handler="prompt",
                    required=True,
                    gate=Gate(
                        where="initialize.result",
                        path=("agentCapabilities", "promptCapabilities", "image"),
                        test="advertised",
                        refusal=-32601,
                    ),
                    session=SessionRule(effect=None, unseen_ok=False),
                ),
            """, 4),
            self.text,
        )
        self.assertIn('prompt_turn="session/prompt",', self.text)

    def test_the_output_compiles(self) -> None:
        compile(self.text, "v1.py", "exec")

    def test_a_session_gate_is_emitted_and_imported_only_where_used(self) -> None:
        self.assertNotIn("SessionGate", self.text)
        gated = replace(PROMPT, params="Scoped", session_gate=SessionGate("modes", ["session/new", "session/load"]))
        decls = [THING, TEXT, CHUNK, BLOCK, UPDATE, KIND, SEVERITY, Alias("SessionId", STRING), SCOPED, *INIT_DECLS]
        text = python.emit(make_spec(decls, [INITIALIZE, gated]))
        self.assertIn("from agentproto.acp.rules import Gate, MethodInfo, SessionGate, SessionRule, SurfaceRules, ValueGate", text)
        self.assertIn('session_gate=SessionGate(member="modes", opened_by=("session/new", "session/load")),', text)
        compile(text, "v1.py", "exec")

    def test_a_flattened_object_is_a_plain_class_that_writes_its_members(self) -> None:
        option = Struct("Option", [Field("id", STRING, required=True), META], flatten="OptionKind")
        kind = Union(
            "OptionKind",
            "tagged",
            [Variant("Flag", "flag", NamedRef("Flag"))],
            tag_field="type",
        )
        flag = Struct("Flag", [Field("value", PrimRef("bool"), required=True)])
        text = python.emit(make_spec([option, kind, flag]))
        self.assertIn("class Option(Flattened):", text)
        self.assertIn('_wire: ClassVar[tuple[str, ...]] = ("id", "_meta")', text)
        self.assertIn("out += _rt.variant_members(self.variant, self._wire)", text)
        # One tagged Struct alone is not a union msgspec requires the tag of: slow path.
        self.assertIn("OptionKind = SlowOnly", text)

    def test_untagged_unions_msgspec_cannot_tell_apart_are_slow_only(self) -> None:
        a = Struct("A", [Field("a", STRING, required=True)])
        b = Struct("B", [Field("b", STRING, required=True)])
        either = Union("Either", "untagged", [Variant("A", None, NamedRef("A")), Variant("B", None, NamedRef("B"))])
        prims = Union(
            "Value",
            "untagged",
            [Variant("S", None, STRING), Variant("I", None, PrimRef("i64")), Variant("L", None, ArrayRef(STRING))],
        )
        text = python.emit(make_spec([a, b, either, prims]))
        self.assertIn("Either = SlowOnly", text)
        self.assertIn("Value: TypeAlias = str | I64 | list[str]", text)

    @unittest.skipUnless(shutil.which("ruff"), "ruff is not installed")
    def test_the_output_is_ruff_clean(self) -> None:
        decode = python_decode.emit(make_spec([THING, TEXT, CHUNK, BLOCK, UPDATE, KIND, SEVERITY], [PROMPT]))
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in (("v1.py", self.text), ("_v1_decode.py", decode)):
                path = Path(tmp) / name
                path.write_text(text)
                fmt = subprocess.run(
                    ["ruff", "format", "--diff", "--line-length", "120", str(path)], capture_output=True, text=True
                )
                self.assertEqual(fmt.returncode, 0, fmt.stdout + fmt.stderr)


class DecodeTests(unittest.TestCase):
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.text = python_decode.emit(make_spec([THING, TEXT, CHUNK, BLOCK, UPDATE, KIND, SEVERITY], [PROMPT]))

    def test_members_are_read_in_order_with_duplicates_refused(self) -> None:
        self.assertIn(
            block("""
                    if key == "id":
                        seen = rt.once(seen, 1, path, key)
                        x_id = rt.d_str(val, path + ".id", cx)
            """, 8),
            self.text,
        )

    def test_lenient_fields_salvage_with_a_warning(self) -> None:
        self.assertIn(
            block("""
                        x_meta = rt.lenient_raw_object(cx, val, path + "._meta", s, e, True)
            """, 12),
            self.text,
        )

    def test_missing_members_and_bounds_are_checked_after_the_object(self) -> None:
        # Without a length check, in the constructor's arguments (schema order); with one,
        # after the loop, field by field.
        self.assertIn('id=rt.need(x_id, path, "id")', self.text)
        self.assertIn('raise rt.missing(path, "text")', self.text)
        self.assertIn('rt.min_length(path + ".text", x_text, 1)', self.text)
        self.assertIn("count=3 if x_count is MISSING else x_count", self.text)

    def test_a_tagged_union_reads_its_tag_then_the_variant(self) -> None:
        self.assertIn(
            block("""
            def d_Block(v: Any, path: str, cx: rt.Ctx) -> Any:
                obj = rt.expect_object(v, path, "Block")
                tag, rest = rt.split_tag(obj, "type", path)
                if tag == "text":
                    return f_TextContent(rest, path, cx, t.TextContent)
                if tag == "gone":
                    return t.BlockGone()
                if tag is None:
                    raise rt.missing(path, "type")
                rt.warn_unknown(cx, path, "Block", tag)
                return rt.unknown(cx, obj, "type", tag)
            """),
            self.text,
        )

    def test_an_open_union_keeps_unknown_variants_silently(self) -> None:
        start = self.text.index("def d_Update(")
        body = self.text[start : self.text.index("\n\n\n", start)]
        self.assertNotIn("warn_unknown", body)
        self.assertIn('return rt.unknown(cx, obj, "kind", tag)', body)

    def test_the_output_compiles(self) -> None:
        compile(self.text, "_v1_decode.py", "exec")


NOTE = Method("session/update", "notification", "client", "Chunk", None, handler="session_update", required=True)
ASK = Method("session/ask", "request", "client", "Thing", "Chunk", handler="ask")
BYE = Method("session/bye", "notification", "agent", "Chunk", None, handler="bye")


class RolesTests(unittest.TestCase):
    text: str
    types: str

    @classmethod
    def setUpClass(cls) -> None:
        spec = make_spec([THING, TEXT, CHUNK, BLOCK, UPDATE, KIND, SEVERITY, *INIT_DECLS], [INITIALIZE, PROMPT, NOTE, ASK, BYE])
        types, roles = python.emit_modules(spec)
        assert roles is not None
        cls.types, cls.text = types, roles

    def test_each_side_gets_typed_calls_for_what_the_other_handles(self) -> None:
        self.assertIn(
            block('''
                async def prompt(self, params: Thing) -> Chunk:
                    """Sends `session/prompt` and waits for its validated result."""
                    return await self._request("session/prompt", params, Chunk)
            ''', 4),
            self.text,
        )
        self.assertIn(
            block('''
                async def session_update(self, params: Chunk) -> None:
                    """Sends the `session/update` notification."""
                    await self._notify("session/update", params)
            ''', 4),
            self.text,
        )
        agent_connection = self.text[self.text.index("class AgentConnection(") : self.text.index("class ClientConnection(")]
        self.assertIn("async def bye(", agent_connection)
        self.assertNotIn("async def ask(", agent_connection)

    def test_baseline_handlers_are_abstract_and_the_others_have_defaults(self) -> None:
        self.assertIn(
            block('''
                @abstractmethod
                async def prompt(self, cx: AgentContext, params: Thing) -> Chunk:
                    """Handles `session/prompt` (stable; every agent implements it)."""
            ''', 4),
            self.text,
        )
        self.assertIn(
            block('''
                async def ask(self, cx: ClientContext, params: Thing) -> Chunk:
                    """Handles `session/ask` (stable); answers -32601 until implemented."""
                    raise RequestError.method_not_found("session/ask")
            ''', 4),
            self.text,
        )
        self.assertIn(
            block('''
                async def bye(self, cx: AgentContext, params: Chunk) -> None:
                    """Handles the `session/bye` notification (stable); ignored until implemented."""
                    return
            ''', 4),
            self.text,
        )

    def test_the_entry_points_are_in_the_roles_module_and_the_surface_closes_the_types(self) -> None:
        for name in python_roles.EXPORTS:
            self.assertIn(f'    "{name}",\n', self.text)
            self.assertNotIn(f'    "{name}",\n', self.types)
        self.assertIn("return _agent.connect(SURFACE, agent, input, output, options, ClientConnection)", self.text)
        self.assertTrue(
            self.types.rstrip().endswith(
                "SURFACE: Final = Surface(\n"
                '    sys.modules[__name__], "agentproto.acp.generated._v1_decode", "agentproto.acp.generated.v1_roles"\n'
                ")\n"
                '"""This surface: its method table, payload decoders and rule checks (built from this module)."""'
            )
        )
        compile(self.text, "v1_roles.py", "exec")

    def test_the_roles_import_the_types_they_name_and_the_types_import_no_runtime(self) -> None:
        self.assertIn(
            block("""
                from agentproto.acp.generated.v1 import (
                    SURFACE,
                    AgentCapabilities,
                    Chunk,
                    ClientCapabilities,
                    InitializeRequest,
                    InitializeResponse,
                    Thing,
                )
            """),
            self.text,
        )
        for runtime in ("agentproto.acp.agent", "agentproto.acp.context", "agentproto.jsonrpc import Connection"):
            self.assertNotIn(runtime, self.types)
            self.assertIn(runtime, self.text)

    def test_a_handler_name_that_is_not_a_free_identifier_fails(self) -> None:
        for bad in ("class", "flush", "ext_method", "2fa"):
            method = Method("x/y", "request", "agent", "Thing", "Chunk", handler=bad)
            with self.subTest(bad), self.assertRaises(ValueError):
                python.emit(make_spec([THING, TEXT, CHUNK, BLOCK], [method]))

    def test_a_module_without_role_methods_has_no_roles(self) -> None:
        text, roles = python.emit_modules(make_spec([THING]))
        self.assertIsNone(roles)
        self.assertNotIn("class Agent(", text)

    @unittest.skipUnless(shutil.which("ruff"), "ruff is not installed")
    def test_the_roles_are_formatted_as_ruff_would(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "v1.py"
            path.write_text(self.text)
            fmt = subprocess.run(["ruff", "format", "--diff", "--line-length", "120", str(path)], capture_output=True, text=True)
            self.assertEqual(fmt.returncode, 0, fmt.stdout + fmt.stderr)


class LayoutTests(unittest.TestCase):
    def test_calls_go_flat_then_hugged_then_one_per_line(self) -> None:
        short = python.Call("f(", ["a", "b"], ")")
        self.assertEqual(python.layout(short, 0, 0), ["f(a, b)"])
        long_args = ["x" * 50, "y" * 50]
        self.assertEqual(python.layout(python.Call("f(", long_args, ")"), 20, 0), ["f(", "    " + ", ".join(long_args), ")"])
        many = ["x" * 70, "y" * 70]
        self.assertEqual(python.layout(python.Call("f(", many, ")"), 0, 0), ["f(", "    " + many[0] + ",", "    " + many[1] + ",", ")"])

    def test_tuples_never_hug(self) -> None:
        items = ['"' + "a" * 60 + '"', '"' + "b" * 60 + '"']
        self.assertEqual(python.layout(python.tup(items), 10, 0), ["(", f"    {items[0]},", f"    {items[1]},", ")"])
        self.assertEqual(python.flat(python.tup(['"x"'])), '("x",)')

    def test_strings_take_single_quotes_only_to_avoid_escapes(self) -> None:
        self.assertEqual(python.pystr("a"), '"a"')
        self.assertEqual(python.pystr('say "hi"'), "'say \"hi\"'")
        self.assertEqual(python.pystr("it's \"x\""), '"it\'s \\"x\\""')


if __name__ == "__main__":
    unittest.main()


# A model with one rule of each kind, for the rules as code (`python_checks.py`).
def _struct(name: str, *fields: Field) -> Struct:
    return Struct(name, list(fields))


def _opt(wire: str, type_name: str) -> Field:
    return Field(wire, NamedRef(type_name), required=False, nullable=True)


def _flag(wire: str) -> Field:
    return Field(wire, BOOL, required=False, default=False, has_default=True)


SID = Field("sessionId", NamedRef("SessionId"), required=True)
RULES_DECLS: list[Decl] = [
    Alias("SessionId", STRING),
    _struct("PromptCapabilities", _flag("image")),
    _struct("McpCapabilities", _flag("http")),
    _struct("ListCapabilities"),
    _struct("FormCapabilities"),
    _struct("ElicitationCapabilities", _opt("form", "FormCapabilities")),
    _struct(
        "AgentCapabilities",
        _flag("loadSession"),
        Field("promptCapabilities", NamedRef("PromptCapabilities"), required=False, default={"image": False}, has_default=True),
        Field("mcpCapabilities", NamedRef("McpCapabilities"), required=False, default={"http": False}, has_default=True),
        _opt("list", "ListCapabilities"),
    ),
    _struct("ClientCapabilities", _opt("elicitation", "ElicitationCapabilities")),
    _struct(
        "InitializeRequest",
        Field("protocolVersion", U16, required=True),
        Field("clientCapabilities", NamedRef("ClientCapabilities"), required=False, default={}, has_default=True),
    ),
    _struct(
        "InitializeResponse",
        Field("protocolVersion", U16, required=True),
        Field(
            "agentCapabilities",
            NamedRef("AgentCapabilities"),
            required=False,
            default={"loadSession": False, "promptCapabilities": {"image": False}, "mcpCapabilities": {"http": False}},
            has_default=True,
        ),
        Field("authMethods", ArrayRef(STRING), required=False),
    ),
    _struct("TextContent", Field("text", STRING, required=True)),
    _struct("ImageContent", Field("data", STRING, required=True)),
    Union(
        "ContentBlock",
        "tagged",
        [Variant("Text", "text", NamedRef("TextContent")), Variant("Image", "image", NamedRef("ImageContent"))],
        tag_field="type",
    ),
    _struct("StdioServer", Field("command", STRING, required=True)),
    _struct("HttpServer", Field("url", STRING, required=True)),
    Union(
        "McpServer",
        "tagged",
        [Variant("Stdio", None, NamedRef("StdioServer")), Variant("Http", "http", NamedRef("HttpServer"))],
        tag_field="type",
        default="Stdio",
    ),
    _struct("PromptRequest", SID, Field("prompt", ArrayRef(NamedRef("ContentBlock")), required=True)),
    _struct("PromptResponse"),
    _struct("NewSessionRequest", Field("mcpServers", ArrayRef(NamedRef("McpServer")), required=False)),
    _struct("ModeState", Field("current", STRING, required=True)),
    _struct("NewSessionResponse", SID, _opt("modes", "ModeState")),
    _struct("LoadSessionRequest", SID),
    _struct("LoadSessionResponse", _opt("modes", "ModeState")),
    _struct("SetModeRequest", SID, Field("modeId", STRING, required=True)),
    _struct("Empty"),
    _struct("FormMode", Field("schema", STRING, required=True)),
    _struct("UrlMode", Field("url", STRING, required=True)),
    Union(
        "ElicitVariant",
        "tagged",
        [Variant("Form", "form", NamedRef("FormMode")), Variant("Url", "url", NamedRef("UrlMode"))],
        tag_field="mode",
    ),
    Struct("ElicitRequest", [Field("message", STRING, required=True)], flatten="ElicitVariant"),
]
AGENT_INIT = "initialize.result"
RULES_METHODS = [
    replace(INITIALIZE),
    Method(
        "session/prompt", "request", "agent", "PromptRequest", "PromptResponse", handler="prompt",
        values=[ValueGate("prompt", "ContentBlock", "type", AGENT_INIT, ["text"], {"image": ["agentCapabilities", "promptCapabilities", "image"]})],
    ),
    Method(
        "session/new", "request", "agent", "NewSessionRequest", "NewSessionResponse", handler="new_session",
        values=[ValueGate("mcpServers", "McpServer", "type", AGENT_INIT, [""], {"http": ["agentCapabilities", "mcpCapabilities", "http"]})],
        session=SessionRule("created"),
    ),
    Method(
        "session/load", "request", "agent", "LoadSessionRequest", "LoadSessionResponse", handler="load_session",
        gate=Gate(AGENT_INIT, ["agentCapabilities", "loadSession"]),
        session=SessionRule("opened", unseen_ok=True),
    ),
    Method(
        "session/list", "request", "agent", "Empty", "Empty", handler="list_sessions",
        gate=Gate(AGENT_INIT, ["agentCapabilities", "list"]),
    ),
    Method(
        "auth/login", "request", "agent", "Empty", "Empty", handler="login",
        gate=Gate(AGENT_INIT, ["authMethods"], test="non-empty"),
    ),
    Method(
        "session/set_mode", "request", "agent", "SetModeRequest", "Empty", handler="set_session_mode",
        session_gate=SessionGate("modes", ["session/new", "session/load"]),
    ),
    Method(
        "elicitation/create", "request", "client", "ElicitRequest", "Empty", handler="elicit",
        gate=Gate("initialize.params", ["clientCapabilities", "elicitation", "{mode}"], refusal=-32602),
    ),
]


class ChecksTests(unittest.TestCase):
    """The rules as code in the roles module: one predicate per capability path, one
    function per rule of a method, `CHECKS` by wire name."""

    text: str

    @classmethod
    def setUpClass(cls) -> None:
        _, roles = python.emit_modules(make_spec(RULES_DECLS, RULES_METHODS))
        assert roles is not None
        cls.text = roles

    def test_a_capability_path_is_an_access_chain_that_tests_what_may_be_missing(self) -> None:
        self.assertIn(
            block('''
                def _agent_has_agent_capabilities_load_session(init: InitializeResponse) -> bool:
                    """Whether `agentCapabilities.loadSession` is advertised in the agent's `initialize` answer."""
                    return init.agent_capabilities.load_session is True
            '''),
            self.text,
        )
        self.assertIn("return isinstance(init.agent_capabilities.list, ListCapabilities)", self.text)
        self.assertIn(
            block('''
                elicitation = init.client_capabilities.elicitation
                if not isinstance(elicitation, ElicitationCapabilities):
                    return False
                return isinstance(elicitation.form, FormCapabilities)
            ''', 4),
            self.text,
        )
        self.assertIn(
            block('''
                def _agent_has_auth_methods_non_empty(init: InitializeResponse) -> bool:
                    """Whether `authMethods` is advertised in the agent's `initialize` answer."""
                    items = init.auth_methods
                    return isinstance(items, list) and len(items) > 0
            '''),
            self.text,
        )

    def test_a_gate_returns_a_refusal_value(self) -> None:
        self.assertIn(
            block('''
                def _load_session_refusal(params: LoadSessionRequest, init: InitializeResponse) -> Refusal | None:
                    """What `session/load` needs that the agent's `initialize` message did not advertise."""
                    if not _agent_has_agent_capabilities_load_session(init):
                        return CapabilityNotAdvertised("agentCapabilities.loadSession")
                    return None
            '''),
            self.text,
        )
        self.assertIn('return CapabilityNotAdvertised("authMethods", "non-empty")', self.text)

    def test_a_chosen_capability_switches_on_the_variant(self) -> None:
        self.assertIn(
            block('''
                    variant = params.variant
                    chosen = type(variant)
                    if chosen is FormMode:
                        if not _client_has_client_capabilities_elicitation_form(init):
                            return ChoiceNotAdvertised("mode", "form", "clientCapabilities.elicitation.form")
                    elif chosen is UrlMode:
                        return ChoiceNotAdvertised("mode", "url", "clientCapabilities.elicitation.url")
                    elif isinstance(variant, Unknown) and variant.tag is not None:
                        return ChoiceNotAdvertised("mode", variant.tag, "clientCapabilities.elicitation." + variant.tag)
                    return None
            ''', 4),
            self.text,
        )

    def test_a_value_gate_walks_the_list_and_switches_on_each_item(self) -> None:
        self.assertIn(
            block('''
                    for index, item in enumerate(params.prompt):
                        kind = type(item)
                        if kind is ImageContent:
                            if not _agent_has_agent_capabilities_prompt_capabilities_image(init):
                                return ValueNotAdvertised(
                                    f"$.params.prompt[{index}]",
                                    "image",
                                    "agentCapabilities.promptCapabilities.image",
                                    _prompt_accepted(init),
                                )
                        elif isinstance(item, Unknown):
                            return ValueNotAdvertised(f"$.params.prompt[{index}]", item.tag or "", None, _prompt_accepted(init))
                    return None
            ''', 4),
            self.text,
        )
        # An optional list, and a baseline variant without a tag: an unknown item without
        # a tag reads as that one.
        self.assertIn("for index, item in enumerate(items if isinstance(items, list) else ()):", self.text)
        self.assertIn("elif isinstance(item, Unknown) and item.tag:", self.text)
        self.assertIn(
            block('''
                def _new_session_accepted(init: InitializeResponse) -> list[str]:
                    """The kinds of items `session/new` may carry, as the agent advertised them."""
                    kinds: list[str] = [""]
                    if _agent_has_agent_capabilities_mcp_capabilities_http(init):
                        kinds.append("http")
                    return kinds
            '''),
            self.text,
        )

    def test_sessions_and_announcements_are_read_from_the_typed_values(self) -> None:
        self.assertIn("def _prompt_session(params: PromptRequest) -> str:", self.text)
        self.assertIn("return params.session_id", self.text)
        self.assertIn("def _new_session_created(result: NewSessionResponse) -> str:", self.text)
        self.assertIn(
            block('''
                def _load_session_announced(result: LoadSessionResponse) -> frozenset[str]:
                    """The members an answer to `session/load` announces for its session."""
                    members: list[str] = []
                    if isinstance(result.modes, ModeState):
                        members.append("modes")
                    return frozenset(members)
            '''),
            self.text,
        )

    def test_checks_gathers_every_method_with_a_rule(self) -> None:
        self.assertIn(
            block('''
                CHECKS: Final[Mapping[str, MethodChecks[Any, Any, Any]]] = {
                    "session/prompt": MethodChecks(session=_prompt_session, refusal=_prompt_refusal, accepted=_prompt_accepted),
                    "session/new": MethodChecks(
                        created=_new_session_created,
                        refusal=_new_session_refusal,
                        accepted=_new_session_accepted,
                        announced=_new_session_announced,
                        effect="created",
                    ),
                    "session/load": MethodChecks(
                        session=_load_session_session,
                        refusal=_load_session_refusal,
                        announced=_load_session_announced,
                        effect="opened",
                        unseen_ok=True,
                    ),
                    "session/list": MethodChecks(refusal=_list_sessions_refusal),
                    "auth/login": MethodChecks(refusal=_login_refusal),
                    "session/set_mode": MethodChecks(session=_set_session_mode_session, needs="modes"),
                    "elicitation/create": MethodChecks(refusal=_elicit_refusal),
                }
            '''),
            self.text,
        )
        self.assertIn(
            "from agentproto.acp.refusal import (\n    CapabilityNotAdvertised,\n    ChoiceNotAdvertised,\n", self.text
        )
        self.assertIn("from agentproto.codec import Unknown\n", self.text)
        compile(self.text, "v1_roles.py", "exec")

    def test_a_default_that_advertises_fails(self) -> None:
        def advertising(d: Decl) -> Decl:
            if not isinstance(d, Struct) or d.name not in ("AgentCapabilities", "InitializeResponse"):
                return d
            fields = []
            for f in d.fields:
                if f.wire == "loadSession":
                    f = replace(f, default=True)
                elif f.wire == "agentCapabilities":
                    f = replace(f, default={**f.default, "loadSession": True})
                fields.append(f)
            return replace(d, fields=fields)

        decls = [advertising(d) for d in RULES_DECLS]
        with self.assertRaisesRegex(ValueError, "agentCapabilities.loadSession: the default of `agentCapabilities` advertises it"):
            python.emit_modules(make_spec(decls, RULES_METHODS))

    @unittest.skipUnless(shutil.which("ruff"), "ruff is not installed")
    def test_the_checks_are_formatted_as_ruff_would(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "v1_roles.py"
            path.write_text(self.text)
            fmt = subprocess.run(["ruff", "format", "--diff", "--line-length", "120", str(path)], capture_output=True, text=True)
            self.assertEqual(fmt.returncode, 0, fmt.stdout + fmt.stderr)
