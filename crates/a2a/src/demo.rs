//! The demo agent behind `agentproto serve`: it echoes text, and follows the a2a-tck's
//! `messageId`-prefix contract so the official conformance kit can drive it.
//!
//! What it does is data: `rules/a2a-demo.toml` (the card, and an ordered list of steps
//! per prefix, documented there), generated into `crate::generated::demo`; this module
//! only runs the steps over the [`TaskUpdater`] and builds the card for a server's URLs.
//! The longest known prefix of a message id picks its steps. One prefix is ours, for
//! tests that need a turn that streams slowly: `agentproto-ticks` moves to WORKING, then
//! appends one chunk (`"tick 1"`, `"tick 2"`, …) to one artifact after each delay, as
//! many as the message's text says (10 unless it is a number; at most [`MAX_TICKS`]),
//! then completes; a cancel stops it between two ticks. Anything else is echoed back in
//! a completed task.

use std::time::Duration;

use crate::errors::A2aError;
use crate::executor::{AgentExecutor, Chunk, RequestContext, TaskUpdater};
use crate::generated::demo::{self as table, DemoPart, Op, PartKind, Step};
use crate::v1::{AgentCard, AgentSkill, Artifact, Part, PartContent, RawJson};

/// How long a `wait` of one delay lasts unless the agent says (the TCK's streaming
/// timeout is 2 s).
const DELAY: Duration = Duration::from_secs(2);

/// The most ticks an `agentproto-ticks` turn writes.
pub const MAX_TICKS: u64 = table::MAX_TICKS;

/// The prefix whose steps a message id selects (`None`: the fallback, an echo).
pub fn scenario(message_id: &str) -> Option<&'static str> {
    table::SCENARIOS.iter().find(|(p, _)| message_id.starts_with(p)).map(|(p, _)| *p)
}

fn steps(message_id: &str) -> &'static [Step] {
    table::SCENARIOS.iter().find(|(p, _)| message_id.starts_with(p)).map_or(table::FALLBACK, |(_, s)| *s)
}

/// The demo agent.
#[derive(Debug, Clone, Default)]
pub struct DemoAgent {
    /// Scales the waits of the delayed scenarios (tests use a shorter delay).
    pub delay: Option<Duration>,
    /// How long a plain echo stays WORKING before it completes (0 by default; the
    /// a2a-tck revisions that predate the prefix contract poll for WORKING).
    pub echo_delay: Duration,
}

fn text(s: &str) -> Part {
    Part::new(PartContent::Text(s.into()))
}

fn artifact(parts: Vec<Part>) -> Artifact {
    Artifact::new(uuid::Uuid::new_v4().to_string(), parts)
}

fn part(spec: &DemoPart) -> Result<Part, A2aError> {
    let content = match spec.kind {
        PartKind::Text => PartContent::Text(spec.value.into()),
        PartKind::Raw => PartContent::Raw(spec.value.as_bytes().to_vec().into()),
        PartKind::Url => PartContent::Url(spec.value.into()),
        PartKind::Data => PartContent::Data(
            RawJson::from_text(spec.value)
                .map_err(|e| A2aError::new(crate::errors::ErrorKind::Internal).with_message(e.to_string()))?,
        ),
    };
    let mut p = Part::new(content);
    if let Some(media_type) = spec.media_type {
        p.media_type = media_type.into();
    }
    if let Some(filename) = spec.filename {
        p.filename = filename.into();
    }
    Ok(p)
}

/// Waits `delay`; `false` when a cancel came first.
async fn wait(cx: &RequestContext, delay: Duration) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(delay) => true,
        _ = cx.cancelled.cancelled() => false,
    }
}

impl AgentExecutor for DemoAgent {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        for step in steps(&cx.message.message_id) {
            if !self.run(step, &cx, &task).await? {
                break;
            }
        }
        Ok(())
    }
}

impl DemoAgent {
    /// Runs one step; `Ok(false)` when a cancel ended the turn.
    async fn run(&self, step: &Step, cx: &RequestContext, task: &TaskUpdater) -> Result<bool, A2aError> {
        let delay = self.delay.unwrap_or(DELAY);
        let message = step.text.map(|s| task.text(s));
        match step.op {
            Op::Working => task.working(None).await?,
            Op::Wait => return Ok(wait(cx, delay * step.delays).await),
            Op::Artifact => {
                let parts = step.parts.iter().map(part).collect::<Result<Vec<_>, _>>()?;
                task.artifact(artifact(parts)).await?;
            }
            Op::Chunks => {
                let id = uuid::Uuid::new_v4().to_string();
                for (i, piece) in step.parts.iter().enumerate() {
                    let mut chunk = artifact(vec![part(piece)?]);
                    chunk.artifact_id = id.clone();
                    task.artifact_chunk(chunk, Chunk::nth(i, step.parts.len())).await?;
                }
            }
            Op::Complete => task.complete(message).await?,
            Op::Reject => task.reject(message).await?,
            Op::InputRequired => task.input_required(message).await?,
            Op::Reply => task.reply(message.unwrap_or_else(|| task.text(""))).await?,
            Op::Ticks => ticks(cx, task, delay).await?,
            Op::Echo => {
                // The echo agent: a follow-up to an input-required task completes it.
                let said = cx.text();
                task.working(None).await?;
                if !self.echo_delay.is_zero() && !wait(cx, self.echo_delay).await {
                    return Ok(false);
                }
                // The artifact shares the caller's text (no copy of a large message).
                task.artifact(artifact(vec![Part::new(PartContent::Text(said.clone()))])).await?;
                task.complete(Some(task.text(format!("echo: {said}")))).await?;
            }
        }
        Ok(true)
    }
}

/// The `agentproto-ticks` scenario (see the module documentation).
async fn ticks(cx: &RequestContext, task: &TaskUpdater, delay: Duration) -> Result<(), A2aError> {
    let count = cx.text().trim().parse::<u64>().unwrap_or(10).min(MAX_TICKS);
    task.working(None).await?;
    let id = uuid::Uuid::new_v4().to_string();
    for tick in 1..=count {
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = cx.cancelled.cancelled() => return Ok(()),
        }
        let mut chunk = artifact(vec![text(&format!("tick {tick}"))]);
        chunk.artifact_id = id.clone();
        let index = usize::try_from(tick - 1).unwrap_or(usize::MAX);
        task.artifact_chunk(chunk, Chunk::nth(index, usize::try_from(count).unwrap_or(usize::MAX))).await?;
    }
    task.complete(None).await
}

/// The demo agent's card for a server at `base` (e.g. `http://127.0.0.1:8080`): the
/// JSON-RPC binding at `/` and HTTP+JSON at `/a2a/rest`, both A2A 1.0.
pub fn card(base: &str) -> AgentCard {
    card_with_rest_prefix(base, "/a2a/rest")
}

/// [`card`] with the HTTP+JSON binding under another prefix (`""`: the root).
pub fn card_with_rest_prefix(base: &str, rest_prefix: &str) -> AgentCard {
    card_with_bindings(base, rest_prefix, None)
}

/// [`card_with_rest_prefix`], also declaring the gRPC binding at `grpc` (`host:port`)
/// when given, after the other two.
pub fn card_with_bindings(base: &str, rest_prefix: &str, grpc: Option<&str>) -> AgentCard {
    let base = base.trim_end_matches('/');
    let (id, name, description) = table::SKILL;
    let mut skill =
        AgentSkill::new(id, name, description, table::SKILL_TAGS.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>());
    skill.examples = table::SKILL_EXAMPLES.iter().map(|t| (*t).to_owned()).collect();
    let mut card = AgentCard::builder(table::CARD_NAME, table::CARD_DESCRIPTION, env!("CARGO_PKG_VERSION"))
        .jsonrpc_interface(format!("{base}/"))
        .http_json_interface(format!("{base}{}", rest_prefix.trim_end_matches('/')));
    if let Some(grpc) = grpc {
        card = card.grpc_interface(grpc);
    }
    if table::CARD_STREAMING {
        card = card.streaming();
    }
    if table::CARD_PUSH_NOTIFICATIONS {
        card = card.push_notifications();
    }
    card.input_modes(table::CARD_INPUT_MODES.iter().copied())
        .output_modes(table::CARD_OUTPUT_MODES.iter().copied())
        .skill(skill)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_wins() {
        assert_eq!(scenario("tck-artifact-file-url-0a1b2c3d"), Some("tck-artifact-file-url"));
        assert_eq!(scenario("tck-artifact-file-0a1b2c3d"), Some("tck-artifact-file"));
        assert_eq!(scenario("tck-stream-artifact-chunked-x"), Some("tck-stream-artifact-chunked"));
        assert_eq!(scenario("hello"), None);
        assert_eq!(scenario("agentproto-ticks-1"), Some("agentproto-ticks"));
    }
}
