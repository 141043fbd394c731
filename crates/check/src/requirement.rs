//! The requirement tables: every rule a check judges, with a stable id.
//!
//! Ids never change meaning once published; a rule that goes away leaves its id
//! unused. The statements are ours, one line each; `spec` says where the rule
//! comes from (a page of the ACP documentation, a schema definition, or
//! JSON-RPC 2.0 itself).

use std::fmt;

/// How binding a requirement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// A failure makes the peer non-conformant (and `check` exit non-zero).
    Must,
    /// Recommended behaviour; a failure is reported but does not fail the run.
    Should,
}

impl Level {
    /// `MUST` or `SHOULD`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule a check judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    /// Stable id, e.g. `ACP-INIT-001`.
    pub id: &'static str,
    /// MUST or SHOULD.
    pub level: Level,
    /// The rule in one line.
    pub statement: &'static str,
    /// Where the rule comes from.
    pub spec: &'static str,
}

const fn must(id: &'static str, statement: &'static str, spec: &'static str) -> Requirement {
    Requirement { id, level: Level::Must, statement, spec }
}

const fn should(id: &'static str, statement: &'static str, spec: &'static str) -> Requirement {
    Requirement { id, level: Level::Should, statement, spec }
}

/// What `check agent` judges, in report order.
pub const AGENT: &[Requirement] = &[
    must(
        "ACP-INIT-001",
        "initialize asking for version 1 succeeds with a valid InitializeResponse (capabilities included)",
        "initialization; schema InitializeResponse",
    ),
    must("ACP-INIT-002", "asked for version 1, the agent agrees to version 1", "initialization: version negotiation"),
    must(
        "ACP-INIT-003",
        "asked for an unknown newer version (65535), the agent answers a version it supports instead",
        "initialization: version negotiation",
    ),
    must(
        "ACP-INIT-004",
        "asked for version 0, the agent answers a version it supports (1 or later)",
        "initialization: version negotiation",
    ),
    must(
        "ACP-INIT-005",
        "initialize without the optional clientCapabilities and clientInfo succeeds",
        "schema InitializeRequest (only protocolVersion is required)",
    ),
    must(
        "ACP-INIT-006",
        "initialize with a non-integer protocolVersion (a pre-release date string) is refused with -32602 or \
         answered with a version the agent supports",
        "schema ProtocolVersion (uint16); initialization: version negotiation",
    ),
    should(
        "ACP-INIT-007",
        "the initialize result names the agent (agentInfo with name and version)",
        "initialization: implementation information",
    ),
    should(
        "ACP-INIT-008",
        "a session request sent before initialize is refused with an error",
        "initialization (initialize comes first)",
    ),
    must(
        "ACP-SESSION-001",
        "session/new with an absolute cwd and no MCP servers returns a non-empty sessionId",
        "session setup; schema NewSessionResponse",
    ),
    must("ACP-SESSION-002", "two session/new calls return different session ids", "session setup (ids are unique)"),
    must(
        "ACP-SESSION-003",
        "a prompt naming a session the agent never created is refused with an error",
        "session setup; schema PromptRequest.sessionId",
    ),
    should(
        "ACP-SESSION-004",
        "that refusal uses -32002 (resource not found)",
        "schema ErrorCode (-32002 resource not found)",
    ),
    must(
        "ACP-PROMPT-001",
        "a text prompt ends with a valid PromptResponse (stopReason one of the defined values)",
        "prompt turn; schema PromptResponse, StopReason",
    ),
    must(
        "ACP-PROMPT-002",
        "every session/update sent during a turn names a session the agent created",
        "prompt turn; schema SessionNotification.sessionId",
    ),
    should(
        "ACP-PROMPT-003",
        "no session/update for a session arrives after its prompt response",
        "prompt turn (updates precede the response)",
    ),
    must(
        "ACP-CANCEL-001",
        "session/cancel during a turn ends it with stopReason \"cancelled\" (a result, not an error)",
        "prompt turn: cancellation",
    ),
    must(
        "ACP-CANCEL-002",
        "after a cancelled turn, the next prompt on the same session completes",
        "prompt turn: cancellation",
    ),
    should(
        "ACP-CANCEL-003",
        "$/cancel_request naming an in-flight prompt gets it answered (-32800 or a result) without session/cancel",
        "cancellation: $/cancel_request",
    ),
    must(
        "ACP-CANCEL-004",
        "$/cancel_request naming an id that is not in flight gets no response and does no harm",
        "cancellation: $/cancel_request; JSON-RPC 2.0 §4.1 (notifications)",
    ),
    must("ACP-RPC-001", "a request for a method that does not exist is answered -32601", "JSON-RPC 2.0 §5.1"),
    must("ACP-RPC-002", "a line that is not JSON is answered -32700 with id null", "JSON-RPC 2.0 §5, §5.1"),
    must(
        "ACP-RPC-003",
        "a request whose params have wrong types or lack a required field is answered -32602",
        "JSON-RPC 2.0 §5.1",
    ),
    should("ACP-RPC-004", "a message with jsonrpc other than \"2.0\" is answered -32600", "JSON-RPC 2.0 §4, §5.1"),
    should(
        "ACP-RPC-005",
        "a JSON array (a batch, which ACP does not use) is answered with an error and not processed",
        "transports (one message per line); JSON-RPC 2.0 §6",
    ),
    should("ACP-RPC-006", "a request of several MiB is read and answered", "transports (no size limit is set)"),
    must(
        "ACP-RPC-007",
        "none of the bad input above closes the connection: a prompt afterwards completes",
        "JSON-RPC 2.0 §5; transports",
    ),
    must("ACP-EXT-001", "an unknown _-prefixed request is answered -32601", "extensibility: custom requests"),
    must(
        "ACP-EXT-002",
        "an unknown _-prefixed notification gets no response and does no harm",
        "extensibility: custom notifications",
    ),
    must("ACP-EXT-003", "requests carrying _meta with unknown keys are accepted", "extensibility: the _meta field"),
    must(
        "ACP-WIRE-001",
        "everything the agent writes to stdout is JSON-RPC 2.0, one message per line",
        "transports: stdio",
    ),
    must(
        "ACP-WIRE-002",
        "every request and notification the agent sends is valid for its method (v1 schema)",
        "schema AgentRequest, AgentNotification",
    ),
    must("ACP-WIRE-003", "every response carries the id of a request the client sent", "JSON-RPC 2.0 §5"),
    must(
        "ACP-CAP-001",
        "the agent calls no client method the client did not advertise (fs, terminal, elicitation)",
        "initialization: client capabilities",
    ),
    must(
        "ACP-ALIVE-001",
        "after the whole script (cancels, unknown session, unknown methods, extensions) a prompt still completes",
        "JSON-RPC 2.0 §5 (errors do not end a connection)",
    ),
    should("ACP-EXIT-001", "the agent exits once its stdin is closed", "transports: stdio (shutdown)"),
];

/// What `check client` judges, in report order.
pub const CLIENT: &[Requirement] = &[
    must("ACP-CLIENT-INIT-001", "the client's first message is an initialize request", "initialization"),
    must(
        "ACP-CLIENT-INIT-002",
        "initialize params are a valid InitializeRequest with protocolVersion 1 or later",
        "initialization; schema InitializeRequest",
    ),
    must("ACP-CLIENT-INIT-003", "the client sends initialize once", "initialization"),
    must(
        "ACP-CLIENT-WIRE-001",
        "everything the client writes is JSON-RPC 2.0, one message per line",
        "transports: stdio",
    ),
    must(
        "ACP-CLIENT-WIRE-002",
        "every request and notification the client sends is valid for its method (v1 schema)",
        "schema ClientRequest, ClientNotification",
    ),
    must(
        "ACP-CLIENT-WIRE-003",
        "every response answers a request the agent sent, with a result valid for its method",
        "JSON-RPC 2.0 §5; schema ClientResponse",
    ),
    must("ACP-CLIENT-SESSION-001", "session/new carries an absolute cwd", "session setup (paths are absolute)"),
    must(
        "ACP-CLIENT-SESSION-002",
        "session requests and notifications name only sessions the agent created",
        "session setup",
    ),
    must(
        "ACP-CLIENT-CAP-001",
        "the client calls only baseline methods and methods the agent advertised",
        "initialization: agent capabilities",
    ),
    must(
        "ACP-CLIENT-CAP-002",
        "prompts carry only content the agent accepts (text, resource_link unless more is advertised)",
        "content; initialization: prompt capabilities",
    ),
    should(
        "ACP-CLIENT-PROMPT-001",
        "no new prompt on a session while its previous prompt is unanswered",
        "prompt turn",
    ),
    must(
        "ACP-CLIENT-PERM-001",
        "a permission request is answered with an offered optionId or \"cancelled\"",
        "tool calls: requesting permission",
    ),
    must(
        "ACP-CLIENT-PERM-002",
        "after session/cancel, the session's pending permission requests are answered \"cancelled\"",
        "prompt turn: cancellation",
    ),
    must(
        "ACP-CLIENT-RPC-001",
        "an unknown _-prefixed request from the agent is answered -32601",
        "extensibility: custom requests",
    ),
    must("ACP-CLIENT-RPC-002", "a request for a method that does not exist is answered -32601", "JSON-RPC 2.0 §5.1"),
    must(
        "ACP-CLIENT-RPC-003",
        "a request the agent cancels with $/cancel_request is still answered (a result or -32800)",
        "cancellation: $/cancel_request",
    ),
    must(
        "ACP-CLIENT-EXT-001",
        "an unknown _-prefixed notification is ignored and the client keeps working",
        "extensibility: custom notifications",
    ),
    must(
        "ACP-CLIENT-EXT-002",
        "an update carrying _meta with unknown keys is accepted and the client keeps working",
        "extensibility: the _meta field",
    ),
    should(
        "ACP-CLIENT-EXT-003",
        "an update of a kind v1 does not define (from a newer agent) does not break the client",
        "extensibility; schema SessionUpdate",
    ),
    must(
        "ACP-CLIENT-FS-001",
        "fs/read_text_file and fs/write_text_file (when advertised) are answered with a valid result or an error",
        "file system; schema ReadTextFileResponse, WriteTextFileResponse",
    ),
    should("ACP-CLIENT-FS-002", "a read returns the file's text and a write stores the content sent", "file system"),
];

/// Both tables as Markdown (the text of `crates/check/REQUIREMENTS.md`).
pub fn markdown() -> String {
    let mut out = String::from(
        "# Requirements judged by `agentproto check`\n\n\
         Generated from `crates/check/src/requirement.rs` (`agentproto check requirements --markdown`); \
         a test keeps this file in step with the code. Ids are stable: a rule that goes away leaves its id \
         unused. A MUST failure makes `agentproto check` exit 1.\n",
    );
    for (title, table) in [("`check agent`", AGENT), ("`check client`", CLIENT)] {
        out.push_str(&format!("\n## {title}\n\n| Id | Level | Requirement | From |\n|---|---|---|---|\n"));
        for r in table {
            let statement = r.statement.replace('|', "\\|");
            out.push_str(&format!("| `{}` | {} | {statement} | {} |\n", r.id, r.level, r.spec));
        }
    }
    out
}

/// Looks a requirement up by id in both tables.
pub fn find(id: &str) -> Option<&'static Requirement> {
    AGENT.iter().chain(CLIENT).find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for r in AGENT.iter().chain(CLIENT) {
            assert!(seen.insert(r.id), "duplicate id {}", r.id);
            assert!(r.id.starts_with("ACP-"), "{}", r.id);
            let number = r.id.rsplit('-').next().unwrap();
            assert!(number.len() == 3 && number.chars().all(|c| c.is_ascii_digit()), "{}", r.id);
            assert!(!r.statement.is_empty() && !r.spec.is_empty());
        }
        assert!(CLIENT.iter().all(|r| r.id.starts_with("ACP-CLIENT-")));
        assert!(AGENT.iter().all(|r| !r.id.starts_with("ACP-CLIENT-")));
    }
}
