//! Protocol rules as data: what a method needs and does beyond its types.
//!
//! The rows live in the generated method tables ([`MethodInfo`] of each surface's
//! `method::ALL`, and its [`SurfaceRules`]); they come from `rules/acp.toml` through
//! the generator's model, like the types. This module only holds their shapes and
//! the few functions that read them, so both roles, the inspector and the
//! conformance checks follow one table (no I/O here).

use agentproto_jsonrpc::{ErrorCode, ErrorObject};

use crate::{MethodInfo, MethodKind, Side};

/// The method names the runtimes treat specially, and where each side's
/// capabilities sit in its `initialize` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfaceRules {
    /// The member of the agent's `initialize` result holding its capabilities.
    pub agent_capabilities: &'static str,
    /// The member of the client's `initialize` params holding its capabilities.
    pub client_capabilities: &'static str,
    /// The request that must come first, once.
    pub initialize: &'static str,
    /// The notification either side sends to cancel one of its requests.
    pub cancel_request: &'static str,
    /// The notification that ends a session's prompt turn.
    pub session_cancel: &'static str,
    /// The request that is a prompt turn its response ends, one at a time per
    /// session (v1's `session/prompt`); `None` where a prompt answers at once (v2).
    pub prompt_turn: Option<&'static str>,
    /// Whether a request id may be `null` (the schema's `RequestId`: v1 yes, v2 no).
    pub null_request_id: bool,
}

/// Which `initialize` message advertises a gate's capability: the handling side's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitMessage {
    /// The client's `initialize` params (client-handled methods).
    Params,
    /// The agent's `initialize` result (agent-handled methods).
    Result,
}

/// One step of a capability path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// An object member.
    Key(&'static str),
    /// The member named by the value of this top-level member of the request's
    /// params (elicitation: `mode`).
    Param(&'static str),
}

/// Why a request must be refused, as the generated rule code finds it (see
/// [`RequestMethod::refusal`](crate::RequestMethod::refusal)); rendered at the edge:
/// [`Refusal::error`] for an incoming request, [`Refusal::capability`] for an outgoing one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The method needs a capability the handling side did not advertise (-32601).
    CapabilityNotAdvertised {
        /// The capability, as a dotted path into the handling side's `initialize` message.
        capability: &'static str,
        /// What it had to be.
        test: GateTest,
    },
    /// A params member chose a capability the handling side did not advertise
    /// (elicitation's `mode`; -32602 at the member).
    ChoiceNotAdvertised {
        /// The params member.
        member: &'static str,
        /// Its value.
        value: String,
        /// The capability it chose, dotted.
        capability: String,
    },
    /// An item of a params list is of a kind the handling side did not advertise
    /// (-32602 at the item).
    ValueNotAdvertised {
        /// The item's JSON path, e.g. `$.params.prompt[2]`.
        path: String,
        /// The item's tag (`""` when it has none).
        tag: String,
        /// The capability it needs, dotted; `None` for a kind the schema does not list.
        capability: Option<&'static str>,
        /// The kinds the handling side accepts.
        accepted: Vec<&'static str>,
    },
}

impl Refusal {
    /// The capability an outgoing request would need, dotted; `None` for an item of a
    /// kind the schema does not list (validation says what is wrong with it).
    pub fn capability(&self) -> Option<String> {
        match self {
            Refusal::CapabilityNotAdvertised { capability, .. } => Some((*capability).to_owned()),
            Refusal::ChoiceNotAdvertised { capability, .. } => Some(capability.clone()),
            Refusal::ValueNotAdvertised { capability, .. } => capability.map(str::to_owned),
        }
    }

    /// What it lacks, in words.
    pub fn reason(&self) -> String {
        match self {
            Refusal::CapabilityNotAdvertised { capability, test } => {
                format!("needs {}, which this side did not advertise", wanted(capability, *test))
            }
            Refusal::ChoiceNotAdvertised { member, value, capability } => {
                format!("{member} `{value}` needs `{capability}`, which this side did not advertise")
            }
            Refusal::ValueNotAdvertised { tag, capability, .. } => {
                let shown = if tag.is_empty() { "(untagged)" } else { tag };
                match capability {
                    Some(capability) => format!("`{shown}` needs `{capability}`, which this side did not advertise"),
                    None => format!("`{shown}` is not a kind this side can have advertised"),
                }
            }
        }
    }

    /// The error answering an incoming request of `method`.
    pub fn error(&self, method: &str) -> ErrorObject {
        match self {
            Refusal::CapabilityNotAdvertised { capability, .. } => {
                let data = serde_json::json!({ "method": method, "capability": capability });
                let error = ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("method not found: `{method}` {}", self.reason()),
                );
                match serde_json::value::to_raw_value(&data) {
                    Ok(data) => error.with_data(data),
                    Err(_) => error,
                }
            }
            Refusal::ChoiceNotAdvertised { member, value, .. } => {
                let path = format!("$.params.{member}");
                let mut error = ErrorObject::invalid_params(&path, &format!("a {member} this side advertised"), value);
                error.message = format!("invalid params: {}", self.reason());
                error
            }
            Refusal::ValueNotAdvertised { path, tag, accepted, .. } => {
                let expected = format!("one of the advertised kinds ({})", accepted.join(", "));
                let shown = if tag.is_empty() { "(untagged)" } else { tag };
                let mut error = ErrorObject::invalid_params(path, &expected, shown);
                error.message = format!("invalid params: {path}: {}", self.reason());
                error
            }
        }
    }
}

fn wanted(capability: &str, test: GateTest) -> String {
    match test {
        GateTest::Advertised => format!("`{capability}`"),
        GateTest::NonEmpty => format!("a non-empty `{capability}`"),
    }
}

/// The rules of the requests one side handles, as code over the typed request:
/// implemented by each surface's generated request enums (`ClientRequest`, `AgentRequest`)
/// by calling their methods' [`RequestMethod`](crate::RequestMethod) rule items.
pub trait RequestRules<S: crate::Protocol> {
    /// Why the handling side must refuse this request, given both `initialize` messages.
    fn refusal(&self, hs: &crate::Handshake<S>) -> Option<Refusal>;
    /// The client's `initialize` params, when this is `initialize`.
    fn initialize(&self) -> Option<&S::InitializeRequest>;
    /// What a success of this request does to the known sessions.
    fn session_rule(&self) -> Option<SessionRule>;
    /// What the answer that opened the named session must have announced.
    fn session_gate(&self) -> Option<SessionGate>;
}

/// What the rules read from a typed result, for the results one side sends:
/// implemented by each surface's generated result enums (`AgentResponse`,
/// `ClientResponse`) for tools that watch a connection from outside.
pub trait ResponseRules<S: crate::Protocol> {
    /// The agent's `initialize` result, when this is one.
    fn initialize(&self) -> Option<&S::InitializeResponse>;
    /// The session a success created (`session/new`).
    fn created_session(&self) -> Option<&str>;
    /// What the result announces for the session it opens.
    fn announced(&self) -> Vec<&'static str>;
}

/// What the value at a gate's path must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateTest {
    /// `true` or an object (absent, `null` and `false` are not advertised).
    Advertised,
    /// A list with at least one item.
    NonEmpty,
}

/// A request the handling side only serves when it advertised a capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// Where the capability is advertised.
    pub init: InitMessage,
    /// The path to it inside that message.
    pub path: &'static [Segment],
    /// What it must hold.
    pub test: GateTest,
    /// The code a request that arrives anyway is answered with: -32601, or -32602
    /// when a params member chose the capability.
    pub refusal: ErrorCode,
}

/// Items of a list in a request's params that need a capability per variant
/// (prompt content blocks, MCP server kinds). Each item is a tagged union: a tag in
/// `baseline` is always allowed, a tag in `gated` needs the capability at its path of
/// the handling side's `initialize` message, and any other tag — one the schema does
/// not list — cannot have been advertised. `""` is the variant without a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueGate {
    /// The list member of the params.
    pub member: &'static str,
    /// The tag member of each item.
    pub tag: &'static str,
    /// Where the capabilities are advertised.
    pub init: InitMessage,
    /// Tags every peer must accept.
    pub baseline: &'static [&'static str],
    /// Tags that need a capability, with its path.
    pub gated: &'static [(&'static str, &'static [&'static str])],
}

/// How a successful request changes the set of known sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEffect {
    /// The result names a new session (`sessionId`): `session/new`, `session/fork`.
    CreatedByResult,
    /// The params name a session that is now open: `session/load`, `session/resume`.
    OpenedByParams,
    /// The params name a session that is gone: `session/close`, `session/delete`.
    Removed,
}

/// What a request does to sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionRule {
    /// How a success changes the known sessions, if it does.
    pub effect: Option<SessionEffect>,
    /// Whether it may name a session this connection has not seen (one from an
    /// earlier connection); other requests naming an unknown session get -32002.
    pub unseen_ok: bool,
}

impl SessionEffect {
    /// The session concerned: from the result for a created one, else from the params.
    pub fn session(
        self,
        params_session: Option<String>,
        result_session: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        match self {
            SessionEffect::CreatedByResult => result_session(),
            SessionEffect::OpenedByParams | SessionEffect::Removed => params_session,
        }
    }
}

/// A session-scoped request served only for a session whose opening answer
/// announced `member` (v1's `session/set_mode` needs `modes`): the latest answer
/// to one of `opened_by` for that session held an object there (absent and `null`
/// announce nothing). A request naming a session whose answer did not is refused
/// -32602 at `$.params.sessionId`; one naming a session this side saw no opening
/// answer for is left to the other checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionGate {
    /// The member of the opening requests' results.
    pub member: &'static str,
    /// The requests that create or open a session with `member` in their result.
    pub opened_by: &'static [&'static str],
}

impl SessionGate {
    /// The -32602 answer to `method` naming `session`, whose opening answer did not
    /// announce the member.
    pub fn refusal(&self, method: &str, session: &str) -> ErrorObject {
        let member = self.member;
        let expected = format!("a session whose opening answer announced `{member}`");
        let mut error = ErrorObject::invalid_params("$.params.sessionId", &expected, session);
        error.message = format!(
            "invalid params: `{method}` needs `{member}`, which the answer that opened session `{session}` did not announce"
        );
        error
    }
}

/// The row of `methods` for a request handled by `side`.
pub fn request(methods: &'static [MethodInfo], side: Side, name: &str) -> Option<&'static MethodInfo> {
    methods.iter().find(|m| m.name == name && m.side == side && m.kind == MethodKind::Request)
}

/// The session effect of the request `name` handled by `side`, if it has one.
pub fn session_effect(methods: &'static [MethodInfo], side: Side, name: &str) -> Option<SessionEffect> {
    request(methods, side, name).and_then(|m| m.session).and_then(|s| s.effect)
}

/// Whether the request `name` may name a session the connection has not seen.
pub fn may_name_unseen_session(methods: &'static [MethodInfo], side: Side, name: &str) -> bool {
    request(methods, side, name).and_then(|m| m.session).is_some_and(|s| s.unseen_ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::{method, V1};
    use crate::{Handshake, RequestMethod};
    use serde_json::Value;

    fn typed<T: for<'de> serde::Deserialize<'de> + agentproto_codec::Wants>(json: Value) -> T {
        agentproto_codec::decode::<T>(&json.to_string(), "$").expect("a valid message").value
    }

    /// Both `initialize` messages, from the capabilities each side advertises.
    fn handshake(client: Value, agent: Value) -> Handshake<V1> {
        Handshake {
            client: typed(serde_json::json!({"protocolVersion": 1, "clientCapabilities": client})),
            agent: typed(serde_json::json!({"protocolVersion": 1, "agentCapabilities": agent})),
        }
    }

    fn refusal<M: RequestMethod<Surface = V1>>(params: Value, hs: &Handshake<V1>) -> Option<Refusal> {
        M::refusal(&typed::<M::Params>(params), hs)
    }

    fn data(error: &ErrorObject) -> Value {
        serde_json::from_str(error.data.as_ref().expect("error data").get()).expect("JSON data")
    }

    #[test]
    fn booleans_and_object_markers() {
        let agent = serde_json::json!({"loadSession": true, "sessionCapabilities": {"list": {}, "close": null}});
        let hs = handshake(serde_json::json!({}), agent);
        let load = serde_json::json!({"sessionId": "s", "cwd": "/", "mcpServers": []});
        assert_eq!(refusal::<method::SessionLoad>(load, &hs), None);
        assert_eq!(refusal::<method::SessionList>(serde_json::json!({}), &hs), None);
        let close = refusal::<method::SessionClose>(serde_json::json!({"sessionId": "s"}), &hs);
        assert_eq!(
            close.and_then(|r| r.capability()).as_deref(),
            Some("agentCapabilities.sessionCapabilities.close"),
            "null is not advertised"
        );
        let resume = serde_json::json!({"sessionId": "s", "cwd": "/"});
        assert!(refusal::<method::SessionResume>(resume, &hs).is_some(), "absent is not advertised");
        let prompt = serde_json::json!({"sessionId": "s", "prompt": []});
        assert_eq!(refusal::<method::SessionPrompt>(prompt, &hs), None, "baseline methods are not gated");
    }

    #[cfg(feature = "unstable")]
    #[test]
    fn elicitation_is_gated_per_mode() {
        use crate::v1_unstable::{method, V1Unstable};
        let hs: Handshake<V1Unstable> = Handshake {
            client: typed(
                serde_json::json!({"protocolVersion": 1, "clientCapabilities": {"elicitation": {"form": {}}}}),
            ),
            agent: typed(serde_json::json!({"protocolVersion": 1})),
        };
        let ask = |mode: &str| {
            let params = match mode {
                "form" => {
                    serde_json::json!({"sessionId": "s", "message": "?", "mode": "form", "requestedSchema": {"type": "object", "properties": {}}})
                }
                _ => {
                    serde_json::json!({"sessionId": "s", "message": "?", "mode": mode, "url": "https://x", "elicitationId": "e"})
                }
            };
            <method::ElicitationCreate as RequestMethod>::refusal(&typed(params), &hs)
        };
        assert_eq!(ask("form"), None);
        let refused = ask("url").expect("url was not advertised");
        assert_eq!(refused.capability().as_deref(), Some("clientCapabilities.elicitation.url"));
        let error = refused.error("elicitation/create");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(data(&error)["path"], "$.params.mode");
    }

    #[test]
    fn refusal_names_the_capability() {
        let hs = handshake(serde_json::json!({}), serde_json::json!({}));
        let read = serde_json::json!({"sessionId": "s", "path": "/a"});
        let error =
            refusal::<method::FsReadTextFile>(read, &hs).expect("fs was not advertised").error("fs/read_text_file");
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(data(&error)["capability"], "clientCapabilities.fs.readTextFile");
    }

    #[test]
    fn prompt_content_is_gated_per_block_type() {
        let hs = handshake(
            serde_json::json!({}),
            serde_json::json!({"promptCapabilities": {"image": true, "audio": false}}),
        );
        let prompt = |blocks: Value| serde_json::json!({"sessionId": "s", "prompt": blocks});
        let text = serde_json::json!({"type": "text", "text": "hi"});
        let link = serde_json::json!({"type": "resource_link", "uri": "file:///a", "name": "a"});
        let image = serde_json::json!({"type": "image", "data": "", "mimeType": "image/png"});
        let audio = serde_json::json!({"type": "audio", "data": "", "mimeType": "audio/wav"});
        assert_eq!(refusal::<method::SessionPrompt>(prompt(serde_json::json!([text, link, image])), &hs), None);
        let refused = refusal::<method::SessionPrompt>(prompt(serde_json::json!([text, audio])), &hs).unwrap();
        let Refusal::ValueNotAdvertised { path, capability, .. } = &refused else { panic!("{refused:?}") };
        assert_eq!(
            (path.as_str(), *capability),
            ("$.params.prompt[1]", Some("agentCapabilities.promptCapabilities.audio"))
        );
        let unknown = refusal::<method::SessionPrompt>(prompt(serde_json::json!([{"type": "hologram"}])), &hs).unwrap();
        let Refusal::ValueNotAdvertised { tag, capability, accepted, .. } = &unknown else { panic!("{unknown:?}") };
        assert_eq!((tag.as_str(), *capability), ("hologram", None));
        assert_eq!(accepted, &["text", "resource_link", "image"]);
        let error = unknown.error("session/prompt");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        let data = data(&error);
        assert_eq!((data["path"].as_str(), data["found"].as_str()), (Some("$.params.prompt[0]"), Some("hologram")));
    }

    #[test]
    fn mcp_servers_are_gated_per_transport() {
        let hs = handshake(serde_json::json!({}), serde_json::json!({"mcpCapabilities": {"http": true}}));
        let new = |servers: Value| serde_json::json!({"cwd": "/", "mcpServers": servers});
        let stdio = serde_json::json!({"name": "a", "command": "x", "args": [], "env": []});
        let http = serde_json::json!({"type": "http", "name": "b", "url": "http://x", "headers": []});
        let sse = serde_json::json!({"type": "sse", "name": "c", "url": "http://x", "headers": []});
        assert_eq!(refusal::<method::SessionNew>(new(serde_json::json!([stdio, http])), &hs), None);
        let refused = refusal::<method::SessionNew>(new(serde_json::json!([stdio, sse])), &hs).unwrap();
        assert_eq!(refused.capability().as_deref(), Some("agentCapabilities.mcpCapabilities.sse"));
    }

    #[test]
    fn set_mode_needs_modes_from_the_opening_answer() {
        let gate = <method::SessionSetMode as RequestMethod>::SESSION_GATE.unwrap();
        assert_eq!(gate.member, "modes");
        assert_eq!(gate.opened_by, &["session/new", "session/load", "session/resume"], "stable v1 has no fork");
        #[cfg(feature = "unstable")]
        {
            let unstable = <crate::v1_unstable::method::SessionSetMode as RequestMethod>::SESSION_GATE.unwrap();
            assert!(unstable.opened_by.contains(&"session/fork"));
        }
        let modes = serde_json::json!({"sessionId": "s", "modes": {"currentModeId": "a", "availableModes": []}});
        assert_eq!(<method::SessionNew as RequestMethod>::announced(&typed(modes)), ["modes"]);
        let none = serde_json::json!({"sessionId": "s", "modes": null});
        assert!(<method::SessionNew as RequestMethod>::announced(&typed(none)).is_empty());
        assert!(<method::SessionLoad as RequestMethod>::announced(&typed(serde_json::json!({}))).is_empty());
        let error = gate.refusal("session/set_mode", "s1");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("session `s1`"), "{}", error.message);
        let data = data(&error);
        assert_eq!((data["path"].as_str(), data["found"].as_str()), (Some("$.params.sessionId"), Some("s1")));
    }

    #[test]
    fn sessions_come_from_the_table() {
        let all = crate::v1::method::ALL;
        assert_eq!(session_effect(all, Side::Agent, "session/new"), Some(SessionEffect::CreatedByResult));
        assert_eq!(session_effect(all, Side::Agent, "session/load"), Some(SessionEffect::OpenedByParams));
        assert_eq!(session_effect(all, Side::Agent, "session/close"), Some(SessionEffect::Removed));
        assert_eq!(session_effect(all, Side::Agent, "session/prompt"), None);
        assert!(may_name_unseen_session(all, Side::Agent, "session/load"));
        assert!(may_name_unseen_session(all, Side::Agent, "session/delete"));
        assert!(!may_name_unseen_session(all, Side::Agent, "session/prompt"));
        assert!(!may_name_unseen_session(all, Side::Agent, "session/close"));
        let created = serde_json::json!({"sessionId": "s9"});
        assert_eq!(<method::SessionNew as RequestMethod>::created_session(&typed(created)), Some("s9"));
    }
}
