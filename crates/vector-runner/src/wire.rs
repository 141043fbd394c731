//! Both ends of the in-memory pipe between a runner and one of our roles.
//!
//! The runner's end is [`Wire`]: it writes raw NDJSON lines (or raw bytes) to our
//! side, reads the lines our side writes, and proves silence with the barrier
//! (`vectors/README.md`, "Silence"). The applications under test hold the other
//! half of the barrier, [`Barrier`]. Every wait is bounded by [`STEP_TIMEOUT`];
//! nothing sleeps.

use std::time::Duration;

use agentproto_acp::v1::ErrorObject;
use agentproto_acp::RawJson;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};
use tokio::sync::watch;

/// How long any single wait of a runner may take before its case or flow fails.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(5);

/// The method of the barrier behind a proof of silence (a notification and a request).
pub(crate) const BARRIER: &str = "_flow/barrier";

/// The runner's end of the pipe: raw lines both ways.
pub(crate) struct Wire {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
    barriers: u64,
}

impl Wire {
    pub(crate) fn new(stream: DuplexStream) -> Wire {
        let (read, write) = tokio::io::split(stream);
        Wire { lines: BufReader::new(read).lines(), write, barriers: 0 }
    }

    /// Writes `message` as one compact line.
    pub(crate) async fn send(&mut self, message: &Value) -> Result<(), String> {
        let mut line = serde_json::to_string(message).map_err(|e| e.to_string())?;
        line.push('\n');
        self.send_bytes(line.as_bytes()).await.map_err(|e| format!("{e} (sending {message})"))
    }

    /// Writes `bytes` exactly as they are.
    pub(crate) async fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        let write = async {
            self.write.write_all(bytes).await?;
            self.write.flush().await
        };
        match tokio::time::timeout(STEP_TIMEOUT, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("cannot write to our side: {e}")),
            Err(_) => Err(format!("writing to our side did not complete within {STEP_TIMEOUT:?}")),
        }
    }

    /// Ends the runner's output: our side reads end of file.
    pub(crate) async fn close(&mut self) -> Result<(), String> {
        match tokio::time::timeout(STEP_TIMEOUT, self.write.shutdown()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("cannot close the pipe: {e}")),
            Err(_) => Err(format!("closing the pipe did not complete within {STEP_TIMEOUT:?}")),
        }
    }

    /// The next line our side writes.
    pub(crate) async fn next_line(&mut self) -> Result<String, String> {
        match tokio::time::timeout(STEP_TIMEOUT, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => Ok(line),
            Ok(Ok(None)) => Err("our side closed its output".to_owned()),
            Ok(Err(e)) => Err(format!("reading our side failed: {e}")),
            Err(_) => Err(format!("nothing was written within {STEP_TIMEOUT:?}")),
        }
    }

    /// The next line our side writes, parsed.
    pub(crate) async fn next_message(&mut self) -> Result<(Value, String), String> {
        let line = self.next_line().await?;
        let value =
            serde_json::from_str(&line).map_err(|e| format!("our side wrote a line that is not JSON ({e}): {line}"))?;
        Ok((value, line))
    }

    /// Reads until our side closes its output; `Err` shows the first line it still wrote.
    pub(crate) async fn end_of_output(&mut self) -> Result<(), String> {
        match tokio::time::timeout(STEP_TIMEOUT, self.lines.next_line()).await {
            Ok(Ok(None)) => Ok(()),
            Ok(Ok(Some(line))) => Err(format!("expected no more output, but our side wrote: {line}")),
            Ok(Err(e)) => Err(format!("reading our side failed: {e}")),
            Err(_) => Err(format!("our side did not close its output within {STEP_TIMEOUT:?}")),
        }
    }

    /// Proves that our side writes nothing more in reaction to what it was sent:
    /// sends the barrier notification and request; the next line must answer the
    /// request (a result, or `-32600` before `initialize` has completed).
    pub(crate) async fn silence(&mut self) -> Result<(), String> {
        self.barriers += 1;
        let n = self.barriers;
        let id = format!("flow-barrier-{n}");
        self.send(&json!({"jsonrpc": "2.0", "method": BARRIER, "params": {"n": n}})).await?;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": BARRIER, "params": {"n": n}})).await?;
        let line = self.next_line().await.map_err(|e| format!("expected the answer to barrier {id}, but {e}"))?;
        let actual: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let answered = actual.get("id") == Some(&Value::String(id.clone()));
        let fine =
            actual.get("result").is_some() || actual.pointer("/error/code").and_then(Value::as_i64) == Some(-32600);
        match (answered, fine) {
            (true, true) => Ok(()),
            (true, false) => Err(format!("barrier {id} was answered with an error: {line}")),
            (false, _) => Err(format!("expected silence (up to barrier {id}), but our side wrote: {line}")),
        }
    }
}

/// The application's half of the barrier: the `_flow/barrier` request waits until
/// the notification with the same `n` has been handled (notifications are handled
/// one at a time, in order).
pub(crate) struct Barrier(watch::Sender<u64>);

impl Barrier {
    pub(crate) fn new() -> Barrier {
        Barrier(watch::channel(0).0)
    }

    fn number(payload: Option<&RawJson>) -> u64 {
        payload
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|p| p.get("n").and_then(Value::as_u64))
            .unwrap_or(0)
    }

    /// The barrier notification was handled.
    pub(crate) fn mark(&self, payload: Option<&RawJson>) {
        let n = Barrier::number(payload);
        self.0.send_modify(|seen| *seen = (*seen).max(n));
    }

    /// Answers the barrier request once its notification was handled.
    pub(crate) async fn wait(&self, payload: Option<&RawJson>) -> Result<RawJson, ErrorObject> {
        let n = Barrier::number(payload);
        let mut seen = self.0.subscribe();
        let handled = matches!(tokio::time::timeout(STEP_TIMEOUT, seen.wait_for(|seen| *seen >= n)).await, Ok(Ok(_)));
        if handled {
            raw(&json!({ "n": n }))
        } else {
            Err(ErrorObject::internal_error(format!("barrier notification {n} was not handled")))
        }
    }
}

/// A JSON value as a raw payload (for the answers of the applications).
pub(crate) fn raw(value: &Value) -> Result<RawJson, ErrorObject> {
    RawJson::from_text(&value.to_string()).map_err(|e| ErrorObject::internal_error(e.to_string()))
}

/// Decodes a value of a protocol type from JSON (for the fixed answers of the applications).
pub(crate) fn typed<T: for<'de> Deserialize<'de>>(value: &Value) -> Result<T, ErrorObject> {
    serde_json::from_str(&value.to_string()).map_err(|e| ErrorObject::internal_error(e.to_string()))
}
