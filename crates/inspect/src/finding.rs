//! One finding: a rule that fired on one message.

use std::fmt::Write as _;

use crate::rules::{Rule, Severity};

/// Which way a message travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client (editor) to the agent.
    ToAgent,
    /// From the agent to the client.
    ToClient,
}

impl Direction {
    /// The short name used in traces and JSON output: `c2a` or `a2c`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ToAgent => "c2a",
            Direction::ToClient => "a2c",
        }
    }

    /// Parses [`Direction::as_str`].
    pub fn parse(text: &str) -> Option<Direction> {
        match text {
            "c2a" => Some(Direction::ToAgent),
            "a2c" => Some(Direction::ToClient),
            _ => None,
        }
    }

    /// The other direction.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::ToAgent => Direction::ToClient,
            Direction::ToClient => Direction::ToAgent,
        }
    }

    /// The sender, for messages.
    pub fn sender(self) -> &'static str {
        match self {
            Direction::ToAgent => "client",
            Direction::ToClient => "agent",
        }
    }
}

/// A rule that fired on a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The rule (code, lane, severity).
    pub rule: &'static Rule,
    /// The message's index in the trace, from 0 (both directions counted).
    pub index: u64,
    /// Which way the message went; `None` for findings about the whole trace.
    pub direction: Option<Direction>,
    /// The JSON-RPC method concerned, when known.
    pub method: Option<String>,
    /// The session concerned, when known.
    pub session: Option<String>,
    /// One line: what happened.
    pub message: String,
    /// The JSON path of the problem within the message, when there is one.
    pub path: Option<String>,
}

impl Finding {
    /// A finding of `rule` on message `index`.
    pub fn new(rule: &'static Rule, index: u64, direction: Option<Direction>, message: impl Into<String>) -> Finding {
        Finding { rule, index, direction, method: None, session: None, message: message.into(), path: None }
    }

    /// With the method concerned.
    pub fn method(mut self, method: impl Into<String>) -> Finding {
        self.method = Some(method.into());
        self
    }

    /// With the session concerned.
    pub fn session(mut self, session: Option<impl Into<String>>) -> Finding {
        self.session = session.map(Into::into);
        self
    }

    /// With the JSON path of the problem.
    pub fn path(mut self, path: impl Into<String>) -> Finding {
        let path = path.into();
        self.path = if path.is_empty() { None } else { Some(path) };
        self
    }

    /// The severity of its rule.
    pub fn severity(&self) -> Severity {
        self.rule.severity
    }

    /// One JSON object (no trailing newline).
    pub fn to_json(&self) -> String {
        let value = serde_json::json!({
            "code": self.rule.code,
            "lane": self.rule.lane.as_str(),
            "severity": self.rule.severity.as_str(),
            "index": self.index,
            "direction": self.direction.map(Direction::as_str),
            "method": self.method,
            "session": self.session,
            "path": self.path,
            "message": self.message,
        });
        value.to_string()
    }

    /// One line of text; `colour` adds ANSI colours for a terminal.
    pub fn to_text(&self, colour: bool) -> String {
        let (on, off) = match (colour, self.rule.severity) {
            (false, _) => ("", ""),
            (true, Severity::Error) => ("\x1b[1;31m", "\x1b[0m"),
            (true, Severity::Warning) => ("\x1b[1;33m", "\x1b[0m"),
            (true, Severity::Info) => ("\x1b[36m", "\x1b[0m"),
        };
        let mut line = format!("#{:<4} ", self.index);
        line.push_str(self.direction.map_or("   ", Direction::as_str));
        let _ = write!(line, " {on}{:<7}{off} {}", self.rule.severity.as_str(), self.rule.code);
        if let Some(method) = &self.method {
            let _ = write!(line, " [{method}]");
        }
        if let Some(session) = &self.session {
            let _ = write!(line, " session={session}");
        }
        let _ = write!(line, ": {}", self.message);
        if let Some(path) = &self.path {
            let _ = write!(line, " (at {path})");
        }
        line
    }
}
