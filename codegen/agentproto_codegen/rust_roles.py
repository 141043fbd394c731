"""Rust for ACP's method table and the role glue, all from ``Spec.methods``:

* ``method``: one marker type per method (wire name, side, params and result types)
  and ``method::ALL``;
* the dispatch enums, one per direction and kind, named after the sender as the
  schema does (``ClientRequest`` is what the client sends);
* the surface marker (``V1``, ...), the handler traits ``Agent`` and ``Client``, their
  ``Dispatch`` impls and the typed calls on ``AgentConnection`` / ``ClientConnection``.

Which handlers are required and how they are named is the emitter's
(``Emitter.handler_name``, ``Emitter.handler_required``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import rust_rules
from .emit import given, rust_str as rstr
from .model import Method, NamedRef, Spec, Struct
from .names import camel

if TYPE_CHECKING:
    from .rust import Emitter

# Each role's connection to the other side and its handler context type.
ROLES = (
    # role, who sends to it, its handler context, the connection its context holds
    ("agent", "Client", "AgentContext", "ClientConnection"),
    ("client", "Agent", "ClientContext", "AgentConnection"),
)

# The signature tail of every `async fn`-like trait method (they must be `Send`).
FUTURE = "impl std::future::Future<Output = {}> + Send"
ERROR = "agentproto_jsonrpc::ErrorObject"


def marker(spec: Spec, m: Method) -> str:
    """The method's marker type; a notification sharing its wire name with a request
    gets a `Notification` suffix."""
    name = camel(m.wire)
    both = any(o.wire == m.wire and o.kind != m.kind for o in spec.methods)
    return name + "Notification" if both and m.kind == "notification" else name


def params(m: Method) -> str:
    return given(m.params, f"{m.wire}: params type")


def result(m: Method) -> str:
    return given(m.result, f"{m.wire}: result type")


def emit_methods(e: Emitter) -> None:
    out = e.out
    ms = e.spec.methods
    if not ms:
        return  # a model of types alone (the emitter's unit tests) has no roles
    out.line("/// One marker type per method, tying its wire name to its params and result types.")
    with out.block("pub mod method {"):
        out.line("use crate::{MethodInfo, MethodKind, NotificationMethod, RequestMethod, Side, Stability};")
        out.line()
        for m in ms:
            name = marker(e.spec, m)
            out.line(f"/// `{m.wire}`: {m.kind} handled by the {m.side} side ({m.stability}).")
            out.line("#[derive(Debug, Clone, Copy)]")
            out.line(f"pub struct {name};")
            trait = "RequestMethod" if m.kind == "request" else "NotificationMethod"
            with out.block(f"impl {trait} for {name} {{"):
                out.line(f"const NAME: &'static str = {rstr(m.wire)};")
                out.line(f"const SIDE: Side = Side::{camel(m.side)};")
                out.line(f"type Params = super::{params(m)};")
                if m.kind == "request":
                    out.line(f"type Result = super::{result(m)};")
                    emit_rule_code(e, m)
                elif session_scoped(e, m.params):
                    with out.block("fn session_id(params: &Self::Params) -> Option<&str> {"):
                        out.line("Some(params.session_id.as_str())")
        out.line()
        out.line("/// Every method of this surface.")
        with out.block("pub const ALL: &[MethodInfo] = &[", "];"):
            for m in ms:
                res = f"Some({rstr(m.result)})" if m.result else "None"
                out.line(
                    f"MethodInfo {{ name: {rstr(m.wire)}, kind: MethodKind::{camel(m.kind)}, side: Side::{camel(m.side)}, "
                    f"params: {rstr(params(m))}, result: {res}, stability: Stability::{camel(m.stability)}, "
                    f"{rust_rules.method_rule_fields(m)} }},"
                )
    out.line()
    for sender, handler in (("Client", "agent"), ("Agent", "client")):
        reqs = [m for m in ms if m.kind == "request" and m.side == handler]
        notes = [m for m in ms if m.kind == "notification" and m.side in (handler, "protocol")]
        what = f"sent by the {sender.lower()}, handled by the {handler}"
        emit_dispatch_enum(e, f"{sender}Request", "request", reqs, f"A request {what}.")
        emit_dispatch_enum(e, f"{sender}Notification", "notification", notes, f"A notification {what}.")
        emit_dispatch_enum(e, f"{camel(handler)}Response", "response", reqs, f"A result sent by the {handler}, for a request it handled.")
    emit_roles(e)


def emit_rule_code(e: Emitter, m: Method) -> None:
    """The method's rules as code over its typed params and result (`RequestMethod`'s
    rule items; the defaults say "no rule")."""
    out = e.out
    out.line(f"type Surface = super::{surface_marker(e.spec)};")
    if m.session is not None:
        out.line(f"const SESSION: Option<crate::rules::SessionRule> = {rust_rules.session_expr(m.session)};")
    if m.session_gate is not None:
        out.line(f"const SESSION_GATE: Option<crate::rules::SessionGate> = {rust_rules.session_gate_expr(m.session_gate)};")
    if m.null_result:
        out.line("const NULL_RESULT: bool = true;")
    if session_scoped(e, m.params):
        with out.block("fn session_id(params: &Self::Params) -> Option<&str> {"):
            out.line("Some(params.session_id.as_str())")
    if m.session is not None and m.session.effect == "created":
        with out.block("fn created_session(result: &Self::Result) -> Option<&str> {"):
            out.line("Some(result.session_id.as_str())")
    if m.gate is not None or m.values:
        with out.block("fn refusal(params: &Self::Params, hs: &crate::Handshake<Self::Surface>) -> Option<crate::rules::Refusal> {"):
            for line in rust_rules.refusal_body(e, m):
                out.line(line)
    if m.values:
        with out.block("fn accepted(hs: &crate::Handshake<Self::Surface>) -> Vec<&'static str> {"):
            for line in rust_rules.accepted_body(e, m):
                out.line(line)
    announced = rust_rules.announced_body(e, m)
    if announced is not None:
        with out.block("fn announced(result: &Self::Result) -> Vec<&'static str> {"):
            for line in announced:
                out.line(line)


def emit_variant_fn(e: Emitter, signature: str, arms: list[tuple[str, str]], default: str) -> None:
    """A function over an enum's variants: one arm per `(variant, expression)` (the
    payload is `p`), `default` for every other variant (or alone, when no arm applies)."""
    out = e.out
    with out.block(f"{signature} {{"):
        if not arms:
            out.line(default)
            return
        with out.block("match self {"):
            for variant, expression in arms:
                out.line(f"Self::{variant}(p) => {expression},")
            out.line(f"_ => {default},")


def emit_request_rules(e: Emitter, name: str, ms: list[Method], variants: list[str]) -> None:
    """`RequestRules` for an incoming request enum: each variant's method marker's rules."""
    sm = surface_marker(e.spec)
    pairs = list(zip(ms, variants))
    rules = "<method::{} as crate::RequestMethod>::{}"
    initialize = e.spec.rules["lifecycle"]["initialize"]
    init_params, _ = rust_rules.init_types(e.spec)
    with e.out.block(f"impl crate::rules::RequestRules<{sm}> for {name} {{"):
        gated = [(v, rules.format(v, "refusal(p, hs)")) for m, v in pairs if m.gate is not None or m.values]
        sig = f"fn refusal(&self, hs: &crate::Handshake<{sm}>) -> Option<crate::rules::Refusal>"
        emit_variant_fn(e, sig, gated, "None" if gated else "{ let _ = hs; None }")
        init = [(v, "Some(p)") for m, v in pairs if m.wire == initialize]
        emit_variant_fn(e, f"fn initialize(&self) -> Option<&{init_params}>", init, "None")
        ruled = [(v, rules.format(v, "SESSION")) for m, v in pairs if m.session is not None]
        emit_variant_fn(e, "fn session_rule(&self) -> Option<crate::rules::SessionRule>", ruled, "None")
        gates = [(v, rules.format(v, "SESSION_GATE")) for m, v in pairs if m.session_gate is not None]
        emit_variant_fn(e, "fn session_gate(&self) -> Option<crate::rules::SessionGate>", gates, "None")
    e.out.line()


def emit_response_rules(e: Emitter, name: str, ms: list[Method], variants: list[str]) -> None:
    """`ResponseRules` for a result enum: what each variant's method's rules read from
    its typed result (tools that watch a connection from outside use it)."""
    sm = surface_marker(e.spec)
    pairs = list(zip(ms, variants))
    rules = "<method::{} as crate::RequestMethod>::{}"
    initialize = e.spec.rules["lifecycle"]["initialize"]
    _, init_result = rust_rules.init_types(e.spec)
    with e.out.block(f"impl crate::rules::ResponseRules<{sm}> for {name} {{"):
        init = [(v, "Some(p)") for m, v in pairs if m.wire == initialize]
        emit_variant_fn(e, f"fn initialize(&self) -> Option<&{init_result}>", init, "None")
        created = [(v, rules.format(v, "created_session(p)")) for m, v in pairs if m.session is not None and m.session.effect == "created"]
        emit_variant_fn(e, "fn created_session(&self) -> Option<&str>", created, "None")
        announcing = [(v, rules.format(v, "announced(p)")) for m, v in pairs if rust_rules.announced_body(e, m) is not None]
        emit_variant_fn(e, "fn announced(&self) -> Vec<&'static str>", announcing, "Vec::new()")
    e.out.line()


def emit_dispatch_enum(e: Emitter, name: str, kind: str, ms: list[Method], doc: str) -> None:
    """A closed enum of the payloads of `ms` (params, or results for `response`) plus
    `Ext` for extension methods, decoded by method name."""
    out = e.out
    root, what = ("$.result", "result") if kind == "response" else ("$.params", "params")
    types = [result(m) if kind == "response" else params(m) for m in ms]
    variants = [marker(e.spec, m) for m in ms]
    out.line(f"/// {doc}")
    out.line("#[derive(Debug, Clone, PartialEq)]")
    with out.block(f"pub enum {name} {{"):
        for m, v, t in zip(ms, variants, types):
            out.line(f"/// `{m.wire}`")
            out.line(f"{v}({t}),")
        out.line("/// An extension method (its name starts with `_`), passed through raw.")
        out.line("Ext(crate::ExtMessage),")
    out.line()
    with out.block(f"impl {name} {{"):
        out.line("/// The wire method name.")
        with out.block("pub fn method(&self) -> &str {"), out.block("match self {"):
            for m, v in zip(ms, variants):
                out.line(f"Self::{v}(_) => {rstr(m.wire)},")
            out.line("Self::Ext(e) => &e.method,")
        out.line()
        out.line("/// The name of the schema type the payload decodes as (`None` for extensions).")
        with out.block("pub fn type_name(&self) -> Option<&'static str> {"), out.block("match self {"):
            for v, t in zip(variants, types):
                out.line(f"Self::{v}(_) => Some({rstr(t)}),")
            out.line("Self::Ext(_) => None,")
        out.line()
        if kind == "response":
            # A `null` result reads as `{}` only where the rule row says so (`null_result`:
            # the result has no required member); elsewhere it is the type error it is.
            out.line("/// Decodes the result of `method` (`null` as `{}` where the method's rule row allows it).")
        else:
            out.line(f"/// Decodes the {what} of `method` (absent or `null` {what} decode as `{{}}`).")
        with out.block(f"pub fn decode(method: &str, {what}: Option<&RawValue>) -> Result<Decoded<Self>, crate::DispatchError> {{"):
            if kind == "response":
                out.line(f'let text = {what}.map_or("null", |r| r.get());')
                out.line('let empty = if text == "null" { "{}" } else { text };')
            else:
                out.line(f'let text = match {what} {{ Some(r) if r.get() != "null" => r.get(), _ => "{{}}" }};')
            with out.block("match method {"):
                for m, v, t in zip(ms, variants, types):
                    source = "empty" if kind == "response" and m.null_result else "text"
                    out.line(f"{rstr(m.wire)} => crate::decode_as::<{t}, Self>({source}, {rstr(root)}, Self::{v}),")
                out.line(f"m if m.starts_with('_') => Ok(Decoded {{ value: Self::Ext(crate::ExtMessage::new(m, {what})), warnings: Vec::new() }}),")
                out.line("_ => Err(crate::DispatchError::MethodNotFound),")
        if kind != "response":
            # The one-pass receive path (`receive::classify`): params decoded while the
            # envelope is read, falling back to `decode` above for anything else.
            out.line()
            out.line(f"/// Whether `method` is one of this enum's methods (extension methods are not).")
            with out.block("pub fn knows(method: &str) -> bool {"):
                names = " | ".join(rstr(m.wire) for m in ms) if ms else None
                out.line(f"matches!(method, {names})" if names else "let _ = method; false")
            out.line()
            out.line(f"/// Decodes the {what} of `method` (one that [`Self::knows`]) from a deserializer positioned")
            out.line(f"/// at them, as [`Self::decode`] decodes their text; anything else is an error.")
            with out.block(f"pub fn decode_in<'de, D: Deserializer<'de>>(method: &str, {what}: D) -> Result<Decoded<Self>, D::Error> {{"):
                with out.block("match method {"):
                    for m, v, t in zip(ms, variants, types):
                        out.line(f"{rstr(m.wire)} => crate::decode_in_as::<{t}, Self, D>({what}, {rstr(root)}, Self::{v}),")
                    out.line(f"_ => Err(D::Error::custom(format_args!(\"no {what} type for method {{method:?}}\"))),")
        out.line()
        out.line(f"/// Encodes the {what} alone (not the envelope) into `buf`.")
        with out.block("pub fn encode_payload(&self, buf: &mut Vec<u8>) -> Result<(), serde_json::Error> {"), out.block("match self {"):
            for v in variants:
                out.line(f"Self::{v}(v) => serde_json::to_writer(&mut *buf, v),")
            out.line("Self::Ext(e) => { buf.extend_from_slice(e.payload_text().as_bytes()); Ok(()) }")
    out.line()
    with out.block(f"impl crate::Payload for {name} {{"):
        out.line("fn decode(method: &str, payload: Option<&RawValue>) -> Result<Decoded<Self>, crate::DispatchError> { Self::decode(method, payload) }")
        out.line("fn method(&self) -> &str { Self::method(self) }")
        out.line("fn type_name(&self) -> Option<&'static str> { Self::type_name(self) }")
        out.line("fn encode_payload(&self, buf: &mut Vec<u8>) -> Result<(), serde_json::Error> { Self::encode_payload(self, buf) }")
        if kind != "response":
            out.line("fn knows(method: &str) -> bool { Self::knows(method) }")
            out.line("fn decode_in<'de, D: Deserializer<'de>>(method: &str, payload: D) -> Result<Decoded<Self>, D::Error> { Self::decode_in(method, payload) }")

        scoped = [v for m, v in zip(ms, variants) if kind != "response" and session_scoped(e, m.params)]
        if scoped:
            with out.block("fn session_id(&self) -> Option<&str> {"), out.block("match self {"):
                for v in scoped:
                    out.line(f"Self::{v}(p) => Some(p.session_id.as_str()),")
                out.line("_ => None,")
    out.line()
    if kind == "request":
        emit_request_rules(e, name, ms, variants)
    elif kind == "response":
        emit_response_rules(e, name, ms, variants)


def session_scoped(e: Emitter, type_name: str | None) -> bool:
    """Whether a params type names its session in a required `sessionId`."""
    d = e.decls.get(type_name) if type_name else None
    return isinstance(d, Struct) and any(
        f.wire == "sessionId" and f.required and not f.nullable and isinstance(f.type, NamedRef) and f.type.name == "SessionId"
        for f in d.fields
    )


def surface_marker(spec: Spec) -> str:
    return camel(spec.version) + ("Unstable" if spec.surface == "unstable" else "")


def emit_roles(e: Emitter) -> None:
    out = e.out
    ms = [m for m in e.spec.methods if m.side in ("agent", "client")]
    sm = surface_marker(e.spec)
    unstable = "true" if e.spec.surface == "unstable" else "false"
    io = "input: impl tokio::io::AsyncRead + Send + Unpin + 'static, output: impl tokio::io::AsyncWrite + Send + Unpin + 'static"
    out.line("/// This surface as a type: selects the types and handler traits of a connection.")
    out.line("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]")
    out.line(f"pub struct {sm};")
    out.line()
    with out.block(f"impl crate::Protocol for {sm} {{"):
        out.line("const VERSION: u16 = PROTOCOL_VERSION;")
        out.line(f"const UNSTABLE: bool = {unstable};")
        for t in ("ClientRequest", "ClientNotification", "AgentRequest", "AgentNotification"):
            out.line(f"type {t} = {t};")
        init_params, init_result = rust_rules.init_types(e.spec)
        out.line(f"type InitializeRequest = {init_params};")
        out.line(f"type InitializeResponse = {init_result};")
        out.line("const METHODS: &'static [crate::MethodInfo] = method::ALL;")
        out.line("const RULES: &'static crate::rules::SurfaceRules = &RULES;")
        with out.block(f"fn protocol_version(result: &mut {init_result}) -> &mut u16 {{"):
            out.line("&mut result.protocol_version")
    out.line()
    out.line("pub use crate::{AcpError, AcpEvent, AcpOptions, AgentConnection, AgentProcess, ClientConnection, Context, ErrorCode, ErrorObject, ExtMessage};")
    out.line()
    out.line("/// Serves `agent` on this process's stdin and stdout until stdin closes.")
    with out.block("pub async fn serve_agent_stdio<A: Agent>(agent: A, options: AcpOptions) -> Result<(), agentproto_jsonrpc::ConnectionError> {"):
        out.line(f"crate::agent::serve_stdio::<{sm}, A>(agent, options).await")
    out.line("/// The agent side of a connection over any byte streams; run the returned connection.")
    with out.block(f"pub fn connect_agent<A: Agent>(agent: A, {io}, options: AcpOptions) -> (agentproto_jsonrpc::Connection, ClientConnection<{sm}>) {{"):
        out.line(f"crate::agent::connect::<{sm}, A>(agent, input, output, options)")
    out.line("/// The client side of a connection over any byte streams; run the returned connection.")
    with out.block(f"pub fn connect_client<C: Client>(client: C, {io}, options: AcpOptions) -> (agentproto_jsonrpc::Connection, AgentConnection<{sm}>) {{"):
        out.line(f"crate::client::connect::<{sm}, C>(client, input, output, options)")
    out.line("/// Spawns an agent command and connects `client` to it (see [`crate::client::spawn`]).")
    with out.block(f"pub fn spawn_agent<C: Client>(command: tokio::process::Command, client: C, options: AcpOptions) -> std::io::Result<(AgentConnection<{sm}>, AgentProcess)> {{"):
        out.line(f"crate::client::spawn::<{sm}, C>(command, client, options)")
    out.line()
    out.line("/// What an [`Agent`] handler receives besides the params: the connection to the client, the request's cancellation.")
    out.line(f"pub type AgentContext = crate::Context<crate::ClientConnection<{sm}>>;")
    out.line("/// What a [`Client`] handler receives besides the params: the connection to the agent, the request's cancellation.")
    out.line(f"pub type ClientContext = crate::Context<crate::AgentConnection<{sm}>>;")
    out.line()
    for role, sender, cx, peer_conn in ROLES:
        mine = [m for m in ms if m.side == role]
        handlers = [e.handler_name(m) for m in mine]
        if len(set(handlers)) != len(handlers):
            raise ValueError(f"handler names collide: {handlers}")
        emit_handler_trait(e, role, sender, cx, list(zip(mine, handlers)))
        emit_dispatch_impl(e, role, sender, cx, peer_conn, sm, list(zip(mine, handlers)))
    # Typed calls: what each side sends, on the connection to the other side.
    for conn, handler in (("AgentConnection", "agent"), ("ClientConnection", "client")):
        with out.block(f"impl crate::{conn}<{sm}> {{"):
            for m in ms:
                if m.side != handler:
                    continue
                name = e.handler_name(m)
                if m.kind == "request":
                    out.line(f"/// Sends `{m.wire}` and waits for its validated result.")
                    with out.block(f"pub async fn {name}(&self, params: {params(m)}) -> Result<{result(m)}, crate::AcpError> {{"):
                        out.line(f"self.request::<method::{marker(e.spec, m)}>(params).await")
                else:
                    out.line(f"/// Sends the `{m.wire}` notification.")
                    with out.block(f"pub async fn {name}(&self, params: {params(m)}) -> Result<(), crate::AcpError> {{"):
                        out.line(f"self.notify::<method::{marker(e.spec, m)}>(params).await")
        out.line()


def emit_handler_trait(e: Emitter, role: str, sender: str, cx: str, handlers: list[tuple[Method, str]]) -> None:
    """`trait Agent` / `trait Client`: one method per method the other side sends; the
    optional ones default to `-32601` (requests) or doing nothing (notifications)."""
    out = e.out
    out.line(f"/// The {role} role: one handler per method the {sender.lower()} sends. Implement the required")
    out.line("/// ones; every other request is answered `-32601` and every other notification ignored")
    out.line("/// until you implement it. `$/cancel_request` is handled by the connection (see")
    out.line("/// [`Context::cancellation_token`](crate::Context::cancellation_token)).")
    with out.block(f"pub trait {camel(role)}: Send + Sync + 'static {{"):
        for m, name in handlers:
            out.line(f"/// Handles `{m.wire}` ({m.stability}).")
            if m.kind == "request":
                sig = f"fn {name}(&self, cx: {cx}, params: {params(m)}) -> {FUTURE.format(f'Result<{result(m)}, {ERROR}>')}"
                default = f"{{ async {{ Err({ERROR}::method_not_found({rstr(m.wire)})) }} }}"
            else:
                sig = f"fn {name}(&self, cx: {cx}, params: {params(m)}) -> {FUTURE.format('()')}"
                default = "{ async {} }"
            out.line(f"{sig};" if e.handler_required(m) else f"{sig} {default}")
        out.line("/// Handles an extension request (a method starting with `_`, passed with its full name).")
        with out.block(f"fn ext_method(&self, cx: {cx}, request: crate::ExtMessage) -> {FUTURE.format(f'Result<RawJson, {ERROR}>')} {{"):
            out.line(f"async move {{ Err({ERROR}::method_not_found(&request.method)) }}")
        out.line("/// Handles an extension notification; ignored unless implemented.")
        out.line(f"fn ext_notification(&self, cx: {cx}, notification: crate::ExtMessage) -> {FUTURE.format('()')} {{ async {{}} }}")
    out.line()


def emit_dispatch_impl(e: Emitter, role: str, sender: str, cx: str, peer_conn: str, sm: str, handlers: list[tuple[Method, str]]) -> None:
    """`Dispatch` for every implementation of the role's trait: decoded message in,
    handler called, its answer encoded."""
    out = e.out
    trait = camel(role)
    with out.block(f"impl<H: {trait}> crate::Dispatch<{sender}Request, {sender}Notification, crate::{peer_conn}<{sm}>> for H {{"):
        sig = f"fn dispatch_request(self: std::sync::Arc<Self>, cx: {cx}, request: {sender}Request) -> futures::future::BoxFuture<'static, Result<crate::Answer, {ERROR}>> {{"
        with out.block(sig), out.block("Box::pin(async move {", "})"):
            out.line("let strict = cx.strict();")
            with out.block("match request {"):
                for m, name in handlers:
                    if m.kind == "request":
                        out.line(f"{sender}Request::{marker(e.spec, m)}(p) => crate::answer::<method::{marker(e.spec, m)}>(self.{name}(cx, p).await?, strict),")
                out.line(f"{sender}Request::Ext(m) => Ok(crate::Answer::raw(self.ext_method(cx, m).await?.into_raw())),")
        sig = f"fn dispatch_notification(self: std::sync::Arc<Self>, cx: {cx}, notification: {sender}Notification) -> futures::future::BoxFuture<'static, ()> {{"
        with out.block(sig), out.block("Box::pin(async move {", "})"), out.block("match notification {"):
            for m, name in handlers:
                if m.kind == "notification":
                    out.line(f"{sender}Notification::{marker(e.spec, m)}(p) => self.{name}(cx, p).await,")
            out.line(f"{sender}Notification::Ext(m) => self.ext_notification(cx, m).await,")
            out.line("#[allow(unreachable_patterns)]")
            out.line("_ => {}")
    out.line()
