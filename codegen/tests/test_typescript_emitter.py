"""The TypeScript emitter: types (`typescript.py`), validators and encoders
(`typescript_codec.py`), method and rule tables and roles (`typescript_roles.py`), on a small
hand-made model, and the output compiled with the SDK's runtime under `tsc --strict`."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import textwrap
import unittest
from dataclasses import replace
from pathlib import Path

from agentproto_codegen import typescript, typescript_codec, typescript_share
from agentproto_codegen.model import Alias, ArrayRef, Decl, Enum, Field, Gate, JsonRef, Method, NamedRef, PrimRef
from agentproto_codegen.model import SessionGate, SessionRule, Spec, Struct, Union, ValueGate, Variant

ROOT = Path(__file__).resolve().parents[2]
TSC = ROOT / "ts/node_modules/.bin/tsc"

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
        sources=[
            {"file": "spec/acp/v1/schema.json", "sha256": "ab" * 32},
            {"file": "rules/acp.toml", "sha256": "cd" * 32},
        ],
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
        Field("size", PrimRef("u64"), required=False),
        Field("tags", ArrayRef(STRING), required=False, skip_invalid_items=True, lenient=True),
        Field("content-type", STRING, required=False),
        META,
        Field("note", STRING, required=False, nullable=True, lenient=True),
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
VALUE = Union(
    "Value",
    "untagged",
    [Variant("S", None, STRING), Variant("I", None, PrimRef("i64")), Variant("F", None, PrimRef("f64"))],
)
KIND = Enum("Kind", ["read", "edit"], doc="A kind.")
SEVERITY = Enum("Severity", ["info"], open=True)
PROMPT = Method(
    "session/prompt",
    "request",
    "agent",
    "Thing",
    "Chunk",
    handler="new_prompt",
    required=True,
    gate=Gate("initialize.result", ["promptCapabilities", "image"]),
    session=SessionRule("created", unseen_ok=True),
)
DECLS: list[Decl] = [THING, TEXT, CHUNK, BLOCK, UPDATE, VALUE, KIND, SEVERITY, Alias("SessionId", STRING)]
SESSION_SCOPED_PARAMS = Struct("Scoped", [Field("sessionId", NamedRef("SessionId"), required=True)])
BOOL = PrimRef("bool")


def opt(wire: str, type_name: str, **kw: object) -> Field:
    return Field(wire, NamedRef(type_name), required=False, **kw)  # type: ignore[arg-type]


# A small surface with one rule of each kind, for the rule checks of the roles module.
RULE_DECLS: list[Decl] = [
    *DECLS,
    Struct("PromptCapabilities", [Field("image", BOOL, required=False, default=False, has_default=True)]),
    Struct("FormCapabilities", [META]),
    Struct("ElicitationCapabilities", [opt("form", "FormCapabilities", nullable=True)]),
    Struct(
        "AgentCapabilities",
        [
            Field("loadSession", BOOL, required=False, default=False, has_default=True),
            opt("promptCapabilities", "PromptCapabilities", default={"image": False}, has_default=True),
        ],
    ),
    Struct("ClientCapabilities", [opt("elicitation", "ElicitationCapabilities", nullable=True)]),
    Struct("InitializeRequest", [opt("clientCapabilities", "ClientCapabilities", default={}, has_default=True)]),
    Struct(
        "InitializeResponse",
        [
            opt("agentCapabilities", "AgentCapabilities", default={"loadSession": False}, has_default=True),
            Field("authMethods", ArrayRef(STRING), required=False),
        ],
    ),
    Struct("Empty", [META]),
    Struct("Modes", [META]),
    Struct("NewSessionResponse", [Field("sessionId", NamedRef("SessionId"), required=True), opt("modes", "Modes", nullable=True)]),
    Struct("LoadResponse", [opt("modes", "Modes", nullable=True)]),
    Struct("PromptRequest", [Field("sessionId", NamedRef("SessionId"), required=True), Field("prompt", ArrayRef(NamedRef("Block")), required=True)]),
    Struct("SetModeRequest", [Field("sessionId", NamedRef("SessionId"), required=True), Field("modeId", STRING, required=True)]),
    Struct("FormMode", [Field("schema", STRING, required=True)]),
    Struct("UrlMode", [Field("url", STRING, required=True)]),
    Union("ElicitMode", "tagged", [Variant("Form", "form", NamedRef("FormMode")), Variant("Url", "url", NamedRef("UrlMode"))], tag_field="mode"),
    Struct("ElicitRequest", [Field("message", STRING, required=True)], flatten="ElicitMode"),
    SESSION_SCOPED_PARAMS,
]
IMAGE = ["agentCapabilities", "promptCapabilities", "image"]
RULE_METHODS = [
    Method("initialize", "request", "agent", "InitializeRequest", "InitializeResponse", handler="initialize"),
    Method("session/new", "request", "agent", "Empty", "NewSessionResponse", handler="new_session", session=SessionRule("created")),
    Method(
        "session/load", "request", "agent", "Scoped", "LoadResponse", handler="load_session",
        gate=Gate("initialize.result", ["agentCapabilities", "loadSession"]), session=SessionRule("opened", unseen_ok=True),
    ),
    Method(
        "session/prompt", "request", "agent", "PromptRequest", "Empty", handler="prompt",
        values=[ValueGate("prompt", "Block", "type", "initialize.result", ["text"], {"gone": IMAGE})],
    ),
    Method(
        "session/set_mode", "request", "agent", "SetModeRequest", "Empty", handler="set_mode",
        session_gate=SessionGate("modes", ["session/new", "session/load"]),
    ),
    Method("auth/login", "request", "agent", "Empty", "Empty", handler="login", gate=Gate("initialize.result", ["authMethods"], test="non-empty")),
    Method(
        "elicitation/create", "request", "client", "ElicitRequest", "Empty", handler="elicit",
        gate=Gate("initialize.params", ["clientCapabilities", "elicitation", "{mode}"], refusal=-32602),
    ),
]

# What the generated public and roles modules import from `ts/src/acp` (besides `jsonrpc/`, `codec/`).
RUNTIME_FILES = [
    "agent.ts",
    "client.ts",
    "context.ts",
    "endpoint.ts",
    "errors.ts",
    "refusal.ts",
    "options.ts",
    "outgoing.ts",
    "pair.ts",
    "peer-handle.ts",
    "process.ts",
    "receive.ts",
    "roles.ts",
    "rules.ts",
    "surface.ts",
]


class TypesTests(unittest.TestCase):
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.text = typescript.emit(make_spec(DECLS, [PROMPT]))

    def test_header_names_the_sources_and_their_hashes(self) -> None:
        self.assertTrue(self.text.startswith("// @generated by `make codegen` from spec/acp/v1/schema.json"))
        self.assertIn(f"// sha256 {'ab' * 32} (schema), {'cd' * 32} (rules).", self.text)
        self.assertIn("Do not edit", self.text)

    def test_struct_members_are_wire_keys_with_three_states(self) -> None:
        self.assertIn(
            block("""
            /** A thing. */
            export interface Thing {
              /** The id. */
              id: string;
              parent: string | null;
              title?: string;
              count?: number;
              size?: Int64;
              tags?: string[];
              "content-type"?: string;
              _meta?: RawJson | null;
              note?: string | null;
            }
            """),
            self.text,
        )

    def test_tagged_unions_carry_the_tag_and_keep_unknown_variants(self) -> None:
        self.assertIn(
            block("""
            export type Block =
              | ({ type: "text" } & TextContent)
              | { type: "gone" }
              | Unknown<"type">;
            """),
            self.text,
        )

    def test_an_untagged_union_with_integers_and_doubles_makes_the_integers_bigint(self) -> None:
        self.assertIn("export type Value =\n  | string\n  | bigint\n  | number;", self.text)

    def test_enums_are_literal_unions_open_ones_with_any_string(self) -> None:
        self.assertIn('export type Kind =\n  | "read"\n  | "edit";', self.text)
        self.assertIn('export type Severity =\n  | "info"\n  | (string & {});', self.text)
        self.assertIn("export type SessionId = string;", self.text)

    def test_a_session_gate_row_lists_its_member_and_openers(self) -> None:
        from agentproto_codegen import typescript_roles
        from agentproto_codegen.model import SessionGate

        gated = replace(PROMPT, session_gate=SessionGate("modes", ["session/new", "session/load"]))
        self.assertIn('sessionGate: { member: "modes", openedBy: ["session/new", "session/load"] },', typescript_roles.method_row(gated))

    def test_the_method_table_carries_the_rules(self) -> None:
        self.assertIn(
            block(
                """
                {
                  name: "session/prompt",
                  kind: "request",
                  side: "agent",
                  params: "Thing",
                  result: "Chunk",
                  stability: "stable",
                  handler: "newPrompt",
                  required: true,
                  nullResult: false,
                  gate: { where: "initialize.result", path: ["promptCapabilities", "image"], test: "advertised", refusal: -32601 },
                  values: [],
                  session: { effect: "created", unseenOk: true },
                  sessionGate: null,
                },
                """,
                2,
            ),
            self.text,
        )
        self.assertIn('  promptTurn: "session/prompt",\n  nullRequestId: true,\n};', self.text)

    def test_a_flattened_object_holds_its_variant(self) -> None:
        option = Struct("Option", [Field("id", STRING, required=True)], flatten="OptionKind")
        kind = Union("OptionKind", "tagged", [Variant("Flag", "flag", NamedRef("Flag"))], tag_field="type")
        flag = Struct("Flag", [Field("on", PrimRef("bool"), required=True)])
        text = typescript.emit(make_spec([option, kind, flag]))
        self.assertIn("  id: string;\n  /** The variant part of this object", text)
        self.assertIn("  variant: OptionKind;\n}", text)

    def test_a_name_the_module_uses_itself_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "RawJson: the name is taken"):
            typescript.emit(make_spec([Struct("RawJson", [])]))

    def test_the_surface_codec_module_builds_the_receivers(self) -> None:
        text = typescript.codec_module(make_spec(DECLS))
        self.assertIn('export * from "../generated/acp/v1.js";', text)
        self.assertIn('new Receiver(SURFACE, "agent", { allowNullId: RULES.nullRequestId })', text)
        # Messages only: it imports nothing of the roles or the connection.
        imports = [line for line in text.splitlines() if line.startswith(("import", "export"))]
        for line in imports:
            self.assertNotRegex(line, r"roles|endpoint|connection|process", line)

    def test_the_surface_entry_point_re_exports_its_codec_module(self) -> None:
        text = typescript.public_module(make_spec(DECLS))
        self.assertIn('export * from "./v1-codec.js";', text)
        self.assertIn('import { SURFACE } from "./v1-codec.js";', text)


class CodecTests(unittest.TestCase):
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.text = typescript_codec.emit(make_spec(DECLS, [PROMPT]))

    def test_members_are_read_in_one_switch_with_duplicates_refused(self) -> None:
        self.assertIn(
            block(
                """
                for (const m of members) {
                  switch (m.key) {
                    case "id": {
                      if ((seen0 & 0x1) !== 0) throw rt.duplicate(path, "id");
                      seen0 |= 0x1;
                      x0_id = rt.d_str(m.value, path + ".id", cx);
                      break;
                    }
                """,
                2,
            ),
            self.text,
        )
        # The member's path is built in the call that decodes it.
        self.assertIn('x6_content_type = rt.d_str(m.value, path + "[\\"content-type\\"]", cx);', self.text)

    def test_lenient_members_salvage_with_a_warning(self) -> None:
        # The runtime holds the try/catch: one line per lenient member.
        self.assertIn('x7__meta = rt.lenientRawObject(m, path + "._meta", cx, true);', self.text)
        self.assertIn('x8_note = m.value === null ? null : rt.lenient(cx, m.value, path + ".note", rt.d_str);', self.text)
        self.assertIn('x5_tags = rt.items(cx, m.value, path + ".tags", rt.d_str, false, true);', self.text)

    def test_missing_members_and_bounds_are_checked_after_the_object(self) -> None:
        self.assertIn(
            block(
                """
                if (x0_id === MISSING) throw rt.missing(path, "id");
                if (x1_parent === MISSING) throw rt.missing(path, "parent");
                o.id = x0_id;
                o.parent = x1_parent;
                if (x2_title !== MISSING) o.title = x2_title;
                o.count = x3_count === MISSING ? 3 : x3_count;
                """,
                2,
            ),
            self.text,
        )
        self.assertIn('rt.minLength(path + ".text", x0_text, 1);', self.text)

    def test_a_tagged_union_reads_its_tag_then_the_variant(self) -> None:
        self.assertIn(
            block(
                """
                const [tag, rest] = rt.splitTag(obj, "type", path);
                switch (tag) {
                  case "text":
                    return f_TextContent(rest, path, cx, { type: "text" }) as t.Block;
                  case "gone":
                    return { type: "gone" } as t.Block;
                }
                if (tag === null) {
                  throw rt.missing(path, "type");
                }
                rt.warnUnknown(cx, path, "Block", tag);
                return rt.unknown(cx, obj, "type", tag) as t.Block;
                """,
                2,
            ),
            self.text,
        )

    def test_an_open_union_keeps_unknown_variants_silently(self) -> None:
        start = self.text.index("export function d_Update(")
        body = self.text[start : self.text.index("\n}\n", start)]
        self.assertNotIn("warnUnknown", body)
        self.assertIn('return rt.unknown(cx, obj, "kind", tag) as t.Update;', body)

    def test_encoders_write_schema_order_and_defaults(self) -> None:
        self.assertIn('s += ",\\"count\\":" + (v.count === undefined ? "3" : rt.int(v.count));', self.text)
        self.assertIn('s += ",\\"parent\\":" + (v.parent === null ? "null" : rt.str(v.parent));', self.text)
        self.assertIn('return ",\\"type\\":\\"text\\"" + m_TextContent(v);', self.text)

    def test_an_untagged_union_tries_its_variants_in_order(self) -> None:
        self.assertIn("const got1 = rt.attempt(cx, v, path, rt.d_i64_big);", self.text)
        self.assertIn('throw rt.noVariant(path, v, "one of a string, an integer from -9223372036854775808 to 9223372036854775807, a number");', self.text)
        self.assertIn('if (typeof v === "bigint") return rt.int(v);', self.text)

    def test_the_tables_name_every_type(self) -> None:
        self.assertIn("  Thing: d_Thing,", self.text)
        self.assertIn("  Block: e_Block,", self.text)
        # An enum writes as a string and an open one reads as one: no function of their own.
        self.assertIn("  Kind: d_Kind,", self.text)
        self.assertIn("  Kind: rt.str,", self.text)
        self.assertIn("  Severity: rt.d_str,", self.text)
        self.assertNotIn("function e_Kind(", self.text)
        self.assertNotIn("function d_Severity(", self.text)

    def test_a_list_member_calls_the_runtime_with_its_item_function(self) -> None:
        self.assertIn('if (v.tags !== undefined) s += ",\\"tags\\":" + rt.list(v.tags, rt.str);', self.text)
        self.assertNotIn("function enc_list_", self.text)

    def test_doubles_in_defaults_are_canonical(self) -> None:
        cases = {
            1.0: "1.0",
            0.5: "0.5",
            1e16: "1e+16",
            1e-6: "1e-6",
            0.00001: "0.00001",
            -2.5e-8: "-2.5e-8",
            -0.0: "-0.0",
        }
        for value, text in cases.items():
            self.assertEqual(typescript_codec.canonical_double(value), text, value)

    def test_the_output_is_deterministic(self) -> None:
        self.assertEqual(typescript_codec.emit(make_spec(DECLS, [PROMPT])), self.text)


class RolesTests(unittest.TestCase):
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        notify = Method("session/cancel", "notification", "agent", "Thing", None, handler="cancel")
        update = Method("session/update", "notification", "client", "Chunk", None, handler="session_update", required=True)
        plain = replace(PROMPT, gate=None, session=None)
        cls.text = typescript.roles_module(make_spec([*DECLS, SESSION_SCOPED_PARAMS], [plain, notify, update]))

    def test_the_handles_have_one_typed_call_per_method_the_peer_handles(self) -> None:
        self.assertIn(
            block(
                """
                export class AgentConnection extends AgentConnectionBase {
                  /** Sends `session/prompt` (stable) and resolves with its validated result. */
                  newPrompt(params: T.Thing): Promise<T.Chunk> {
                    return this.requestTyped("session/prompt", params) as Promise<T.Chunk>;
                  }
                """
            ),
            self.text,
        )
        self.assertIn('  cancel(params: T.Thing): Promise<void> {\n    return this.notifyTyped("session/cancel", params);', self.text)
        self.assertIn("export class ClientConnection extends ClientConnectionBase {", self.text)

    def test_baseline_handlers_are_required_the_others_optional(self) -> None:
        self.assertIn("  newPrompt(cx: AgentContext, params: T.Thing): Promise<T.Chunk> | T.Chunk;", self.text)
        self.assertIn("  cancel?(cx: AgentContext, params: T.Thing): Promise<void> | void;", self.text)
        self.assertIn("  sessionUpdate(cx: ClientContext, params: T.Chunk): Promise<void> | void;", self.text)
        self.assertIn("  extMethod?(cx: ClientContext, request: ExtMessage)", self.text)

    def test_session_scoped_params_are_listed(self) -> None:
        self.assertNotIn('"Scoped"', self.text)  # no method takes it
        spec = make_spec([*DECLS, SESSION_SCOPED_PARAMS], [Method("x", "request", "agent", "Scoped", "Chunk", handler="x")])
        self.assertIn('export const SESSION_SCOPED: ReadonlySet<string> = new Set(["Scoped"]);', typescript.roles_module(spec))

    def test_a_reserved_or_colliding_handler_name_is_refused(self) -> None:
        reserved = Method("x", "request", "agent", "Thing", "Chunk", handler="flush")
        with self.assertRaisesRegex(ValueError, "reserved"):
            typescript.roles_module(make_spec(DECLS, [reserved]))
        twice = Method("y", "request", "agent", "Thing", "Chunk", handler="new_prompt")
        with self.assertRaisesRegex(ValueError, "collide"):
            typescript.roles_module(make_spec(DECLS, [replace(PROMPT, gate=None, session=None), twice]))

    def test_the_entry_point_binds_the_roles_to_the_surface(self) -> None:
        text = typescript.public_module(make_spec(DECLS, [PROMPT]))
        self.assertIn('export * from "../generated/acp/v1.roles.js";', text)
        self.assertIn("return roles.connectAgent(ROLES, agent, input, output, options, ClientConnection);", text)
        self.assertIn("return spawn(ROLES, command, client, options, AgentConnection);", text)
        self.assertIn("return pair.connectPair(ROLES, agent, client, options, AgentConnection, ClientConnection);", text)
        # The builders and sessions are written against the real v1 types: not for this model.
        self.assertNotIn("v1-builders", text)
        self.assertNotIn("v1-session", text)


class RuleChecksTests(unittest.TestCase):
    """The rules as code over typed values: `<handler>Rules` objects and `CHECKS`."""

    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.text = typescript.roles_module(make_spec(RULE_DECLS, RULE_METHODS))

    def test_the_handshake_is_both_typed_initialize_messages(self) -> None:
        self.assertIn("export interface Handshake {\n  readonly client: T.InitializeRequest;\n  readonly agent: T.InitializeResponse;\n}", self.text)

    def test_a_gate_is_an_access_chain_that_returns_a_refusal(self) -> None:
        self.assertIn(
            block(
                """
                refusal(params: T.Scoped, handshake: Handshake): Refusal | null {
                  if (handshake.agent.agentCapabilities?.loadSession !== true) {
                    return { kind: "CapabilityNotAdvertised", capability: "agentCapabilities.loadSession", test: "advertised" };
                  }
                  return null;
                },
                """,
                2,
            ),
            self.text,
        )
        self.assertIn("if ((handshake.agent.authMethods?.length ?? 0) <= 0) {", self.text)
        self.assertIn('capability: "authMethods", test: "non-empty" };', self.text)

    def test_a_chosen_capability_switches_over_the_params_variant(self) -> None:
        self.assertIn(
            block(
                """
                const variant = params.variant;
                if (variant instanceof UnknownVariant) {
                  if (variant.variantTag !== null) return { kind: "ChoiceNotAdvertised", member: "mode", value: variant.variantTag, capability: "clientCapabilities.elicitation." + variant.variantTag };
                } else {
                  switch (variant.mode) {
                    case "form":
                      if (handshake.client.clientCapabilities?.elicitation?.form == null) return { kind: "ChoiceNotAdvertised", member: "mode", value: "form", capability: "clientCapabilities.elicitation.form" };
                      break;
                    case "url":
                      return { kind: "ChoiceNotAdvertised", member: "mode", value: "url", capability: "clientCapabilities.elicitation.url" };
                  }
                }
                """,
                4,
            ),
            self.text,
        )

    def test_a_value_gate_walks_the_typed_list_and_switches_on_the_variant(self) -> None:
        self.assertIn(
            block(
                """
                const prompt = params.prompt;
                for (let index = 0; index < prompt.length; index++) {
                  const item = prompt[index]!;
                  if (item instanceof UnknownVariant) {
                    return { kind: "ValueNotAdvertised", path: `$.params.prompt[${index}]`, tag: item.variantTag ?? "", capability: null, accepted: promptRules.accepted!(handshake) };
                  }
                  switch (item.type) {
                    case "text":
                      continue;
                    case "gone":
                      if (handshake.agent.agentCapabilities?.promptCapabilities?.image === true) continue;
                """,
                4,
            ),
            self.text,
        )
        self.assertIn(
            block(
                """
                accepted(handshake: Handshake): string[] {
                  const kinds: string[] = ["text"];
                  if (handshake.agent.agentCapabilities?.promptCapabilities?.image === true) kinds.push("gone");
                  return kinds;
                },
                """,
                2,
            ),
            self.text,
        )

    def test_sessions_are_read_from_the_typed_params_and_results(self) -> None:
        self.assertIn("  created(result: T.NewSessionResponse): string {\n    return result.sessionId;\n  },", self.text)
        self.assertIn("  session(params: T.PromptRequest): string {\n    return params.sessionId;\n  },", self.text)
        self.assertIn('    if (result.modes != null) members.push("modes");', self.text)
        self.assertIn('  needs: "modes",\n};', self.text)
        self.assertIn('  ["session/set_mode", setModeRules],', self.text)
        self.assertNotIn('["initialize"', self.text)  # no rule: no entry

    def test_the_handles_expose_the_peers_typed_capabilities(self) -> None:
        self.assertIn('override get agentCapabilities(): T.InitializeResponse["agentCapabilities"] | undefined {', self.text)
        self.assertIn("return (this.endpoint.negotiated?.client as T.InitializeRequest | undefined)?.clientCapabilities;", self.text)

    def test_a_default_that_would_advertise_is_refused(self) -> None:
        decls = [d for d in RULE_DECLS if d.name != "AgentCapabilities"]
        decls.append(Struct("AgentCapabilities", [Field("loadSession", BOOL, required=False, default=True, has_default=True)]))
        with self.assertRaisesRegex(ValueError, "the default of `loadSession` advertises it"):
            typescript.roles_module(make_spec(decls, RULE_METHODS))

    def test_a_capability_of_another_kind_is_refused(self) -> None:
        gate = Gate("initialize.result", ["authMethods"])
        methods = [*RULE_METHODS[:1], Method("x", "request", "agent", "Empty", "Empty", handler="x", gate=gate)]
        with self.assertRaisesRegex(ValueError, "a capability must be a boolean or an object"):
            typescript.roles_module(make_spec(RULE_DECLS, methods))


def shared_pair() -> tuple[Spec, Spec, dict[tuple[str, str], typescript_share.Plan]]:
    """A stable surface and an unstable one that changes `Thing`, rewords `Kind` and adds
    `Extra`, with the plans of both (the unstable one takes the rest from the stable one)."""
    stable = make_spec(RULE_DECLS, RULE_METHODS)
    decls = dict(stable.decls)
    decls["Thing"] = replace(THING, fields=[*THING.fields, Field("extra", NamedRef("Extra"), required=False)])
    decls["Kind"] = replace(KIND, doc="A kind, in other words.")
    decls["Extra"] = Struct("Extra", [Field("chunk", NamedRef("Chunk"), required=True)])
    unstable = replace(stable, surface="unstable", source_file="acp/v1/schema.unstable.json", decls=decls)
    plans = typescript_share.plans({("v1", "stable"): stable, ("v1", "unstable"): unstable})
    return stable, unstable, plans


class SharingTests(unittest.TestCase):
    types: str
    codec: str

    @classmethod
    def setUpClass(cls) -> None:
        _, unstable, plans = shared_pair()
        cls.plan = plans[("v1", "unstable")]
        cls.types = typescript.emit(unstable, cls.plan)
        cls.codec = typescript_codec.emit(unstable, cls.plan)

    def test_the_plan_keeps_what_differs_and_where_the_doc_differs_only_the_type(self) -> None:
        self.assertEqual(self.plan.types["Thing"], "v1-unstable")
        self.assertEqual(self.plan.types["Kind"], "v1-unstable")  # its doc differs
        self.assertEqual(self.plan.codec["Kind"], "v1")  # the codec has no docs
        self.assertEqual(self.plan.types["Chunk"], "v1")
        self.assertEqual(self.plan.codec["Extra"], "v1-unstable")

    def test_shared_types_are_imported_and_re_exported_not_declared(self) -> None:
        self.assertIn('} from "./v1.js";', self.types)
        self.assertRegex(self.types, r"import type \{[^}]*\bChunk\b[^}]*\} from \"\./v1\.js\";")
        self.assertRegex(self.types, r"export type \{[^}]*\bChunk\b[^}]*\};")
        self.assertNotIn("export interface Chunk {", self.types)
        self.assertIn("export interface Thing {", self.types)
        self.assertIn("/** A kind, in other words. */", self.types)
        # The table of every type picks the shared entries from the base's.
        self.assertIn('import type { Types as BaseTypes } from "./v1.js";', self.types)
        self.assertRegex(self.types, r'export interface Types extends Pick<BaseTypes,\n[^>]*"Chunk" \|[^>]*\n> \{\n  Thing: Thing;\n  Kind: Kind;\n  Extra: Extra;\n\}')

    def test_shared_functions_are_imported_from_their_owner(self) -> None:
        self.assertRegex(self.codec, r"import \{[^}]*\bd_Chunk\b[^}]*\} from \"\./v1\.codec\.js\";")
        self.assertNotIn("export function d_Chunk(", self.codec)
        self.assertNotIn("export function d_Kind(", self.codec)
        self.assertIn("export function f_Thing(", self.codec)
        self.assertIn('x0_chunk = d_Chunk(m.value, path + ".chunk", cx);', self.codec)
        # The tables spread the base's, then list what this surface writes itself.
        self.assertIn('import { DECODERS as BASE_DECODERS, ENCODERS as BASE_ENCODERS } from "./v1.codec.js";', self.codec)
        self.assertIn("= {\n  ...BASE_DECODERS,\n  Thing: d_Thing,\n  Extra: d_Extra,\n};", self.codec)
        self.assertIn("= {\n  ...BASE_ENCODERS,\n  Thing: e_Thing,\n  Extra: e_Extra,\n};", self.codec)

    def test_a_spec_that_is_no_pinned_surface_shares_nothing(self) -> None:
        plan = typescript_share.plan_for(make_spec(DECLS))
        self.assertTrue(all(plan.own_type(n) and plan.own_codec(n) for n in (d.name for d in DECLS)))

    def test_a_long_name_list_is_wrapped(self) -> None:
        names = [f"Name{i:02}" for i in range(30)]
        lines = typescript.name_list("import type {", names, '} from "./v1.js";')
        self.assertEqual(lines[0], "import type {")
        self.assertEqual(lines[-1], '} from "./v1.js";')
        self.assertTrue(all(len(line) <= typescript.LINE for line in lines))
        listed = [n.strip() for line in lines[1:-1] for n in line.split(",") if n.strip()]
        self.assertEqual(listed, names)


@unittest.skipUnless(TSC.exists(), "ts/node_modules is not installed (npm ci --prefix ts)")
class CompileTests(unittest.TestCase):
    def test_the_output_compiles_with_the_runtime_under_strict(self) -> None:
        spec = make_spec(RULE_DECLS, RULE_METHODS)
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            self.runtime(root)
            (root / "src/generated/acp/v1.ts").write_text(typescript.emit(spec))
            (root / "src/generated/acp/v1.codec.ts").write_text(typescript_codec.emit(spec))
            (root / "src/generated/acp/v1.roles.ts").write_text(typescript.roles_module(spec))
            (root / "src/acp/v1.ts").write_text(typescript.public_module(spec))
            (root / "src/acp/v1-codec.ts").write_text(typescript.codec_module(spec))
            self.compile(root)

    def test_a_surface_that_shares_with_another_compiles(self) -> None:
        stable, unstable, plans = shared_pair()
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            self.runtime(root)
            for spec, plan in ((stable, plans[("v1", "stable")]), (unstable, plans[("v1", "unstable")])):
                stem = typescript.module_name(spec)
                (root / f"src/generated/acp/{stem}.ts").write_text(typescript.emit(spec, plan))
                (root / f"src/generated/acp/{stem}.codec.ts").write_text(typescript_codec.emit(spec, plan))
                (root / f"src/generated/acp/{stem}.roles.ts").write_text(typescript.roles_module(spec))
                (root / f"src/acp/{stem}.ts").write_text(typescript.public_module(spec))
                (root / f"src/acp/{stem}-codec.ts").write_text(typescript.codec_module(spec))
            self.compile(root)

    def runtime(self, root: Path) -> None:
        """The runtime the generated modules import (not the real surfaces, nor the
        helpers written against the real v1 types), copied under `root`."""
        for part in ("codec", "jsonrpc"):
            shutil.copytree(ROOT / "ts/src" / part, root / "src" / part)
        (root / "src/acp").mkdir()
        for name in RUNTIME_FILES:
            shutil.copy(ROOT / "ts/src/acp" / name, root / "src/acp" / name)
        (root / "src/generated/acp").mkdir(parents=True)
        # The generated error classes the runtime imports (not per surface).
        shutil.copy(ROOT / "ts/src/generated/acp/errors.ts", root / "src/generated/acp/errors.ts")

    def compile(self, root: Path) -> None:
        config = json.loads((ROOT / "ts/tsconfig.json").read_text())
        config["compilerOptions"]["typeRoots"] = [str(ROOT / "ts/node_modules/@types")]
        config["include"] = ["src/**/*.ts"]
        (root / "tsconfig.json").write_text(json.dumps(config))
        proc = subprocess.run([str(TSC), "-p", str(root / "tsconfig.json"), "--noEmit"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

if __name__ == "__main__":
    unittest.main()
