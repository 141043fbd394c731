//! Protocol rules as data: what a method needs and does beyond its types.
//!
//! The rows live in the generated method tables ([`MethodInfo`] of each surface's
//! `method::ALL`, and its [`SurfaceRules`]); they come from `rules/acp.toml` through
//! the generator's model, like the types. This module only holds their shapes and
//! the few functions that read them, so both roles, the inspector and the
//! conformance checks follow one table (no I/O here).

use agentproto_jsonrpc::{ErrorCode, ErrorObject};
use serde_json::value::RawValue;
use serde_json::Value;

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

/// An item a [`ValueGate`] refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The item's JSON path, e.g. `$.params.prompt[2]`.
    pub path: String,
    /// The item's tag (`""` when it has none).
    pub tag: String,
    /// The capability it needs, as a dotted path; `None` for a tag the schema does not list.
    pub capability: Option<String>,
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

/// What the answer to `method` (a request handled by `side` that creates or opens a
/// session) announces for that session: the members the session gates of `methods`
/// read from it that hold an object in `result`.
pub fn announced(methods: &'static [MethodInfo], side: Side, method: &str, result: &str) -> Vec<&'static str> {
    let mut members: Vec<&'static str> = Vec::new();
    let gates =
        methods.iter().filter(|m| m.side == side && m.kind == MethodKind::Request).filter_map(|m| m.session_gate);
    for gate in gates {
        if gate.opened_by.contains(&method) && !members.contains(&gate.member) {
            members.push(gate.member);
        }
    }
    if members.is_empty() {
        return members;
    }
    let Ok(object) = serde_json::from_str::<std::collections::HashMap<std::borrow::Cow<'_, str>, &RawValue>>(result)
    else {
        return Vec::new();
    };
    members.retain(|member| object.get(*member).is_some_and(|value| value.get().trim_start().starts_with('{')));
    members
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

/// For tools that watch a connection from outside (the inspector, the checks):
/// the capability the request `method`, handled by `handler`, needs and that
/// side's `initialize` message (`init`: the client's params or the agent's result)
/// does not advertise, as a dotted path such as `clientCapabilities.fs.readTextFile`;
/// `None` when the method is not gated or the capability was advertised.
pub fn missing_capability(
    methods: &'static [MethodInfo],
    handler: Side,
    method: &str,
    init: &Value,
    params: Option<&RawValue>,
) -> Option<String> {
    let gate = request(methods, handler, method)?.gate?;
    (!gate.is_open(init, params)).then(|| gate.describe(params))
}

/// The first item of `params` that a value gate of `row` refuses, given the handling
/// side's `initialize` message; `None` when everything sent was advertised (or the
/// params do not have the expected shape, which their decoding reports).
pub fn refused_value(row: &MethodInfo, init: &Value, params: Option<&RawValue>) -> Option<Refused> {
    if row.values.is_empty() {
        return None;
    }
    let members: std::collections::HashMap<std::borrow::Cow<'_, str>, &RawValue> =
        serde_json::from_str(params?.get()).ok()?;
    row.values.iter().find_map(|gate| gate.refused(init, members.get(gate.member).copied()?))
}

impl ValueGate {
    fn refused(&self, init: &Value, list: &RawValue) -> Option<Refused> {
        let items: Vec<&RawValue> = serde_json::from_str(list.get()).ok()?;
        items.iter().enumerate().find_map(|(index, item)| {
            let tag = string_field(item.get(), self.tag).unwrap_or_default();
            if self.baseline.contains(&tag.as_str()) {
                return None;
            }
            let capability = match self.gated.iter().find(|(gated, _)| *gated == tag) {
                Some((_, path)) if advertised(path.iter().try_fold(init, |at, key| at.get(key))) => return None,
                Some((_, path)) => Some(path.join(".")),
                None => None,
            };
            Some(Refused { path: format!("$.params.{}[{index}]", self.member), tag, capability })
        })
    }

    /// The tags this gate accepts given the handling side's `initialize` message.
    pub fn accepted(&self, init: &Value) -> Vec<&'static str> {
        let gated = self
            .gated
            .iter()
            .filter(|(_, path)| advertised(path.iter().try_fold(init, |at, key| at.get(key))))
            .map(|(tag, _)| *tag);
        self.baseline.iter().copied().chain(gated).collect()
    }
}

impl Refused {
    /// What it lacks, in words: the capability, or that the tag is not one the schema lists.
    pub fn reason(&self) -> String {
        match &self.capability {
            Some(capability) => {
                format!("`{}` needs `{capability}`, which this side did not advertise", self.shown_tag())
            }
            None => format!("`{}` is not a kind this side can have advertised", self.shown_tag()),
        }
    }

    fn shown_tag(&self) -> &str {
        if self.tag.is_empty() {
            "(untagged)"
        } else {
            &self.tag
        }
    }

    /// The -32602 answer, naming the item's path.
    pub fn error(&self, accepted: &[&str]) -> ErrorObject {
        let expected = format!("one of the advertised kinds ({})", accepted.join(", "));
        let mut error = ErrorObject::invalid_params(&self.path, &expected, self.shown_tag());
        error.message = format!("invalid params: {}: {}", self.path, self.reason());
        error
    }
}

/// A top-level string member of a JSON object, without building a tree of the rest.
fn string_field(text: &str, key: &str) -> Option<String> {
    let members: std::collections::HashMap<std::borrow::Cow<'_, str>, &RawValue> = serde_json::from_str(text).ok()?;
    members.get(key).and_then(|value| serde_json::from_str::<String>(value.get()).ok())
}

fn advertised(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Bool(true)) | Some(Value::Object(_)))
}

fn param_text(params: Option<&RawValue>, member: &str) -> Option<String> {
    params.and_then(|p| string_field(p.get(), member))
}

impl Gate {
    /// Whether the handling side's `initialize` message opens this gate.
    pub fn is_open(&self, init: &Value, params: Option<&RawValue>) -> bool {
        let mut at = init;
        for segment in self.path {
            let key = match segment {
                Segment::Key(key) => (*key).to_owned(),
                // No such member: the params are invalid anyway, and say so elsewhere.
                Segment::Param(member) => match param_text(params, member) {
                    Some(value) => value,
                    None => return true,
                },
            };
            match at.get(&key) {
                Some(next) => at = next,
                None => return false,
            }
        }
        match self.test {
            GateTest::Advertised => advertised(Some(at)),
            GateTest::NonEmpty => matches!(at, Value::Array(items) if !items.is_empty()),
        }
    }

    /// The capability as a dotted path, e.g. `agentCapabilities.loadSession`.
    pub fn describe(&self, params: Option<&RawValue>) -> String {
        let parts: Vec<String> = self
            .path
            .iter()
            .map(|segment| match segment {
                Segment::Key(key) => (*key).to_owned(),
                Segment::Param(member) => param_text(params, member).unwrap_or_else(|| format!("<{member}>")),
            })
            .collect();
        parts.join(".")
    }

    /// What the capability must be, in words, for messages.
    fn wanted(&self, params: Option<&RawValue>) -> String {
        match self.test {
            GateTest::Advertised => format!("`{}`", self.describe(params)),
            GateTest::NonEmpty => format!("a non-empty `{}`", self.describe(params)),
        }
    }

    /// The params member that chose the capability, if one did.
    fn chooser(&self) -> Option<&'static str> {
        self.path.iter().find_map(|segment| match segment {
            Segment::Param(member) => Some(*member),
            Segment::Key(_) => None,
        })
    }

    /// The answer to a gated request this side did not advertise.
    pub fn refusal(&self, method: &str, params: Option<&RawValue>) -> ErrorObject {
        let capability = self.describe(params);
        let wanted = self.wanted(params);
        match self.chooser().filter(|_| self.refusal == ErrorCode::INVALID_PARAMS) {
            Some(member) => {
                let value = param_text(params, member).unwrap_or_default();
                let mut error = ErrorObject::invalid_params(
                    &format!("$.params.{member}"),
                    &format!("a {member} this side advertised"),
                    &value,
                );
                error.message =
                    format!("invalid params: {member} `{value}` needs {wanted}, which this side did not advertise");
                error
            }
            None => {
                let data = serde_json::json!({ "method": method, "capability": capability });
                let error = ErrorObject::new(
                    self.refusal,
                    format!("method not found: `{method}` needs {wanted}, which this side did not advertise"),
                );
                match serde_json::value::to_raw_value(&data) {
                    Ok(data) => error.with_data(data),
                    Err(_) => error,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    fn gate(side: Side, method: &str) -> Gate {
        request(crate::v1::method::ALL, side, method).and_then(|m| m.gate).unwrap()
    }

    #[test]
    fn booleans_and_object_markers() {
        let init = serde_json::json!({"agentCapabilities": {
            "loadSession": true,
            "sessionCapabilities": {"list": {}, "delete": null, "close": false},
        }});
        let open = |m| gate(Side::Agent, m).is_open(&init, None);
        assert!(open("session/load"));
        assert!(open("session/list"));
        assert!(!open("session/delete"), "null means not advertised");
        assert!(!open("session/close"), "false means not advertised");
        assert!(!open("session/resume"), "absent means not advertised");
        let prompt = request(crate::v1::method::ALL, Side::Agent, "session/prompt").unwrap();
        assert!(prompt.gate.is_none(), "baseline methods are not gated");
    }

    #[test]
    fn elicitation_is_gated_per_mode() {
        let init = serde_json::json!({"clientCapabilities": {"elicitation": {"form": {}}}});
        let gate = gate(Side::Client, "elicitation/create");
        assert!(gate.is_open(&init, Some(&raw(r#"{"mode":"form"}"#))));
        assert!(!gate.is_open(&init, Some(&raw(r#"{"mode":"url"}"#))));
        let error = gate.refusal("elicitation/create", Some(&raw(r#"{"mode":"url"}"#)));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("clientCapabilities.elicitation.url"), "{}", error.message);
        let data: Value = serde_json::from_str(error.data.unwrap().get()).unwrap();
        assert_eq!(data["path"], "$.params.mode");
    }

    #[test]
    fn refusal_names_the_capability() {
        let error = gate(Side::Client, "fs/read_text_file").refusal("fs/read_text_file", None);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        let data: Value = serde_json::from_str(error.data.unwrap().get()).unwrap();
        assert_eq!(data["capability"], "clientCapabilities.fs.readTextFile");
    }

    #[test]
    fn prompt_content_is_gated_per_block_type() {
        let row = request(crate::v1::method::ALL, Side::Agent, "session/prompt").unwrap();
        let init = serde_json::json!({"agentCapabilities": {"promptCapabilities": {"image": true, "audio": false}}});
        let prompt = |blocks: &str| raw(&format!(r#"{{"sessionId":"s","prompt":[{blocks}]}}"#));
        let text = r#"{"type":"text","text":"hi"}"#;
        let link = r#"{"type":"resource_link","uri":"file:///a","name":"a"}"#;
        let image = r#"{"type":"image","data":"","mimeType":"image/png"}"#;
        let audio = r#"{"type":"audio","data":"","mimeType":"audio/wav"}"#;
        assert_eq!(refused_value(row, &init, Some(&prompt(&format!("{text},{link},{image}")))), None);
        let refused = refused_value(row, &init, Some(&prompt(&format!("{text},{audio}")))).unwrap();
        assert_eq!(refused.path, "$.params.prompt[1]");
        assert_eq!(refused.capability.as_deref(), Some("agentCapabilities.promptCapabilities.audio"));
        let unknown = refused_value(row, &init, Some(&prompt(r#"{"type":"hologram"}"#))).unwrap();
        assert_eq!((unknown.tag.as_str(), unknown.capability.as_deref()), ("hologram", None));
        let error = unknown.error(&row.values[0].accepted(&init));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        let data: Value = serde_json::from_str(error.data.unwrap().get()).unwrap();
        assert_eq!(data["path"], "$.params.prompt[0]");
        assert_eq!(data["found"], "hologram");
    }

    #[test]
    fn mcp_servers_are_gated_per_transport() {
        let row = request(crate::v1::method::ALL, Side::Agent, "session/new").unwrap();
        let init = serde_json::json!({"agentCapabilities": {"mcpCapabilities": {"http": true}}});
        let new = |servers: &str| raw(&format!(r#"{{"cwd":"/","mcpServers":[{servers}]}}"#));
        let stdio = r#"{"name":"a","command":"x","args":[],"env":[]}"#;
        let http = r#"{"type":"http","name":"b","url":"http://x","headers":[]}"#;
        let sse = r#"{"type":"sse","name":"c","url":"http://x","headers":[]}"#;
        assert_eq!(refused_value(row, &init, Some(&new(&format!("{stdio},{http}")))), None);
        let refused = refused_value(row, &init, Some(&new(&format!("{stdio},{sse}")))).unwrap();
        assert_eq!(refused.capability.as_deref(), Some("agentCapabilities.mcpCapabilities.sse"));
    }

    #[test]
    fn set_mode_needs_modes_from_the_opening_answer() {
        let all = crate::v1::method::ALL;
        let gate = request(all, Side::Agent, "session/set_mode").and_then(|m| m.session_gate).unwrap();
        assert_eq!(gate.member, "modes");
        assert_eq!(gate.opened_by, &["session/new", "session/load", "session/resume"], "stable v1 has no fork");
        #[cfg(feature = "unstable")]
        {
            let unstable = request(crate::v1_unstable::method::ALL, Side::Agent, "session/set_mode").unwrap();
            assert!(unstable.session_gate.unwrap().opened_by.contains(&"session/fork"));
        }
        let modes = r#"{"sessionId":"s","modes":{"currentModeId":"a","availableModes":[]}}"#;
        assert_eq!(announced(all, Side::Agent, "session/new", modes), ["modes"]);
        assert!(announced(all, Side::Agent, "session/new", r#"{"sessionId":"s","modes":null}"#).is_empty());
        assert!(announced(all, Side::Agent, "session/load", "{}").is_empty());
        assert!(announced(all, Side::Agent, "session/prompt", modes).is_empty(), "not an opening request");
        let error = gate.refusal("session/set_mode", "s1");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("session `s1`"), "{}", error.message);
        let data: Value = serde_json::from_str(error.data.unwrap().get()).unwrap();
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
    }
}
