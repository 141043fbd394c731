//! The rule table: every finding the engine can report, with its stable code.
//!
//! Codes are part of the public interface (people grep logs and CI output for
//! them): a rule's code never changes meaning and is never reused. The table in
//! `docs/findings.md` is generated from [`RULES`] (`agentproto inspect --rules`)
//! and a test keeps the two identical.

use std::fmt;

/// What part of the protocol a rule is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    /// Bytes and framing: size limits, non-JSON lines.
    Transport,
    /// The JSON-RPC envelope: valid JSON, `jsonrpc`, ids, request/response shape.
    Envelope,
    /// The params, results and errors against the schema of their method.
    Schema,
    /// The connection's state machine: initialize, request ids, responses.
    Protocol,
    /// Sessions and prompt turns: unknown sessions, cancel, tool calls, permissions.
    Session,
    /// Methods used without the capability that gates them.
    Capability,
}

impl Lane {
    /// The lowercase name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Transport => "transport",
            Lane::Envelope => "envelope",
            Lane::Schema => "schema",
            Lane::Protocol => "protocol",
            Lane::Session => "session",
            Lane::Capability => "capability",
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; not wrong (an unknown variant kept for forward compatibility).
    Info,
    /// Allowed but likely a mistake, or a SHOULD the spec asks for.
    Warning,
    /// A MUST of the protocol is broken: a conforming peer may reject or misread it.
    Error,
}

impl Severity {
    /// The lowercase name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// The stable code, e.g. `ACP.SESSION.UNKNOWN_SESSION`.
    pub code: &'static str,
    /// Its lane.
    pub lane: Lane,
    /// Its severity.
    pub severity: Severity,
    /// One line saying what the rule checks.
    pub summary: &'static str,
}

macro_rules! rules {
    ($($name:ident = $code:literal, $lane:ident, $severity:ident, $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub static $name: Rule = Rule {
                code: $code,
                lane: Lane::$lane,
                severity: Severity::$severity,
                summary: $summary,
            };
        )*
        /// Every rule, in documentation order.
        pub static RULES: &[&Rule] = &[$(&$name),*];
    };
}

rules! {
    MAX_MESSAGE_BYTES = "ACP.TRANSPORT.MAX_MESSAGE_BYTES_EXCEEDED", Transport, Error,
        "A message is larger than the configured limit; it is not analysed.";
    NON_JSON_OUTPUT = "ACP.TRANSPORT.NON_JSON_OUTPUT", Transport, Error,
        "The agent wrote a line to stdout that is not JSON (logs belong on stderr).";
    PARSE_ERROR = "ACP.ENVELOPE.PARSE_ERROR", Envelope, Error,
        "A line from the client is not valid JSON (the agent answers -32700).";
    INVALID_REQUEST = "ACP.ENVELOPE.INVALID_REQUEST", Envelope, Error,
        "A message is not a valid JSON-RPC 2.0 request or notification (answered -32600).";
    INVALID_RESPONSE = "ACP.ENVELOPE.INVALID_RESPONSE", Envelope, Error,
        "A response is malformed: both or neither of result and error, a bad id or error object.";
    INVALID_PARAMS = "ACP.SCHEMA.INVALID_PARAMS", Schema, Error,
        "Request or notification params do not match the schema of the method.";
    INVALID_RESULT = "ACP.SCHEMA.INVALID_RESULT", Schema, Error,
        "A result does not match the result schema of the method that was called.";
    UNKNOWN_METHOD = "ACP.SCHEMA.UNKNOWN_METHOD", Schema, Warning,
        "A method that is neither in the schema nor an `_` extension.";
    WRONG_DIRECTION = "ACP.SCHEMA.WRONG_DIRECTION", Schema, Error,
        "A method sent by the side that is supposed to receive it.";
    LENIENT_VALUE_DROPPED = "ACP.SCHEMA.LENIENT_VALUE_DROPPED", Schema, Warning,
        "An optional value was invalid and dropped, as the schema's lenient annotation allows.";
    UNKNOWN_VARIANT = "ACP.SCHEMA.UNKNOWN_VARIANT", Schema, Info,
        "A union variant this schema version does not list; it is passed on as raw JSON.";
    MESSAGE_BEFORE_INITIALIZE = "ACP.PROTOCOL.MESSAGE_BEFORE_INITIALIZE", Protocol, Error,
        "A request or notification the client sent before `initialize`, or the agent before answering it.";
    DUPLICATE_INITIALIZE = "ACP.PROTOCOL.DUPLICATE_INITIALIZE", Protocol, Error,
        "A second `initialize` on a connection that already ran (or is running) one.";
    DUPLICATE_REQUEST_ID = "ACP.PROTOCOL.DUPLICATE_REQUEST_ID", Protocol, Error,
        "A request reuses the id of a request from the same side that is still unanswered.";
    UNKNOWN_RESPONSE_ID = "ACP.PROTOCOL.UNKNOWN_RESPONSE_ID", Protocol, Error,
        "A response whose id matches no unanswered request of the other side.";
    UNPROMPTED_NULL_ID_ERROR = "ACP.PROTOCOL.UNPROMPTED_NULL_ID_ERROR", Protocol, Warning,
        "An error response with `id: null` although no line from the other side was unparsable, invalid or over the limit.";
    REQUEST_NEVER_ANSWERED = "ACP.PROTOCOL.REQUEST_NEVER_ANSWERED", Protocol, Warning,
        "A request was still unanswered when the trace ended.";
    UNKNOWN_SESSION = "ACP.SESSION.UNKNOWN_SESSION", Session, Error,
        "A message names a session that was never created, loaded or resumed on this connection.";
    PROMPT_ALREADY_IN_FLIGHT = "ACP.SESSION.PROMPT_ALREADY_IN_FLIGHT", Session, Error,
        "A `session/prompt` for a session whose previous prompt is still unanswered.";
    CANCEL_NOT_HONOURED = "ACP.SESSION.CANCEL_NOT_HONOURED", Session, Error,
        "A prompt cancelled with `session/cancel` ended without `stopReason: \"cancelled\"`.";
    UPDATE_AFTER_PROMPT_RESPONSE = "ACP.SESSION.UPDATE_AFTER_PROMPT_RESPONSE", Session, Warning,
        "Turn content (message, thought, tool call, plan) for a session whose prompt was already answered.";
    UNKNOWN_TOOL_CALL = "ACP.SESSION.UNKNOWN_TOOL_CALL", Session, Warning,
        "A `tool_call_update` for a tool call id never announced with `tool_call`.";
    PERMISSION_UNANSWERED_AFTER_CANCEL = "ACP.SESSION.PERMISSION_UNANSWERED_AFTER_CANCEL", Session, Error,
        "A permission request was left unanswered after its session was cancelled.";
    PERMISSION_NOT_CANCELLED = "ACP.SESSION.PERMISSION_NOT_CANCELLED", Session, Error,
        "A permission request of a cancelled session was answered with another outcome than `cancelled`.";
    CAPABILITY_NOT_ADVERTISED = "ACP.CAPABILITY.NOT_ADVERTISED", Capability, Error,
        "A gated method was used although the receiving side did not advertise its capability.";
    SESSION_NOT_ANNOUNCED = "ACP.CAPABILITY.SESSION_NOT_ANNOUNCED", Capability, Warning,
        "A request for a session whose opening answer did not announce what it needs (`session/set_mode` without `modes`).";
}

/// A code that is no longer reported. It keeps its old meaning in old logs and
/// is never given to another rule.
#[derive(Debug, PartialEq, Eq)]
pub struct Retired {
    /// The old code.
    pub code: &'static str,
    /// The rule that took over, if one did.
    pub replaced_by: Option<&'static str>,
    /// Why it was retired.
    pub why: &'static str,
}

/// Every retired code (listed in `docs/findings.md` too).
pub static RETIRED: &[Retired] = &[Retired {
    code: "ACP.PROTOCOL.INITIALIZE_NOT_FIRST",
    replaced_by: Some("ACP.PROTOCOL.MESSAGE_BEFORE_INITIALIZE"),
    why: "it also fired on requests pipelined after `initialize` (sent before its answer), which JSON-RPC \
          allows and the agent serves once `initialize` has finished",
}];

/// The rule with this code.
pub fn find(code: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|rule| rule.code == code)
}

/// The Markdown table of every rule (the generated part of `docs/findings.md`).
pub fn markdown_table() -> String {
    let mut out = String::from("| Code | Lane | Severity | What it means |\n|---|---|---|---|\n");
    for rule in RULES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            rule.code,
            rule.lane.as_str(),
            rule.severity,
            rule.summary.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for rule in RULES {
            assert!(seen.insert(rule.code), "{} twice", rule.code);
            let parts: Vec<_> = rule.code.split('.').collect();
            assert_eq!(parts.len(), 3, "{}", rule.code);
            assert_eq!(parts[0], "ACP");
            assert_eq!(parts[1], rule.lane.as_str().to_uppercase(), "{}: lane and code disagree", rule.code);
            assert!(parts[2].chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()));
            assert!(!rule.summary.contains('\n'));
        }
    }

    #[test]
    fn retired_codes_are_not_reused() {
        for retired in RETIRED {
            assert!(find(retired.code).is_none(), "{} is retired but in use", retired.code);
            if let Some(successor) = retired.replaced_by {
                assert!(find(successor).is_some(), "{} is replaced by the unknown {successor}", retired.code);
            }
        }
    }
}
