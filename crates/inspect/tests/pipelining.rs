//! A request the client pipelines after `initialize`, before its answer, is not a
//! finding by itself; what it needs is checked against the capabilities the
//! agent's answer advertises, and a finding names the request's own position.

mod common;

use agentproto_inspect::Direction;
use common::Script;

const PIPELINED_LOAD: &str = r#"
> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
> {"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s0","cwd":"/tmp","mcpServers":[]}}
< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":LOAD}}}
< {"jsonrpc":"2.0","id":1,"result":null}
"#;

#[test]
fn a_pipelined_request_is_checked_against_the_answer_to_initialize() {
    let findings = Script::parse(&PIPELINED_LOAD.replace("LOAD", "false")).findings();
    let found: Vec<_> = findings.iter().map(|f| (f.rule.code, f.index, f.direction)).collect();
    assert_eq!(found, [("ACP.CAPABILITY.NOT_ADVERTISED", 1, Some(Direction::ToAgent))], "{findings:?}");
    assert!(findings[0].message.contains("agentCapabilities.loadSession"), "{findings:?}");
}

#[test]
fn a_pipelined_request_the_agent_advertised_is_clean() {
    let findings = Script::parse(&PIPELINED_LOAD.replace("LOAD", "true")).findings();
    assert!(findings.is_empty(), "{findings:?}");
}
