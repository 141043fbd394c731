//! The client role: connect a `Client` implementation to an agent (usually a
//! child process it spawns), and the [`AgentConnection`] handle that calls the
//! agent (`initialize`, `new_session`, `prompt`, `cancel`, …).
//!
//! The connection enforces on the client side: calls before `initialize` has
//! completed, calls the agent did not advertise and calls for a session whose
//! opening answer did not announce what they need (`session/set_mode` without
//! `modes`: [`AcpError::NotAnnounced`]) fail locally and send nothing;
//! the agent's answered protocol version must be the one this side speaks;
//! requests from the agent must be for capabilities this side advertised and for
//! known sessions; and sending `session/cancel` answers every pending permission
//! request of that session with the `cancelled` outcome.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use agentproto_codec::RawJson;
use agentproto_jsonrpc::{
    Connection, ConnectionError, ConnectionOptions, ErrorObject, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, RequestContext,
};
use agentproto_process::Group;
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, ChildStdin, Command};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::decode_notification;
use crate::endpoint::{raw_const, Role, Shared};
use crate::role::{AcpError, AcpEvent, AcpOptions, Dispatch, Protocol};
use crate::Handshake;
use crate::{DispatchError, NotificationMethod, Payload, RequestMethod};

/// The client's handle to its agent. Typed calls (`initialize`, `new_session`,
/// `prompt`, …) and notifications (`cancel`, …) are generated per surface as
/// inherent methods, e.g. on `AgentConnection<v1::V1>`.
pub struct AgentConnection<S: Protocol> {
    pub(crate) shared: Arc<Shared<S>>,
    /// See [`AgentConnection::with_cancellation`].
    pub(crate) cancel: Option<CancellationToken>,
}

impl<S: Protocol> Clone for AgentConnection<S> {
    fn clone(&self) -> Self {
        AgentConnection { shared: self.shared.clone(), cancel: self.cancel.clone() }
    }
}

impl<S: Protocol> fmt::Debug for AgentConnection<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentConnection").field("peer", &self.shared.peer).finish()
    }
}

impl<S: Protocol> AgentConnection<S> {
    /// A handle whose calls are cancelled with `$/cancel_request` when `token`
    /// fires, and then still wait for the agent's answer: a partial result or
    /// `-32800` ([`AcpError::Rpc`]). Dropping a call's future instead cancels it
    /// and abandons the answer.
    pub fn with_cancellation(&self, token: CancellationToken) -> AgentConnection<S> {
        AgentConnection { shared: self.shared.clone(), cancel: Some(token) }
    }

    #[doc(hidden)]
    pub async fn request<M: RequestMethod<Surface = S>>(&self, params: M::Params) -> Result<M::Result, AcpError> {
        self.shared.request::<M>(params, None, self.cancel.as_ref()).await
    }

    #[doc(hidden)]
    pub async fn notify<M: NotificationMethod>(&self, params: M::Params) -> Result<(), AcpError> {
        self.shared.notify::<M>(params).await
    }

    /// Sends an extension request (its name must start with `_`) and returns the
    /// raw result. Dropping the future cancels the request with `$/cancel_request`.
    pub async fn ext_method(&self, method: &str, params: Option<RawJson>) -> Result<RawJson, AcpError> {
        self.shared.ext_request(method, params.map(RawJson::into_raw), self.cancel.as_ref()).await.map(RawJson::from)
    }

    /// Sends an extension notification (its name must start with `_`).
    pub async fn ext_notification(&self, method: &str, params: Option<RawJson>) -> Result<(), AcpError> {
        self.shared.ext_notify(method, params.map(RawJson::into_raw)).await
    }

    /// The protocol version negotiated by `initialize`, once it has completed.
    pub fn protocol_version(&self) -> Option<u16> {
        self.shared.negotiated().map(|n| n.version)
    }

    /// Both `initialize` messages, typed (`None` before `initialize` has completed):
    /// the agent's capabilities are in [`Handshake::agent`].
    pub fn handshake(&self) -> Option<Arc<Handshake<S>>> {
        self.shared.negotiated().map(|n| n.handshake)
    }

    /// Waits until everything sent so far has been written to the transport.
    pub async fn flush(&self) -> Result<(), AcpError> {
        self.shared.peer.flush().await.map_err(|error| AcpError::from_call("flush", error))
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.peer.is_closed()
    }
}

/// The JSON-RPC options for an ACP connection of surface `S` receiving
/// notifications `N`: `"id": null` as its rules say (v1 allows it, v2 does not),
/// `$/cancel_request` acted on only when its params decode as `N` decodes them
/// (as [`receive::classify`](crate::receive::classify) does), and the ACP
/// observer also sees the JSON-RPC events.
pub(crate) fn connection_options<S: Protocol, N: Payload>(options: &AcpOptions) -> ConnectionOptions {
    let mut connection = options.connection.clone().allow_null_id(S::RULES.null_request_id);
    if let Some(cancel) = connection.cancel_notification.as_mut() {
        if cancel.method == S::RULES.cancel_request && cancel.check.is_none() {
            cancel.check = Some(valid_cancel::<S, N>);
        }
    }
    if let (Some(observer), None) = (&options.observer, &connection.observer) {
        let observer = observer.clone();
        connection = connection.observer(move |event| observer(&AcpEvent::Connection(event.clone())));
    }
    connection
}

/// Whether `params` are valid params of the surface's cancel notification.
fn valid_cancel<S: Protocol, N: Payload>(params: Option<&RawValue>) -> bool {
    N::decode(S::RULES.cancel_request, params).is_ok()
}

/// Builds the client side of a connection over any byte streams. Run the
/// returned [`Connection`]; call the agent through the [`AgentConnection`].
pub fn connect<S, C>(
    client: C,
    input: impl AsyncRead + Send + Unpin + 'static,
    output: impl AsyncWrite + Send + Unpin + 'static,
    options: AcpOptions,
) -> (Connection, AgentConnection<S>)
where
    S: Protocol,
    C: Dispatch<S::AgentRequest, S::AgentNotification, AgentConnection<S>>,
{
    let runtime =
        Arc::new(ClientRuntime::<S, C> { client: Arc::new(client), shared: Arc::new(std::sync::OnceLock::new()) });
    let (connection, peer) =
        Connection::new(input, output, runtime.clone(), connection_options::<S, S::AgentNotification>(&options));
    let shared = Arc::new(Shared::new(peer, Role::Client, options));
    let _ = runtime.shared.set(shared.clone());
    (connection, AgentConnection { shared, cancel: None })
}

/// Spawns an agent command and connects `client` to it over the child's stdin
/// and stdout. The agent's stderr is passed through to this process's stderr.
/// Lines the agent prints on stdout that are not JSON are skipped and reported
/// ([`AcpEvent::Connection`] with `NonJsonLineSkipped`) instead of being answered.
///
/// The connection runs on a spawned task. Dropping the [`AgentProcess`] kills
/// the child and stops the connection; [`AgentProcess::close`] ends it gently.
///
/// The agent runs in a process group of its own, and both ways of ending it end
/// the whole group: an agent command is often a launcher (a Node or Python
/// shim) whose child is the real agent, and that child must not outlive the
/// session. (A terminal's Ctrl-C therefore reaches this process, not the agent.)
pub fn spawn<S, C>(
    mut command: Command,
    client: C,
    options: AcpOptions,
) -> io::Result<(AgentConnection<S>, AgentProcess)>
where
    S: Protocol,
    C: Dispatch<S::AgentRequest, S::AgentNotification, AgentConnection<S>>,
{
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).kill_on_drop(true);
    agentproto_process::isolate(command.as_std_mut());
    if options.die_with_parent {
        agentproto_process::die_with_parent(command.as_std_mut());
    }
    let mut child = command.spawn()?;
    let group = Group::new(child.id().ok_or_else(|| io::Error::other("the agent exited before it could be watched"))?);
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(io::Error::other("the child's stdin and stdout were not captured"));
    };
    let stdin = ClosableStdin(Arc::new(Mutex::new(Some(stdin))));
    let grace = options.exit_grace;
    let mut options = options;
    options.connection = options.connection.skip_non_json_lines(true);
    let (connection, agent) = connect::<S, C>(client, stdout, stdin.clone(), options);
    let run = tokio::spawn(connection.run());
    Ok((agent, AgentProcess { group, child, stdin, run: Some(run), grace }))
}

/// A spawned agent process. Dropping it kills the process and everything it
/// started in its process group (tokio reaps the agent) and stops the connection.
#[derive(Debug)]
pub struct AgentProcess {
    /// Declared before `child`, so that a drop ends the group while its leader
    /// is not reaped yet.
    group: Group,
    child: Child,
    stdin: ClosableStdin,
    run: Option<JoinHandle<Result<(), ConnectionError>>>,
    grace: std::time::Duration,
}

impl AgentProcess {
    /// The operating-system process id, while the child runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Ends the session the way ACP asks: closes the agent's stdin, waits up to
    /// [`AcpOptions::exit_grace`] for it to exit, then kills it; either way
    /// whatever is left of its process group is killed. Returns its exit status.
    pub async fn close(mut self) -> io::Result<ExitStatus> {
        self.stdin.close();
        let exited = tokio::time::timeout(self.grace, self.child.wait()).await;
        self.group.end();
        let status = match exited {
            Ok(status) => status?,
            Err(_) => {
                // In case the agent left the group (`setsid`): the group's end missed it.
                self.child.start_kill()?;
                self.child.wait().await?
            }
        };
        if let Some(run) = self.run.take() {
            // The child is gone, so its stdout is at end of file: the connection ends promptly.
            let _ = tokio::time::timeout(self.grace, run).await;
        }
        Ok(status)
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if let Some(run) = self.run.take() {
            run.abort();
        }
        // `self.group` ends the whole group as it drops; `kill_on_drop` makes
        // sure of the child, and tokio reaps it.
    }
}

/// The child's stdin, which [`AgentProcess::close`] can close while the
/// connection's writer still holds it (writes after that fail with `BrokenPipe`).
#[derive(Clone, Debug)]
struct ClosableStdin(Arc<Mutex<Option<ChildStdin>>>);

impl ClosableStdin {
    fn close(&self) {
        drop(self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take());
    }

    fn with<T>(&self, f: impl FnOnce(Pin<&mut ChildStdin>) -> Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        let mut guard = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match guard.as_mut() {
            Some(stdin) => f(Pin::new(stdin)),
            None => Poll::Ready(Err(io::Error::from(io::ErrorKind::BrokenPipe))),
        }
    }
}

impl AsyncWrite for ClosableStdin {
    fn poll_write(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.with(|stdin| stdin.poll_write(cx, buf))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        self.with(|stdin| stdin.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        let mut guard = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match guard.as_mut() {
            Some(stdin) => Pin::new(stdin).poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        }
    }
}

struct ClientRuntime<S: Protocol, C> {
    client: Arc<C>,
    shared: Arc<std::sync::OnceLock<Arc<Shared<S>>>>,
}

/// The answer to a permission request whose session this side cancelled.
const CANCELLED_OUTCOME: &str = r#"{"outcome":{"outcome":"cancelled"}}"#;

impl<S, C> Handler for ClientRuntime<S, C>
where
    S: Protocol,
    C: Dispatch<S::AgentRequest, S::AgentNotification, AgentConnection<S>>,
{
    fn request(
        &self,
        request: IncomingRequest,
        rpc: RequestContext,
    ) -> BoxFuture<'static, Result<Box<RawValue>, ErrorObject>> {
        let client = self.client.clone();
        let shared = self.shared.get().cloned();
        Box::pin(async move {
            let Some(shared) = shared else {
                return Err(ErrorObject::internal_error("internal error: connection not set up"));
            };
            let IncomingRequest { method, params, .. } = request;
            if let Some(error) = shared.refuse_before_ready(&method) {
                return Err(error);
            }
            let decoded = S::AgentRequest::decode(&method, params.as_deref())
                .map_err(|error: DispatchError| error.to_error_object(&method))?;
            shared.report_warnings(&method, decoded.warnings);
            let request = decoded.value;
            let session = request.session_id().map(str::to_owned);
            if let Some(error) = shared.check_incoming(&request) {
                return Err(error);
            }
            let token = rpc.cancellation_token().clone();
            match (method.as_str(), session) {
                ("session/request_permission", Some(session)) => {
                    let cancel = shared.session_cancel_token(&session);
                    let token = CancellationToken::new();
                    let linked = token.clone();
                    let request_token = rpc.cancellation_token().clone();
                    let cx = shared.context(AgentConnection { shared: shared.clone(), cancel: None }, Some(rpc), token);
                    tokio::select! {
                        biased;
                        result = client.dispatch_request(cx, request) => result.map(|answer| answer.result),
                        () = cancel.cancelled() => {
                            linked.cancel();
                            Ok(raw_const(CANCELLED_OUTCOME))
                        }
                        () = request_token.cancelled() => {
                            linked.cancel();
                            Err(ErrorObject::request_cancelled())
                        }
                    }
                }
                _ => {
                    let cx = shared.context(AgentConnection { shared: shared.clone(), cancel: None }, Some(rpc), token);
                    client.dispatch_request(cx, request).await.map(|answer| answer.result)
                }
            }
        })
    }

    fn notification(&self, notification: IncomingNotification, _: NotificationContext) -> BoxFuture<'static, ()> {
        let client = self.client.clone();
        let shared = self.shared.get().cloned();
        Box::pin(async move {
            let Some(shared) = shared else { return };
            let IncomingNotification { method, params, .. } = notification;
            let Some(notification) =
                decode_notification::<S, S::AgentNotification>(&shared, &method, params.as_deref())
            else {
                return;
            };
            if let Some(session) = notification.session_id() {
                if !shared.knows_session(session) {
                    // Still delivered: agents send updates before the session/new response.
                    shared.report(AcpEvent::UnknownSession { method: method.clone(), session_id: session.to_owned() });
                }
            }
            let cx = shared.context(
                AgentConnection { shared: shared.clone(), cancel: None },
                None,
                CancellationToken::new(),
            );
            client.dispatch_notification(cx, notification).await;
        })
    }
}
