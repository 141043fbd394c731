"""Emit the TypeScript method table and rule rows of a surface (``METHODS``, ``RULES``,
``PROTOCOL_VERSION``), in the shapes of ``ts/src/acp/rules.ts``, and the roles built
from the same table (``emit_roles_module``: the typed handles ``AgentConnection`` /
``ClientConnection``, the ``Agent`` / ``Client`` handler interfaces, the contexts and
``SESSION_SCOPED``; ``public_roles``: the entry points of the surface's public module).
Nothing in the roles is written per method: the runtime (``ts/src/acp/``) dispatches by
each row's handler name.

Every row carries the method's rules from ``rules/acp.toml`` as the model holds them:
the capability gate, the value gates, the session rule and the session gate, whether
it is a baseline handler and whether a ``null`` result reads as the empty result
object.  Handler names are the model's snake_case words spelled lowerCamelCase
(``new_session`` -> ``newSession``).
"""

from __future__ import annotations

from .emit import Writer, given, ts_str
from .model import Alias, Method, NamedRef, PrimRef, Spec, Struct
from .names import lower_camel


def strings(items: list[str]) -> str:
    return "[" + ", ".join(ts_str(s) for s in items) + "]"


def handler_name(m: Method) -> str:
    return lower_camel(given(m.handler or None, f"{m.wire}: handler name (rules not applied?)"))


def method_row(m: Method) -> list[str]:
    """The members of one `MethodInfo` literal, one per line."""
    rows = [
        f"name: {ts_str(m.wire)},",
        f"kind: {ts_str(m.kind)},",
        f"side: {ts_str(m.side)},",
        f"params: {ts_str(given(m.params, f'{m.wire}: params'))},",
        f"result: {'null' if m.result is None else ts_str(m.result)},",
        f"stability: {ts_str(m.stability)},",
        f"handler: {ts_str(handler_name(m))},",
        f"required: {'true' if m.required else 'false'},",
        f"nullResult: {'true' if m.null_result else 'false'},",
    ]
    if m.gate is None:
        rows.append("gate: null,")
    else:
        g = m.gate
        rows.append(
            f"gate: {{ where: {ts_str(g.where)}, path: {strings(g.path)}, test: {ts_str(g.test)}, refusal: {g.refusal} }},"
        )
    if not m.values:
        rows.append("values: [],")
    else:
        rows.append("values: [")
        for v in m.values:
            gated = ", ".join(f"{ts_str(t)}: {strings(p)}" for t, p in v.gated.items())
            rows.append(
                f"  {{ member: {ts_str(v.member)}, union: {ts_str(v.union)}, tag: {ts_str(v.tag)}, "
                f"where: {ts_str(v.where)}, baseline: {strings(v.baseline)}, gated: {{ {gated} }} }},"
            )
        rows.append("],")
    if m.session is None:
        rows.append("session: null,")
    else:
        effect = "null" if m.session.effect is None else ts_str(m.session.effect)
        rows.append(f"session: {{ effect: {effect}, unseenOk: {'true' if m.session.unseen_ok else 'false'} }},")
    if m.session_gate is None:
        rows.append("sessionGate: null,")
    else:
        g = m.session_gate
        rows.append(f"sessionGate: {{ member: {ts_str(g.member)}, openedBy: {strings(g.opened_by)} }},")
    return rows


def emit_methods(spec: Spec, out: Writer) -> None:
    out.line()
    out.line("/** Every method of this surface, with its rules. */")
    with out.block("export const METHODS: readonly MethodInfo[] = [", "];"):
        for m in spec.methods:
            with out.block("{", "},"):
                out.lines(method_row(m))


def emit_rules(spec: Spec, out: Writer) -> None:
    caps = spec.rules["capabilities"]
    life = spec.rules["lifecycle"]
    prompt = life.get("prompt_turn")
    out.line()
    out.line("/** The wire version of this surface (`protocolVersion`). */")
    out.line(f"export const PROTOCOL_VERSION = {int(spec.wire_version)};")
    out.line()
    out.line("/** The lifecycle method names and where each side's `initialize` message holds its capabilities. */")
    with out.block("export const RULES: SurfaceRules = {", "};"):
        out.line(f"agentCapabilities: {ts_str(caps['agent'])},")
        out.line(f"clientCapabilities: {ts_str(caps['client'])},")
        out.line(f"initialize: {ts_str(life['initialize'])},")
        out.line(f"cancelRequest: {ts_str(life['cancel_request'])},")
        out.line(f"sessionCancel: {ts_str(life['session_cancel'])},")
        out.line(f"promptTurn: {'null' if prompt is None else ts_str(prompt)},")
        out.line(f"nullRequestId: {'true' if spec.rules['envelope']['null_request_id'] else 'false'},")


# ---------------------------------------------------------------------------------------
# The roles module (`ts/src/generated/acp/<surface>.roles.ts`) and the role entry points
# of the public module, both from `Spec.methods`.

# The names the runtime's base classes use: a generated call may not take one.
RESERVED = frozenset(
    {
        "agentCapabilities",
        "clientCapabilities",
        "constructor",
        "endpoint",
        "extMethod",
        "extNotification",
        "flush",
        "isClosed",
        "notifyTyped",
        "protocolVersion",
        "requestTyped",
        "withCancellation",
        "withTurn",
    }
)

ROLE_DOCS = {
    "agent": ("AgentConnection", "AgentConnectionBase", "client", "The client's handle to its agent"),
    "client": ("ClientConnection", "ClientConnectionBase", "agent", "The agent's handle to its client"),
}


def role_methods(spec: Spec) -> list[Method]:
    ms = [m for m in spec.methods if m.side in ("agent", "client")]
    for role in ("agent", "client"):
        names = [handler_name(m) for m in ms if m.side == role]
        if len(set(names)) != len(names):
            raise ValueError(f"{role} handler names collide: {names}")
        for name in names:
            if name in RESERVED or not name.isidentifier():
                raise ValueError(f"{role} handler name {name!r} is reserved or not an identifier")
    return ms


def session_scoped(spec: Spec) -> list[str]:
    """The params types that name their session in a required `sessionId` string (the
    messages the session rules apply to), as the Python runtime decides it."""
    def is_string(t: object) -> bool:
        seen = 0
        while isinstance(t, NamedRef) and isinstance(spec.decls.get(t.name), Alias) and seen < 32:
            alias = spec.decls[t.name]
            assert isinstance(alias, Alias)
            t = alias.target
            seen += 1
        return isinstance(t, PrimRef) and t.prim == "string"

    out: list[str] = []
    for m in role_methods(spec):
        d = spec.decls.get(given(m.params, f"{m.wire}: params"))
        if not isinstance(d, Struct):
            continue
        scoped = any(f.wire == "sessionId" and f.required and not f.nullable and is_string(f.type) for f in d.fields)
        if scoped and d.name not in out:
            out.append(d.name)
    return sorted(out)


def is_update_shortcut(spec: Spec, m: Method) -> bool:
    """Whether `m` is the notification that `update(sessionId, update)` sends: the agent's
    `session/update`, whose params require exactly `sessionId` and `update`."""
    if m.kind != "notification" or m.wire != "session/update" or m.side != "client":
        return False
    d = spec.decls.get(given(m.params, f"{m.wire}: params"))
    if not isinstance(d, Struct):
        return False
    return sorted(f.wire for f in d.fields if f.required) == ["sessionId", "update"]


def emit_roles_module(spec: Spec, header: list[str], stem: str) -> str:
    """The typed peer handles, contexts and handler interfaces of both roles."""
    out = Writer("  ")
    ms = role_methods(spec)
    out.lines(header)
    out.line()
    out.line('import { ClientConnectionBase } from "../../acp/agent.js";')
    out.line('import { AgentConnectionBase } from "../../acp/client.js";')
    out.line('import type { Context } from "../../acp/context.js";')
    out.line('import type { ExtMessage } from "../../acp/receive.js";')
    out.line('import type { MethodChecks, Refusal } from "../../acp/refusal.js";')
    out.line('import { UnknownVariant, type RawJson } from "../../codec/values.js";')
    out.line(f'import type * as T from "./{stem}.js";')
    for role in ("agent", "client"):
        cls, base, sender, doc = ROLE_DOCS[role]
        out.line()
        out.line(f"/** {doc}: one typed call per method the {role} handles. */")
        with out.block(f"export class {cls} extends {base} {{"):
            first = True
            for m in ms:
                if m.side != role:
                    continue
                if not first:
                    out.line()
                first = False
                name = handler_name(m)
                params = given(m.params, m.wire)
                if m.kind == "request":
                    result = given(m.result, f"{m.wire}: result")
                    out.line(f"/** Sends `{m.wire}` ({m.stability}) and resolves with its validated result. */")
                    with out.block(f"{name}(params: T.{params}): Promise<T.{result}> {{"):
                        out.line(f"return this.requestTyped({ts_str(m.wire)}, params) as Promise<T.{result}>;")
                else:
                    out.line(f"/** Sends the `{m.wire}` notification ({m.stability}). */")
                    with out.block(f"{name}(params: T.{params}): Promise<void> {{"):
                        out.line(f"return this.notifyTyped({ts_str(m.wire)}, params);")
                    if is_update_shortcut(spec, m):
                        out.line()
                        out.line(f"/** `{m.wire}` without building its params: `update(sessionId, agentMessageChunk(\"hi\"))`. */")
                        sig = f'update(sessionId: T.{params}["sessionId"], update: T.{params}["update"]): Promise<void> {{'
                        with out.block(sig):
                            out.line(f"return this.notifyTyped({ts_str(m.wire)}, {{ sessionId, update }});")
            emit_capabilities(spec, out, role)
    out.line()
    out.line("/** What an `Agent` handler receives besides its params: the connection to the client, the cancellation. */")
    out.line("export type AgentContext = Context<ClientConnection>;")
    out.line("/** What a `Client` handler receives besides its params: the connection to the agent, the cancellation. */")
    out.line("export type ClientContext = Context<AgentConnection>;")
    for role, cx in (("agent", "AgentContext"), ("client", "ClientContext")):
        sender = "client" if role == "agent" else "agent"
        out.line()
        out.line("/**")
        out.line(f" * The {role} role: one handler per method the {sender} sends. The baseline handlers")
        out.line(" * are required; a request without a handler is answered -32601, a notification")
        out.line(" * without one is ignored. `$/cancel_request` is the connection's (`cx.signal`).")
        out.line(" */")
        with out.block(f"export interface {role.capitalize()} {{"):
            for m in ms:
                if m.side != role:
                    continue
                name = handler_name(m)
                params = given(m.params, m.wire)
                returns = "void" if m.kind == "notification" else f"T.{given(m.result, m.wire)}"
                what = "every " + role + " implements it" if m.required else "optional"
                out.line(f"/** Handles `{m.wire}` ({m.stability}; {what}). */")
                optional = "" if m.required else "?"
                out.line(f"{name}{optional}(cx: {cx}, params: T.{params}): Promise<{returns}> | {returns};")
            out.line("/** Handles an extension request (a method starting with `_`); answers -32601 when absent. */")
            out.line(f"extMethod?(cx: {cx}, request: ExtMessage): Promise<RawJson | string | null> | RawJson | string | null;")
            out.line("/** Handles an extension notification; ignored when absent. */")
            out.line(f"extNotification?(cx: {cx}, notification: ExtMessage): Promise<void> | void;")
    out.line()
    out.line("/** The params types that name their session in a required `sessionId` (the session rules apply to them). */")
    scoped = session_scoped(spec)
    out.line(f"export const SESSION_SCOPED: ReadonlySet<string> = new Set({strings(scoped)});")
    from .typescript_checks import emit_checks  # it builds on this module's helpers

    emit_checks(spec, out)
    return out.text()


def emit_capabilities(spec: Spec, out: Writer, peer: str) -> None:
    """The typed getter of the peer's advertised capabilities on a handle (the handle of
    the agent reads the agent's `initialize` answer, the client's handle its params)."""
    init = next((m for m in spec.methods if m.wire == spec.rules["lifecycle"]["initialize"] and m.kind == "request"), None)
    if init is None:
        return
    message = given(init.result if peer == "agent" else init.params, "initialize")
    key = spec.rules["capabilities"][peer]
    getter = f"{peer}Capabilities"
    what = "answer" if peer == "agent" else "params"
    out.line()
    out.line(f"/** The {peer}'s capabilities as its `initialize` {what} advertised them, decoded (`undefined` before `initialize`). */")
    with out.block(f"override get {getter}(): T.{message}[{ts_str(key)}] | undefined {{"):
        access = f"?.{key}" if key.isidentifier() else f"?.[{ts_str(key)}]"
        out.line(f"return (this.endpoint.negotiated?.{peer} as T.{message} | undefined){access};")


# The surfaces whose public module also exports hand-written conveniences typed
# against that surface (`ts/src/acp/<module>.ts`: builders, the client's sessions), and
# the types those modules use: a model without them (a test's) gets none.
CONVENIENCES: dict[str, tuple[list[str], list[str]]] = {
    "v1": (
        ["v1-builders", "v1-session"],
        ["ContentBlock", "ContentChunk", "TextContent", "ResourceLink", "SessionUpdate", "ToolCall", "ToolCallUpdate", "ToolCallContent"]
        + ["Plan", "PlanEntry", "NewSessionRequest", "NewSessionResponse", "PromptRequest", "PromptResponse", "SessionNotification"],
    ),
}


def convenience_modules(stem: str, spec: Spec | None) -> list[str]:
    """The convenience modules the public module of surface `stem` re-exports."""
    modules, needs = CONVENIENCES.get(stem, ([], []))
    if spec is None or any(name not in spec.decls for name in needs):
        return []
    return modules


def convenience_doc(stem: str, spec: Spec | None) -> str:
    """What the public module's doc says of its conveniences (a phrase, or nothing)."""
    if not convenience_modules(stem, spec):
        return ""
    return ";\n * the builders (`text`, `agentMessageChunk`, `toolCall`, `plan`, ...) and the client's `Sessions`"


def public_roles(stem: str, spec: Spec | None = None) -> str:
    """The role entry points of a surface's public module, bound to its `SURFACE`."""
    builders = "".join(f'export * from "./{module}.js";\n' for module in convenience_modules(stem, spec))
    return f"""
export * from "../generated/acp/{stem}.roles.js";
{builders}export type {{ Pair, PairOptions }} from "./pair.js";

const ROLES: RoleSurface = {{ surface: SURFACE, checks: CHECKS }};

/** The agent side of a connection over any byte streams; run the returned connection. */
export function connectAgent(agent: Agent, input: Input, output: Output, options?: AcpOptions): {{ connection: Connection; client: ClientConnection }} {{
  return roles.connectAgent(ROLES, agent, input, output, options, ClientConnection);
}}

/** Serves `agent` on this process's stdin and stdout until stdin closes. */
export function serveAgentStdio(agent: Agent, options?: AcpOptions): Promise<void> {{
  return roles.serveAgentStdio(ROLES, agent, options, ClientConnection);
}}

/** The client side of a connection over any byte streams; run the returned connection. */
export function connectClient(client: Client, input: Input, output: Output, options?: AcpOptions): {{ connection: Connection; agent: AgentConnection }} {{
  return roles.connectClient(ROLES, client, input, output, options, AgentConnection);
}}

/** An agent and a client connected in this process (in-memory pipes, both running):
 * test one against the other without processes; `close()` ends both. */
export function connectPair(agent: Agent, client: Client, options: PairOptions = {{}}): Pair<AgentConnection, ClientConnection> {{
  return pair.connectPair(ROLES, agent, client, options, AgentConnection, ClientConnection);
}}

/** Starts an agent command in a process group of its own and connects `client` to it;
 * `close()` the returned process when done (`agentproto/acp` process docs). */
export function spawnAgent(command: readonly string[], client: Client, options?: SpawnOptions): Promise<{{ agent: AgentConnection; process: AgentProcess }}> {{
  return spawn(ROLES, command, client, options, AgentConnection);
}}
"""


PUBLIC_ROLE_IMPORTS = [
    'import * as roles from "./roles.js";',
    'import type { RoleSurface } from "./endpoint.js";',
    'import type { AcpOptions } from "./options.js";',
    'import * as pair from "./pair.js";',
    'import type { Pair, PairOptions } from "./pair.js";',
    'import { spawn, type AgentProcess, type SpawnOptions } from "./process.js";',
    'import type { Connection } from "../jsonrpc/connection.js";',
    'import type { Input, Output } from "../jsonrpc/transport.js";',
]
