//! Scripted traces for the tests: one message per line, `>` for client → agent and
//! `<` for agent → client, `# trigger` / `# clean` sections, and shorthands:
//! `@init` (an initialize exchange), `@session ID` (a `session/new` exchange),
//! `@max N` (the engine's size limit).

#![allow(dead_code, unreachable_pub)]

use agentproto_inspect::{Direction, Engine, Finding};

pub const INIT: [(Direction, &str); 2] = [
    (
        Direction::ToAgent,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}}"#,
    ),
    (Direction::ToClient, r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}"#),
];

/// One section of a script.
#[derive(Debug, Default)]
pub struct Script {
    pub max: Option<usize>,
    pub messages: Vec<(Direction, String)>,
}

impl Script {
    pub fn parse(text: &str) -> Script {
        let mut script = Script::default();
        for line in text.lines() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(max) = line.strip_prefix("@max ") {
                script.max = Some(max.parse().expect("@max N"));
            } else if line == "@init" {
                script.messages.extend(INIT.iter().map(|(d, m)| (*d, (*m).to_owned())));
            } else if let Some(id) = line.strip_prefix("@session ") {
                script.messages.push((
                    Direction::ToAgent,
                    format!(r#"{{"jsonrpc":"2.0","id":"new-{id}","method":"session/new","params":{{"cwd":"/tmp","mcpServers":[]}}}}"#),
                ));
                script.messages.push((
                    Direction::ToClient,
                    format!(r#"{{"jsonrpc":"2.0","id":"new-{id}","result":{{"sessionId":"{id}"}}}}"#),
                ));
            } else if let Some(message) = line.strip_prefix("> ") {
                script.messages.push((Direction::ToAgent, message.to_owned()));
            } else if let Some(message) = line.strip_prefix("< ") {
                script.messages.push((Direction::ToClient, message.to_owned()));
            } else {
                panic!("unreadable script line: {line}");
            }
        }
        script
    }

    /// The section `# name` of a file.
    pub fn section(text: &str, name: &str) -> Script {
        let header = format!("# {name}");
        let start = text.find(&header).unwrap_or_else(|| panic!("no `{header}` section"));
        let rest = &text[start + header.len()..];
        let end = rest.find("\n# ").map_or(rest.len(), |at| at + 1);
        Script::parse(&rest[..end])
    }

    pub fn findings(&self) -> Vec<Finding> {
        let mut engine = Engine::acp();
        if let Some(max) = self.max {
            engine = engine.max_message_bytes(max);
        }
        let mut findings = Vec::new();
        for (direction, message) in &self.messages {
            findings.extend(engine.observe(*direction, message.as_bytes()).findings);
        }
        findings.extend(engine.finish());
        findings
    }
}
