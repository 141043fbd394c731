//! Terminals, both sides: the agent's [`TerminalHandle`] on a command it runs
//! through the client, and [`Terminals`], a ready-made client implementation of
//! the five `terminal/*` requests.
//!
//! # Agent side
//!
//! An agent whose client advertised `terminal: true` asks it to run commands.
//! [`TerminalHandle::create`] sends `terminal/create` and wraps the id it gets
//! back, so the other four requests need no ids ([`TerminalHandle::output`],
//! [`TerminalHandle::wait_for_exit`], [`TerminalHandle::kill`],
//! [`TerminalHandle::release`]), and [`TerminalHandle::as_tool_call_content`]
//! embeds the terminal in a tool call.
//!
//! The agent must release every terminal it creates. Call
//! [`TerminalHandle::release`]; a handle dropped without it spawns the release
//! in the background (see [`TerminalHandle`]).
//!
//! ```no_run
//! use agentproto_acp::terminal::TerminalHandle;
//! use agentproto_acp::v1::*;
//!
//! async fn run_tests(cx: &AgentContext, session: SessionId) -> Result<String, AcpError> {
//!     let mut request = CreateTerminalRequest::new(session, "cargo");
//!     request.args = Some(vec!["test".to_owned()]);
//!     let terminal = TerminalHandle::create(cx.peer(), request).await?;
//!     terminal.wait_for_exit().await?;
//!     let output = terminal.output().await?;
//!     terminal.release().await?;
//!     Ok(output.output)
//! }
//! ```
//!
//! # Client side
//!
//! [`Terminals`] runs each command as a child process (no shell, no pseudo
//! terminal): the `args` are passed as they are, the `env` entries are added to
//! the client's own environment, stdin is the null device, and stdout and stderr go
//! into one output buffer in the order they are read. Each command runs in a
//! process group of its own, which ends with it: what a command leaves running in
//! the background is killed when it exits, and `terminal/kill`, `terminal/release`
//! and dropping the `Terminals` kill the whole group. A client forwards the five
//! requests to it:
//!
//! ```no_run
//! use agentproto_acp::terminal::Terminals;
//! use agentproto_acp::v1::*;
//!
//! struct Editor {
//!     terminals: Terminals,
//! }
//!
//! impl Client for Editor {
//!     async fn create_terminal(
//!         &self,
//!         _cx: ClientContext,
//!         params: CreateTerminalRequest,
//!     ) -> Result<CreateTerminalResponse, ErrorObject> {
//!         self.terminals.create(&params).await
//!     }
//!     // … terminal_output, wait_for_terminal_exit, kill_terminal, release_terminal alike.
//! #   async fn request_permission(&self, _: ClientContext, _: RequestPermissionRequest)
//! #       -> Result<RequestPermissionResponse, ErrorObject> { unimplemented!() }
//! #   async fn session_update(&self, _: ClientContext, _: SessionNotification) {}
//! }
//! ```
//!
//! Output is kept up to the request's `outputByteLimit` (default
//! [`DEFAULT_OUTPUT_LIMIT`], and never more than
//! [`Terminals::with_max_output_limit`]). Past the limit the oldest bytes are
//! dropped, the cut moved forward to the next character boundary, and
//! `truncated` reported. Output is decoded as UTF-8 when it is read; invalid bytes
//! become U+FFFD, and a character whose last bytes have not been written yet is
//! held back while the command runs.
//!
//! A terminal belongs to the session that created it. Errors map to wire codes as
//! follows:
//!
//! | situation | code | `data` |
//! |---|---|---|
//! | unknown or released terminal id, or another session's terminal | -32002 | `{"terminalId": …}` |
//! | empty command, a NUL byte in `command`/`args`/`env`, a bad variable name | -32602 | `{"path": "$.params…", "expected": …, "found": …}` |
//! | `cwd` not absolute, outside the roots, missing, not a directory | -32602 | `{"path": "$.params.cwd", …}` |
//! | the command cannot be started | -32603 | none; the message names the command |
//!
//! [`Terminals::with_roots`] only confines the working directory. It is not a
//! sandbox: the command itself can reach whatever the client process can.

use crate::agent::ClientConnection;
use crate::role::AcpError;
use crate::v1::{self, V1};

mod output;
mod terminals;
#[cfg(all(test, unix))]
mod tests;

pub use terminals::{Terminals, DEFAULT_MAX_OUTPUT_LIMIT, DEFAULT_OUTPUT_LIMIT};

// ---------------------------------------------------------------------------
// Agent side
// ---------------------------------------------------------------------------

/// A terminal the agent created on the client, by id, together with the
/// connection to reach it.
///
/// The calls go through the connection the handle was created with, so inside a
/// prompt turn they end with [`AcpError::Cancelled`] when the turn is cancelled.
/// [`TerminalHandle::release`] does not: it is sent even after a cancellation,
/// since the agent must release what it created.
///
/// **Dropped without `release`:** the handle spawns `terminal/release` on the
/// current tokio runtime and does not wait for the answer, which is ignored.
/// Outside a runtime (or while it shuts down) nothing is sent and the terminal
/// stays with the client until the connection ends. Prefer calling
/// [`TerminalHandle::release`], which reports failures.
#[derive(Debug)]
pub struct TerminalHandle {
    client: ClientConnection<V1>,
    session_id: v1::SessionId,
    terminal_id: v1::TerminalId,
    released: bool,
}

impl TerminalHandle {
    /// Sends `terminal/create` and wraps the new terminal. The client starts the
    /// command and answers at once; it does not wait for the command to finish.
    pub async fn create(
        client: &ClientConnection<V1>,
        request: v1::CreateTerminalRequest,
    ) -> Result<TerminalHandle, AcpError> {
        let session_id = request.session_id.clone();
        let response = client.create_terminal(request).await?;
        Ok(TerminalHandle { client: client.clone(), session_id, terminal_id: response.terminal_id, released: false })
    }

    /// The terminal's id, as the client assigned it.
    pub fn id(&self) -> &v1::TerminalId {
        &self.terminal_id
    }

    /// The session the terminal belongs to.
    pub fn session_id(&self) -> &v1::SessionId {
        &self.session_id
    }

    /// The tool-call content item `{"type":"terminal","terminalId":…}` that shows
    /// this terminal's live output in a tool call. Clients keep showing it after
    /// the terminal is released.
    pub fn as_tool_call_content(&self) -> v1::ToolCallContent {
        v1::ToolCallContent::Terminal(v1::Terminal::new(self.terminal_id.clone()))
    }

    /// Sends `terminal/output`: the output so far, whether it was truncated, and
    /// the exit status once the command has exited.
    pub async fn output(&self) -> Result<v1::TerminalOutputResponse, AcpError> {
        self.client.terminal_output(v1::TerminalOutputRequest::new(self.session_id.clone(), self.id().clone())).await
    }

    /// Sends `terminal/wait_for_exit`, which the client answers once the command has exited.
    pub async fn wait_for_exit(&self) -> Result<v1::WaitForTerminalExitResponse, AcpError> {
        let request = v1::WaitForTerminalExitRequest::new(self.session_id.clone(), self.id().clone());
        self.client.wait_for_terminal_exit(request).await
    }

    /// Sends `terminal/kill`: the command is stopped, and the terminal stays valid
    /// (its output can still be read; it must still be released).
    pub async fn kill(&self) -> Result<v1::KillTerminalResponse, AcpError> {
        self.client.kill_terminal(v1::KillTerminalRequest::new(self.session_id.clone(), self.id().clone())).await
    }

    /// Sends `terminal/release`: the client kills the command if it still runs and
    /// forgets the terminal. Sent even when the prompt turn has been cancelled.
    pub async fn release(mut self) -> Result<v1::ReleaseTerminalResponse, AcpError> {
        let client = ClientConnection { shared: self.client.shared.clone(), turn: None };
        let result = client.release_terminal(self.release_request()).await;
        self.released = true;
        result
    }

    fn release_request(&self) -> v1::ReleaseTerminalRequest {
        v1::ReleaseTerminalRequest::new(self.session_id.clone(), self.terminal_id.clone())
    }
}

impl Drop for TerminalHandle {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        // Not tied to the prompt turn: a cancelled turn must still release.
        let client = ClientConnection { shared: self.client.shared.clone(), turn: None };
        let request = self.release_request();
        runtime.spawn(async move {
            let _ = client.release_terminal(request).await;
        });
    }
}
