//! The findings of one message, with its index and direction filled in.

use agentproto_acp::{Warning, WarningKind};

use crate::engine::Verdict;
use crate::finding::{Direction, Finding};
use crate::rules::{self, Rule};

/// Findings of one message, with its index and direction filled in.
pub(super) struct Report<'a> {
    pub(super) index: u64,
    pub(super) direction: Direction,
    pub(super) verdict: &'a mut Verdict,
}

impl Report<'_> {
    pub(super) fn add(
        &mut self,
        rule: &'static Rule,
        method: Option<&str>,
        session: Option<&str>,
        message: String,
    ) -> &mut Finding {
        let (index, direction) = (self.index, self.direction);
        self.add_for(index, direction, rule, method, session, message)
    }

    /// A finding about an earlier message, number `index`, that travelled `direction`.
    pub(super) fn add_for(
        &mut self,
        index: u64,
        direction: Direction,
        rule: &'static Rule,
        method: Option<&str>,
        session: Option<&str>,
        message: String,
    ) -> &mut Finding {
        let mut finding = Finding::new(rule, index, Some(direction), message).session(session);
        finding.method = method.map(str::to_owned);
        self.verdict.findings.push(finding);
        self.verdict.findings.last_mut().expect("just pushed")
    }

    pub(super) fn warnings(&mut self, method: &str, session: Option<&str>, warnings: &[Warning]) {
        for warning in warnings {
            let rule = match warning.kind {
                WarningKind::Salvaged => &rules::LENIENT_VALUE_DROPPED,
                WarningKind::UnknownVariant => &rules::UNKNOWN_VARIANT,
            };
            self.add(rule, Some(method), session, warning.message.clone()).path = Some(warning.path.clone());
        }
    }
}
