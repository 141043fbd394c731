//! The requirement tables: every rule a check judges, with a stable id.
//!
//! Ids never change meaning once published; a rule that goes away leaves its id
//! unused. The statements are ours, one line each; `spec` says where the rule
//! comes from (a page of the ACP v1 documentation, a description in the pinned
//! schema `spec/acp/v1/schema.json`, or JSON-RPC 2.0, which ACP adopts) and
//! quotes the words that set its level.
//!
//! A requirement is MUST only where its source says MUST (or the schema's
//! structure rules the message out: a required member, a type, a tag); where
//! the source says should, or only describes the behaviour, or says nothing,
//! it is SHOULD. A test keeps every MUST's source quoting a MUST.

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
        "initialization: \"The Agent MUST respond with the chosen protocol version and the capabilities it \
         supports\"; schema InitializeResponse",
    ),
    must(
        "ACP-INIT-002",
        "asked for version 1, the agent agrees to version 1",
        "initialization: \"If the Agent supports the requested version, it MUST respond with the same version\"",
    ),
    must(
        "ACP-INIT-003",
        "asked for an unknown newer version (65535), the agent answers a version it supports instead",
        "initialization: \"Otherwise, the Agent MUST respond with the latest version it supports\"",
    ),
    must(
        "ACP-INIT-004",
        "asked for version 0, the agent answers a version it supports (1 or later)",
        "initialization: \"Otherwise, the Agent MUST respond with the latest version it supports\"",
    ),
    must(
        "ACP-INIT-005",
        "initialize without the optional clientCapabilities and clientInfo succeeds",
        "initialization: \"All capabilities included in the initialize request are OPTIONAL\", \"The Agent MUST \
         respond\"; schema InitializeRequest (only protocolVersion is required)",
    ),
    must(
        "ACP-INIT-006",
        "initialize with a non-integer protocolVersion (a pre-release date string) is refused with -32602 or \
         answered with a version the agent supports",
        "JSON-RPC 2.0 §5: \"the Server MUST reply with a Response\", §5.1 (-32602 invalid params); schema \
         ProtocolVersion (uint16); initialization: version negotiation (MUST)",
    ),
    should(
        "ACP-INIT-007",
        "the initialize result names the agent (agentInfo with name and version)",
        "initialization: \"It SHOULD also provide a name and version to the Client\"",
    ),
    should(
        "ACP-INIT-008",
        "a session request sent before initialize is refused with an error",
        "session setup: \"Before creating a session, Clients MUST first complete the initialization phase\" \
         (a rule for clients; what an agent does otherwise is not said)",
    ),
    must(
        "ACP-SESSION-001",
        "session/new with an absolute cwd and no MCP servers returns a non-empty sessionId",
        "initialization: \"all Agents MUST support session/new\"; session setup: \"The Agent MUST respond with a \
         unique Session ID\"",
    ),
    must(
        "ACP-SESSION-002",
        "two session/new calls return different session ids",
        "session setup: \"The Agent MUST respond with a unique Session ID\"",
    ),
    should(
        "ACP-SESSION-003",
        "a prompt naming a session the agent never created is refused with an error",
        "no text of the spec says what an agent does with an unknown session (acp-tck: informational); schema \
         ErrorCode -32002 \"A given resource, such as a session or file, was not found\"",
    ),
    should(
        "ACP-SESSION-004",
        "that refusal uses -32002 (resource not found)",
        "schema ErrorCode -32002 \"A given resource, such as a session or file, was not found\" (no MUST)",
    ),
    must(
        "ACP-PROMPT-001",
        "a text prompt ends with a valid PromptResponse (stopReason one of the defined values)",
        "initialization: \"all Agents MUST support ContentBlock::Text … in session/prompt requests\"; schema \
         PromptResponse, StopReason",
    ),
    should(
        "ACP-PROMPT-002",
        "every session/update sent during a turn names a session the agent created",
        "schema SessionNotification.sessionId: \"The ID of the session this update pertains to\" (no MUST)",
    ),
    should(
        "ACP-PROMPT-003",
        "no session/update for a session arrives after its prompt response",
        "prompt turn (updates precede the response)",
    ),
    must(
        "ACP-CANCEL-001",
        "session/cancel during a turn ends it with stopReason \"cancelled\" (a result, not an error)",
        "schema StopReason cancelled: \"This stop reason MUST be returned when the client sends a session/cancel \
         notification\"",
    ),
    must(
        "ACP-CANCEL-002",
        "after a cancelled turn, the next prompt on the same session completes",
        "initialization: \"all Agents MUST support session/new, session/prompt, session/cancel\"",
    ),
    should(
        "ACP-CANCEL-003",
        "$/cancel_request naming an in-flight prompt gets it answered (-32800 or a result) without session/cancel",
        "cancellation: $/cancel_request is optional (\"MAY cancel\"); only an answer to the original request is a \
         MUST",
    ),
    must(
        "ACP-CANCEL-004",
        "$/cancel_request naming an id that is not in flight gets no response and does no harm",
        "JSON-RPC 2.0 §4.1: \"The Server MUST NOT reply to a Notification\"",
    ),
    must(
        "ACP-RPC-001",
        "a request for a method that does not exist is answered -32601",
        "JSON-RPC 2.0 §5: \"the Server MUST reply with a Response\"; §5.1: it \"MUST contain the error member\" \
         (-32601 method not found)",
    ),
    must(
        "ACP-RPC-002",
        "a line that is not JSON is answered -32700 with id null",
        "JSON-RPC 2.0 §5: \"If there was an error in detecting the id in the Request object (e.g. Parse error…), \
         it MUST be Null\"; §5.1 (-32700)",
    ),
    must(
        "ACP-RPC-003",
        "a request whose params have wrong types or lack a required field is answered -32602",
        "JSON-RPC 2.0 §5: \"the Server MUST reply with a Response\"; §5.1 (-32602 invalid params)",
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
        "JSON-RPC 2.0 §5: \"the Server MUST reply with a Response\" (to every later request); initialization: \
         \"all Agents MUST support … session/prompt\"",
    ),
    should(
        "ACP-EXT-001",
        "an unknown _-prefixed request is answered -32601",
        "extensibility: \"If the receiving end doesn't recognize the custom method name, it should respond with \
         the standard Method not found error\"",
    ),
    must(
        "ACP-EXT-002",
        "an unknown _-prefixed notification gets no response and does no harm",
        "JSON-RPC 2.0 §4.1: \"The Server MUST NOT reply to a Notification\"; extensibility: \"implementations \
         SHOULD ignore unrecognized notifications\"",
    ),
    must(
        "ACP-EXT-003",
        "requests carrying _meta with unknown keys are accepted",
        "schema _meta: \"Implementations MUST NOT make assumptions about values at these keys\"",
    ),
    must(
        "ACP-WIRE-001",
        "everything the agent writes to stdout is JSON-RPC 2.0, one message per line",
        "transports: \"The agent MUST NOT write anything to its stdout that is not a valid ACP message\"",
    ),
    must(
        "ACP-WIRE-002",
        "every request and notification the agent sends is valid for its method (v1 schema)",
        "schema AgentRequest, AgentNotification (structure: a message that does not match MUST NOT be sent)",
    ),
    must(
        "ACP-WIRE-003",
        "every response carries the id of a request the client sent",
        "schema RequestId: \"The Server MUST reply with the same value in the Response object\"",
    ),
    must(
        "ACP-CAP-001",
        "the agent calls no client method the client did not advertise (fs, terminal, elicitation)",
        "initialization: \"Clients and Agents MUST treat all capabilities omitted in the initialize request as \
         UNSUPPORTED\"",
    ),
    must(
        "ACP-ALIVE-001",
        "after the whole script (cancels, unknown session, unknown methods, extensions) a prompt still completes",
        "JSON-RPC 2.0 §5: \"the Server MUST reply with a Response\" (errors do not end a connection)",
    ),
    should("ACP-EXIT-001", "the agent exits once its stdin is closed", "transports: stdio (shutdown)"),
];

/// What `check client` judges, in report order.
pub const CLIENT: &[Requirement] = &[
    must(
        "ACP-CLIENT-INIT-001",
        "the client's first message is an initialize request",
        "initialization: \"Before a Session can be created, Clients MUST initialize the connection\"",
    ),
    must(
        "ACP-CLIENT-INIT-002",
        "initialize params are a valid InitializeRequest with protocolVersion 1 or later",
        "initialization: \"The initialize request MUST include the latest protocol version the Client \
         supports\"; schema InitializeRequest",
    ),
    should(
        "ACP-CLIENT-INIT-003",
        "the client sends initialize once",
        "schema initialize: \"This method is called once at the beginning of the connection\" (no MUST)",
    ),
    must(
        "ACP-CLIENT-WIRE-001",
        "everything the client writes is JSON-RPC 2.0, one message per line",
        "transports: \"The client MUST NOT write anything to the agent's stdin that is not a valid ACP message\"",
    ),
    must(
        "ACP-CLIENT-WIRE-002",
        "every request and notification the client sends is valid for its method (v1 schema)",
        "schema ClientRequest, ClientNotification (structure: a message that does not match MUST NOT be sent)",
    ),
    must(
        "ACP-CLIENT-WIRE-003",
        "every response answers a request the agent sent, with a result valid for its method",
        "schema RequestId: \"The Server MUST reply with the same value in the Response object\"; schema \
         ClientResponse",
    ),
    must(
        "ACP-CLIENT-SESSION-001",
        "session/new carries an absolute cwd",
        "session setup: the working directory \"MUST be an absolute path\"",
    ),
    should(
        "ACP-CLIENT-SESSION-002",
        "session requests and notifications name only sessions the agent created",
        "session setup: \"Clients use this ID to send prompt requests\" (no MUST)",
    ),
    must(
        "ACP-CLIENT-CAP-001",
        "the client calls only baseline methods and methods the agent advertised",
        "initialization: \"Clients and Agents MUST treat all capabilities omitted in the initialize request as \
         UNSUPPORTED\"; session setup: \"Clients MUST NOT attempt to call session/load\"",
    ),
    must(
        "ACP-CLIENT-CAP-002",
        "prompts carry only content the agent accepts (text, resource_link unless more is advertised)",
        "schema PromptRequest.prompt: \"The Client MUST adapt its interface according to PromptCapabilities\"",
    ),
    should(
        "ACP-CLIENT-PROMPT-001",
        "no new prompt on a session while its previous prompt is unanswered",
        "prompt turn",
    ),
    must(
        "ACP-CLIENT-PERM-001",
        "a permission request is answered with an offered optionId or \"cancelled\"",
        "JSON-RPC 2.0 §5: \"the Server MUST reply with a Response\"; schema RequestPermissionOutcome (selected \
         option or cancelled)",
    ),
    must(
        "ACP-CLIENT-PERM-002",
        "after session/cancel, the session's pending permission requests are answered \"cancelled\"",
        "schema RequestPermissionOutcome: \"it MUST respond to all pending session/request_permission requests \
         with this cancelled outcome\"",
    ),
    should(
        "ACP-CLIENT-RPC-001",
        "an unknown _-prefixed request from the agent is answered -32601",
        "extensibility: \"If the receiving end doesn't recognize the custom method name, it should respond with \
         the standard Method not found error\"",
    ),
    must(
        "ACP-CLIENT-RPC-002",
        "a request for a method that does not exist is answered -32601",
        "JSON-RPC 2.0 §5: \"the Server MUST reply with a Response\", §5.1 (-32601 method not found)",
    ),
    must(
        "ACP-CLIENT-RPC-003",
        "a request the agent cancels with $/cancel_request is still answered (a result or -32800)",
        "schema $/cancel_request: \"MUST send one of these responses for the original request\"",
    ),
    must(
        "ACP-CLIENT-EXT-001",
        "an unknown _-prefixed notification is ignored and the client keeps working",
        "extensibility: \"Upon receiving a custom request, implementations MUST respond\" (the request after the \
         notification); \"implementations SHOULD ignore unrecognized notifications\"",
    ),
    must(
        "ACP-CLIENT-EXT-002",
        "an update carrying _meta with unknown keys is accepted and the client keeps working",
        "schema _meta: \"Implementations MUST NOT make assumptions about values at these keys\"",
    ),
    should(
        "ACP-CLIENT-EXT-003",
        "an update of a kind v1 does not define (from a newer agent) does not break the client",
        "extensibility; schema SessionUpdate",
    ),
    must(
        "ACP-CLIENT-FS-001",
        "fs/read_text_file and fs/write_text_file (when advertised) are answered with a valid result or an error",
        "JSON-RPC 2.0 §5: \"the Server MUST reply with a Response\"; schema ReadTextFileResponse, \
         WriteTextFileResponse",
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

    #[test]
    fn every_must_quotes_a_must_of_its_source() {
        for r in AGENT.iter().chain(CLIENT).filter(|r| r.level == Level::Must) {
            assert!(r.spec.contains("MUST"), "{} is MUST but its source quotes no MUST: {}", r.id, r.spec);
        }
    }
}
