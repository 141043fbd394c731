//! The demo agent behind `agentproto serve`: it echoes text, and follows the a2a-tck's
//! `messageId`-prefix contract so the official conformance kit can drive it.
//!
//! The TCK names its messages `tck-<scenario>-<run suffix>`; the agent picks the
//! behaviour of the longest known prefix. One more prefix is ours, for tests that need a
//! turn that streams slowly: `agentproto-ticks` moves to WORKING, then appends one chunk
//! (`"tick 1"`, `"tick 2"`, …) to one artifact after each delay, as many as the message's
//! text says (10 unless it is a number; at most [`MAX_TICKS`]), then completes; a cancel
//! stops it between two ticks. Anything else is echoed back in a completed task.

use std::time::Duration;

use crate::errors::A2aError;
use crate::executor::{AgentExecutor, Chunk, RequestContext, TaskUpdater};
use crate::v1::{AgentCard, AgentSkill, Artifact, Part, PartContent, RawJson};

/// How long `tck-delayed-complete` waits (the TCK's streaming timeout is 2 s).
const DELAY: Duration = Duration::from_secs(2);

/// The most ticks an `agentproto-ticks` turn writes.
pub const MAX_TICKS: u64 = 10_000;

/// Known prefixes, longest first so that a prefix never shadows a longer one.
const PREFIXES: &[&str] = &[
    "agentproto-ticks",
    "tck-stream-artifact-chunked",
    "tck-stream-artifact-text",
    "tck-stream-artifact-file",
    "tck-stream-ordering-001",
    "tck-artifact-file-url",
    "tck-delayed-complete",
    "tck-message-response",
    "tck-input-required",
    "tck-complete-task",
    "tck-artifact-text",
    "tck-artifact-file",
    "tck-artifact-data",
    "tck-reject-task",
    "tck-stream-001",
    "tck-stream-002",
    "tck-stream-003",
    "test-resubscribe-message-id",
];

/// The behaviour a message id selects.
pub fn scenario(message_id: &str) -> Option<&'static str> {
    PREFIXES.iter().copied().find(|p| message_id.starts_with(p))
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

fn file_part(content: PartContent) -> Part {
    let mut p = Part::new(content);
    p.media_type = "text/plain".into();
    p.filename = "output.txt".into();
    p
}

impl AgentExecutor for DemoAgent {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        let delay = self.delay.unwrap_or(DELAY);
        let done = |t: &TaskUpdater, s: &str| Some(t.text(s));
        match scenario(&cx.message.message_id) {
            Some("tck-complete-task") => task.complete(done(&task, "Hello from TCK")).await,
            Some("tck-delayed-complete") => {
                task.working(None).await?;
                tokio::select! {
                    _ = tokio::time::sleep(delay) => task.complete(done(&task, "Done after delay")).await,
                    _ = cx.cancelled.cancelled() => Ok(()),
                }
            }
            Some("tck-artifact-text") => {
                task.artifact(artifact(vec![text("Generated text content")])).await?;
                task.complete(None).await
            }
            Some("tck-artifact-file" | "tck-stream-artifact-file") => {
                task.artifact(artifact(vec![file_part(PartContent::Raw(b"tck".to_vec().into()))])).await?;
                task.complete(None).await
            }
            Some("tck-artifact-file-url") => {
                task.artifact(artifact(vec![file_part(PartContent::Url("https://example.com/output.txt".into()))]))
                    .await?;
                task.complete(None).await
            }
            Some("tck-artifact-data") => {
                let data = RawJson::from_text(r#"{"key":"value","count":42}"#)
                    .map_err(|e| A2aError::new(crate::errors::ErrorKind::Internal).with_message(e.to_string()))?;
                task.artifact(artifact(vec![Part::new(PartContent::Data(data))])).await?;
                task.complete(None).await
            }
            Some("tck-message-response") => task.reply(task.text("Direct message response")).await,
            Some("tck-input-required") => task.input_required(done(&task, "Please provide more input")).await,
            Some("tck-reject-task") => task.reject(done(&task, "rejected")).await,
            Some("tck-stream-001" | "tck-stream-003") => {
                let words = if cx.message.message_id.starts_with("tck-stream-001") {
                    "Stream hello from TCK"
                } else {
                    "Stream task lifecycle"
                };
                task.working(None).await?;
                task.artifact(artifact(vec![text(words)])).await?;
                task.complete(None).await
            }
            Some("tck-stream-artifact-text") => {
                task.working(None).await?;
                task.artifact(artifact(vec![text("Generated text content")])).await?;
                task.complete(None).await
            }
            Some("tck-stream-artifact-chunked") => {
                let a = artifact(vec![text("chunk-1 ")]);
                let id = a.artifact_id.clone();
                task.working(None).await?;
                task.artifact_chunk(a, Chunk::First).await?;
                let mut b = artifact(vec![text("chunk-2")]);
                b.artifact_id = id;
                task.artifact_chunk(b, Chunk::Last).await?;
                task.complete(None).await
            }
            Some("tck-stream-ordering-001") => {
                task.working(None).await?;
                task.artifact(artifact(vec![text("Ordered output")])).await?;
                task.complete(None).await
            }
            Some("test-resubscribe-message-id") => {
                task.working(None).await?;
                tokio::select! {
                    _ = tokio::time::sleep(delay * 2) => task.complete(None).await,
                    _ = cx.cancelled.cancelled() => Ok(()),
                }
            }
            Some("agentproto-ticks") => ticks(&cx, &task, delay).await,
            Some(_) => task.complete(None).await,
            None => {
                // The echo agent: a follow-up to an input-required task completes it.
                let said = cx.text();
                task.working(None).await?;
                if !self.echo_delay.is_zero() {
                    tokio::select! {
                        _ = tokio::time::sleep(self.echo_delay) => {}
                        _ = cx.cancelled.cancelled() => return Ok(()),
                    }
                }
                // The artifact shares the caller's text (no copy of a large message).
                task.artifact(artifact(vec![Part::new(PartContent::Text(said.clone()))])).await?;
                task.complete(done(&task, &format!("echo: {said}"))).await
            }
        }
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
    let mut skill = AgentSkill::new(
        "echo",
        "Echo",
        "Echoes text back; follows the a2a-tck messageId-prefix contract.",
        vec!["echo".to_owned(), "test".to_owned()],
    );
    skill.examples = vec!["hello".to_owned()];
    let mut card = AgentCard::builder(
        "agentproto demo agent",
        "A durable echo agent on agentproto (SQLite store, resumable streams, push outbox).",
        env!("CARGO_PKG_VERSION"),
    )
    .jsonrpc_interface(format!("{base}/"))
    .http_json_interface(format!("{base}{}", rest_prefix.trim_end_matches('/')));
    if let Some(grpc) = grpc {
        card = card.grpc_interface(grpc);
    }
    card.streaming()
        .push_notifications()
        .input_modes(["text/plain", "application/json"])
        .output_modes(["text/plain", "application/json"])
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
