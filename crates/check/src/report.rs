//! Results: the per-requirement ledger a check fills in while it runs, and the
//! report it hands back (a text table or JSON).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::requirement::{Level, Requirement};

/// What became of one requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exercised, and every observation agreed with it.
    Pass,
    /// Broken; the text says what was seen (with a JSON path where there is one).
    Fail(String),
    /// The run never got to judge it; the text says why.
    NotExercised(String),
}

impl Outcome {
    /// `pass`, `fail` or `not_exercised`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::NotExercised(_) => "not_exercised",
        }
    }

    /// The detail text, if any.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Outcome::Pass => None,
            Outcome::Fail(detail) | Outcome::NotExercised(detail) => Some(detail),
        }
    }
}

/// One row of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequirementResult {
    /// The requirement judged.
    pub requirement: &'static Requirement,
    /// What became of it.
    pub outcome: Outcome,
}

/// Which kind of peer was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// An agent, driven by a scripted client.
    Agent,
    /// A client, driven by a scripted agent.
    Client,
}

impl Subject {
    /// `agent` or `client`.
    pub fn as_str(self) -> &'static str {
        match self {
            Subject::Agent => "agent",
            Subject::Client => "client",
        }
    }
}

/// The outcome of one check run.
#[derive(Debug, Clone)]
pub struct Report {
    /// What was checked.
    pub subject: Subject,
    /// The command line that was run.
    pub command: Vec<String>,
    /// The peer's self-description (`agentInfo` / `clientInfo`): name and version.
    pub peer: Option<(String, String)>,
    /// The protocol version the peer answered or asked for.
    pub protocol_version: Option<u16>,
    /// One row per requirement, in table order (only those selected).
    pub results: Vec<RequirementResult>,
    /// Observations that belong to no single requirement.
    pub notes: Vec<String>,
    /// The last lines the peer wrote to stderr (when it was captured).
    pub stderr_tail: Vec<String>,
}

impl Report {
    /// Rows that failed.
    pub fn failures(&self) -> impl Iterator<Item = &RequirementResult> {
        self.results.iter().filter(|r| matches!(r.outcome, Outcome::Fail(_)))
    }

    /// The ids of the failed requirements, in table order.
    pub fn failed_ids(&self) -> Vec<&'static str> {
        self.failures().map(|r| r.requirement.id).collect()
    }

    /// The ids of requirements that were not exercised.
    pub fn not_exercised_ids(&self) -> Vec<&'static str> {
        self.results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::NotExercised(_)))
            .map(|r| r.requirement.id)
            .collect()
    }

    /// How many MUST requirements failed.
    pub fn must_failures(&self) -> usize {
        self.failures().filter(|r| r.requirement.level == Level::Must).count()
    }

    /// Whether the peer met every MUST requirement that was exercised.
    pub fn conformant(&self) -> bool {
        self.must_failures() == 0
    }

    fn counts(&self) -> (usize, usize, usize) {
        let passed = self.results.iter().filter(|r| r.outcome == Outcome::Pass).count();
        let failed = self.failures().count();
        (passed, failed, self.results.len() - passed - failed)
    }

    /// The report as a table for people; `colour` adds ANSI colours.
    pub fn render_text(&self, colour: bool) -> String {
        let paint =
            |code: &str, text: &str| if colour { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() };
        let mut out = String::new();
        let _ = writeln!(out, "agentproto check {}: {}", self.subject.as_str(), self.command.join(" "));
        match (&self.peer, self.protocol_version) {
            (Some((name, version)), Some(v)) => {
                let _ = writeln!(out, "{}: {name} {version}, protocol version {v}", self.subject.as_str());
            }
            (Some((name, version)), None) => {
                let _ = writeln!(out, "{}: {name} {version}", self.subject.as_str());
            }
            (None, Some(v)) => {
                let _ = writeln!(out, "protocol version {v}");
            }
            (None, None) => {}
        }
        out.push('\n');
        let width = self.results.iter().map(|r| r.requirement.id.len()).max().unwrap_or(12);
        let _ = writeln!(out, "{:width$}  {:6}  {:13}  REQUIREMENT", "ID", "LEVEL", "RESULT");
        for row in &self.results {
            let r = row.requirement;
            let result = match &row.outcome {
                Outcome::Pass => paint("32", &format!("{:13}", "pass")),
                Outcome::Fail(_) => paint("1;31", &format!("{:13}", "FAIL")),
                Outcome::NotExercised(_) => paint("33", &format!("{:13}", "not exercised")),
            };
            let _ = writeln!(out, "{:width$}  {:6}  {result}  {}", r.id, r.level.as_str(), r.statement);
            if let Some(detail) = row.outcome.detail() {
                for (i, line) in detail.lines().enumerate() {
                    let lead = if i == 0 { "↳ " } else { "  " };
                    let _ = writeln!(out, "{:width$}  {:6}  {:13}  {lead}{line}", "", "", "");
                }
            }
        }
        if !self.notes.is_empty() {
            out.push_str("\nnotes:\n");
            for note in &self.notes {
                let _ = writeln!(out, "  - {note}");
            }
        }
        if !self.stderr_tail.is_empty() && self.failures().next().is_some() {
            let _ = writeln!(out, "\nlast lines of the {}'s stderr:", self.subject.as_str());
            for line in &self.stderr_tail {
                let _ = writeln!(out, "  | {line}");
            }
        }
        let (passed, failed, skipped) = self.counts();
        let must = self.must_failures();
        let verdict = if must == 0 {
            paint("32", "conformant (no MUST failure)")
        } else {
            paint("1;31", &format!("NOT conformant ({must} MUST failure{})", if must == 1 { "" } else { "s" }))
        };
        let _ = writeln!(out, "\n{passed} passed, {failed} failed, {skipped} not exercised: {verdict}");
        out
    }

    /// The report as JSON for machines.
    pub fn to_json(&self) -> Value {
        let (passed, failed, skipped) = self.counts();
        json!({
            "subject": self.subject.as_str(),
            "command": self.command,
            "peer": self.peer.as_ref().map(|(name, version)| json!({"name": name, "version": version})),
            "protocolVersion": self.protocol_version,
            "conformant": self.conformant(),
            "summary": {
                "passed": passed,
                "failed": failed,
                "notExercised": skipped,
                "mustFailed": self.must_failures(),
            },
            "results": self.results.iter().map(|row| json!({
                "id": row.requirement.id,
                "level": row.requirement.level.as_str(),
                "statement": row.requirement.statement,
                "spec": row.requirement.spec,
                "outcome": row.outcome.as_str(),
                "detail": row.outcome.detail(),
            })).collect::<Vec<_>>(),
            "notes": self.notes,
            "stderrTail": self.stderr_tail,
        })
    }
}

/// What a check has seen of one requirement so far.
#[derive(Debug, Default)]
struct State {
    exercised: bool,
    failures: Vec<String>,
    skipped: Option<String>,
}

/// At most this many failure details are kept per requirement.
const MAX_DETAILS: usize = 3;

/// The per-requirement record a check fills in as it runs. A requirement fails
/// if any observation broke it, passes if it was exercised without one, and is
/// "not exercised" otherwise.
#[derive(Debug)]
pub(crate) struct Ledger {
    table: &'static [Requirement],
    states: HashMap<&'static str, State>,
}

impl Ledger {
    pub(crate) fn new(table: &'static [Requirement]) -> Ledger {
        Ledger { table, states: table.iter().map(|r| (r.id, State::default())).collect() }
    }

    fn state(&mut self, id: &str) -> &mut State {
        let key = self.table.iter().find(|r| r.id == id).map(|r| r.id);
        let key = key.unwrap_or_else(|| panic!("requirement {id} is not in the table"));
        self.states.entry(key).or_default()
    }

    /// Records that `id` was exercised and held.
    pub(crate) fn pass(&mut self, id: &str) {
        self.state(id).exercised = true;
    }

    /// Records that `id` was broken.
    pub(crate) fn fail(&mut self, id: &str, detail: impl Into<String>) {
        let state = self.state(id);
        state.exercised = true;
        if state.failures.len() < MAX_DETAILS {
            state.failures.push(detail.into());
        } else if state.failures.len() == MAX_DETAILS {
            state.failures.push("(more of the same)".to_owned());
        }
    }

    /// Passes or fails `id`.
    pub(crate) fn check(&mut self, id: &str, ok: bool, detail: impl FnOnce() -> String) {
        if ok {
            self.pass(id);
        } else {
            self.fail(id, detail());
        }
    }

    /// Says why `id` could not be judged, unless a reason is known already.
    pub(crate) fn skip(&mut self, id: &str, reason: impl Into<String>) {
        let state = self.state(id);
        if state.skipped.is_none() {
            state.skipped = Some(reason.into());
        }
    }

    /// Whether `id` has failed so far.
    pub(crate) fn failed(&mut self, id: &str) -> bool {
        !self.state(id).failures.is_empty()
    }

    /// The rows, in table order, for the requirements `selected` accepts.
    pub(crate) fn finish(mut self, selected: impl Fn(&Requirement) -> bool) -> Vec<RequirementResult> {
        self.table
            .iter()
            .filter(|r| selected(r))
            .map(|r| {
                let state = self.states.remove(r.id).unwrap_or_default();
                let outcome = if !state.failures.is_empty() {
                    Outcome::Fail(state.failures.join("\n"))
                } else if state.exercised {
                    Outcome::Pass
                } else {
                    Outcome::NotExercised(state.skipped.unwrap_or_else(|| "the run did not get this far".to_owned()))
                };
                RequirementResult { requirement: r, outcome }
            })
            .collect()
    }
}

/// Receives progress while a check runs (the CLI shows it on a terminal).
pub trait Progress: Send + Sync {
    /// A new step started.
    fn step(&self, text: &str);
}

/// Progress that goes nowhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn step(&self, _: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requirement::AGENT;

    #[test]
    fn failure_wins_over_pass_and_skips_explain_themselves() {
        let mut ledger = Ledger::new(AGENT);
        ledger.pass("ACP-INIT-001");
        ledger.fail("ACP-INIT-001", "bad");
        ledger.pass("ACP-INIT-002");
        ledger.skip("ACP-INIT-003", "first reason");
        ledger.skip("ACP-INIT-003", "second reason");
        let rows = ledger.finish(|r| r.id.starts_with("ACP-INIT-00"));
        assert_eq!(rows[0].outcome, Outcome::Fail("bad".into()));
        assert_eq!(rows[1].outcome, Outcome::Pass);
        assert_eq!(rows[2].outcome, Outcome::NotExercised("first reason".into()));
        let report = Report {
            subject: Subject::Agent,
            command: vec!["x".into()],
            peer: None,
            protocol_version: Some(1),
            results: rows,
            notes: vec![],
            stderr_tail: vec![],
        };
        assert_eq!(report.failed_ids(), ["ACP-INIT-001"]);
        assert!(!report.conformant());
        let text = report.render_text(false);
        assert!(text.contains("ACP-INIT-001  MUST    FAIL"), "{text}");
        assert_eq!(report.to_json()["summary"]["mustFailed"], 1);
    }
}
