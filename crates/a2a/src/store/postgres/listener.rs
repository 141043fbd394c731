//! The `LISTEN` side of the store's notices: one connection per server process, outside
//! the pool, that listens on [`NOTIFY_CHANNEL`] (a commit appended events) and
//! [`CONTROL_CHANNEL`] (messages between replicas), and hands what arrives to a
//! [`NoticeSink`].
//!
//! **Reconnection.** When the connection drops (PostgreSQL restarted, a network cut, a
//! backend terminated by an administrator) or stops answering the periodic ping, the
//! listener reports it in its [`ListenStatus`], logs a warning and connects again,
//! waiting [`ListenOptions::min_backoff`] after the first failed attempt and twice as long
//! after each further one, up to [`ListenOptions::max_backoff`]. Every time it is
//! listening again (the first time included) it calls [`NoticeSink::listening`]: notices
//! sent while it was not listening are lost for good, so the sink must treat that call
//! as "anything may have changed" (the server's bus makes every live subscriber read
//! the log again).
//!
//! **Payloads.** An events notice is the JSON a commit transaction sends: `{"tenant","id",
//! "last_seq"}` for one task, or an array of those for a batch of commits to several
//! tasks; each task is reported to [`NoticeSink::events_written`]. An entry that names no
//! task (a key too long for a payload), or a payload that does not parse, is reported with
//! no key, so the sink wakes everything rather than miss a task. Control payloads are
//! passed on as they are.
//!
//! The connection is opened without TLS, from the connection string given, with
//! `application_name` `agentproto-a2a-listen` unless the string sets one.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls, Notification};
use tokio_util::sync::CancellationToken;

use super::commit::MAX_PAYLOAD;
use super::{backend, pg, PostgresStore, NOTIFY_CHANNEL};
use crate::store::{BoxFuture, StoreError, TaskKey};

/// The channel replicas send each other messages on (see `crate::server`'s replica
/// module for what they say).
pub const CONTROL_CHANNEL: &str = "agentproto_a2a_control";

/// The `application_name` of the listening connection, unless the connection string
/// names one.
pub const APPLICATION_NAME: &str = "agentproto-a2a-listen";

/// Where a [`PgListener`] delivers what it hears. Called on the listener's task: every
/// method must return at once (queue, spawn, or drop), never wait.
pub trait NoticeSink: Send + Sync + 'static {
    /// A commit appended events to the task `key` (`None`: to some task, unknown which),
    /// whose log now ends at `last_seq`.
    fn events_written(&self, key: Option<TaskKey>, last_seq: u64);
    /// A message on [`CONTROL_CHANNEL`], as sent.
    fn control(&self, payload: &str);
    /// The listener is listening (again): notices sent before this call may be lost. Called
    /// before [`ListenStatus::connected`] turns true.
    fn listening(&self);
}

/// How a [`PgListener`] keeps its connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenOptions {
    /// The wait after the first failed connection attempt of a series.
    pub min_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
    /// How often the connection is checked with an empty query while nothing else
    /// happens on it (a half-open TCP connection never reports an error by itself).
    pub ping_every: Duration,
    /// How long connecting (and `LISTEN`), or a ping, may take before the connection is
    /// given up and opened again.
    pub timeout: Duration,
}

impl Default for ListenOptions {
    /// Backoff from 100 ms to 2 s, a ping every 10 s, 5 s for a connection or a ping.
    fn default() -> Self {
        ListenOptions {
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            ping_every: Duration::from_secs(10),
            timeout: Duration::from_secs(5),
        }
    }
}

/// Where a listener stands, as a [`watch`] value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListenStatus {
    /// Listening now.
    pub connected: bool,
    /// How many times a connection was opened and listening (1 after the first).
    pub connections: u64,
    /// Why the last connection ended or the last attempt failed.
    pub last_error: Option<String>,
}

/// The listening connection of one server process (see the module documentation).
pub struct PgListener {
    config: Config,
    options: ListenOptions,
    status: watch::Sender<ListenStatus>,
    /// A connection opened ahead of [`PgListener::run`] by [`PgListener::connect`].
    live: Option<Live>,
}

impl std::fmt::Debug for PgListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgListener")
            .field("options", &self.options)
            .field("status", &*self.status.borrow())
            .finish_non_exhaustive()
    }
}

/// What the connection's driver task passes on.
enum Incoming {
    Notice(Notification),
    /// The connection ended, with the driver's error if there was one.
    Closed(Option<String>),
}

/// One open, listening connection; dropping it closes the connection.
struct Live {
    client: Client,
    incoming: mpsc::UnboundedReceiver<Incoming>,
    driver: JoinHandle<()>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Why serving one connection stopped.
enum Ended {
    Stopped,
    Lost(String),
}

impl PgListener {
    /// A listener on the database `config` names (a `postgresql://` URL or a
    /// `key=value` string); nothing is opened until [`PgListener::connect`] or
    /// [`PgListener::run`].
    pub fn new(config: &str, options: ListenOptions) -> Result<Self, StoreError> {
        let mut config: Config = config.parse().map_err(|e| backend("read the connection string", e))?;
        if config.get_application_name().is_none() {
            config.application_name(APPLICATION_NAME);
        }
        Ok(PgListener { config, options, status: watch::Sender::new(ListenStatus::default()), live: None })
    }

    /// Opens the connection and starts listening now, so that a server reports an
    /// unreachable database when it starts rather than in its log.
    pub async fn connect(&mut self) -> Result<(), StoreError> {
        let live = self.open().await.map_err(|error| backend("listen", error))?;
        self.live = Some(live);
        Ok(())
    }

    /// The listener's status, updated as it connects and loses connections.
    pub fn status(&self) -> watch::Receiver<ListenStatus> {
        self.status.subscribe()
    }

    /// Listens until `stop` fires, reconnecting as often as it takes.
    pub async fn run(mut self, sink: Arc<dyn NoticeSink>, stop: CancellationToken) {
        let mut backoff = self.options.min_backoff;
        loop {
            let live = match self.live.take() {
                Some(live) => live,
                None => {
                    let attempt = tokio::select! {
                        () = stop.cancelled() => return,
                        attempt = self.open() => attempt,
                    };
                    match attempt {
                        Ok(live) => live,
                        Err(error) => {
                            tracing::warn!(%error, retry_in = ?backoff, "the event bus cannot listen on PostgreSQL");
                            self.status.send_modify(|status| status.last_error = Some(error));
                            tokio::select! {
                                () = stop.cancelled() => return,
                                () = tokio::time::sleep(backoff) => {}
                            }
                            backoff = (backoff * 2).min(self.options.max_backoff.max(self.options.min_backoff));
                            continue;
                        }
                    }
                }
            };
            backoff = self.options.min_backoff;
            // The sink first: whoever sees the status say connected may rely on the
            // wake-up having happened.
            sink.listening();
            let reconnected = self.status.borrow().connections > 0;
            self.status.send_modify(|status| {
                status.connected = true;
                status.connections += 1;
            });
            if reconnected {
                tracing::info!("the event bus listens on PostgreSQL again");
            }
            match self.serve(live, &*sink, &stop).await {
                Ended::Stopped => return,
                Ended::Lost(error) => {
                    tracing::warn!(%error, "the event bus lost its PostgreSQL connection; reconnecting");
                    self.status.send_modify(|status| {
                        status.connected = false;
                        status.last_error = Some(error);
                    });
                }
            }
        }
    }

    /// Connects, starts the driver task and `LISTEN`s on both channels, within the
    /// options' timeout.
    async fn open(&self) -> Result<Live, String> {
        let limit = self.options.timeout;
        let opening = async {
            let (client, mut connection) = self.config.connect(NoTls).await.map_err(|e| pg_text("connect", &e))?;
            let (sender, incoming) = mpsc::unbounded_channel();
            let driver = tokio::spawn(async move {
                let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
                let closed = loop {
                    match messages.next().await {
                        Some(Ok(AsyncMessage::Notification(notice))) => {
                            if sender.send(Incoming::Notice(notice)).is_err() {
                                return;
                            }
                        }
                        // Server notices (warnings) say nothing to a listener.
                        Some(Ok(_)) => {}
                        Some(Err(error)) => break Some(pg_text("connection", &error)),
                        None => break None,
                    }
                };
                let _ = sender.send(Incoming::Closed(closed));
            });
            let live = Live { client, incoming, driver };
            live.client
                .batch_execute(&format!("LISTEN {NOTIFY_CHANNEL}; LISTEN {CONTROL_CHANNEL}"))
                .await
                .map_err(|e| pg_text("listen", &e))?;
            Ok(live)
        };
        tokio::time::timeout(limit, opening).await.unwrap_or_else(|_| Err(format!("no connection within {limit:?}")))
    }

    /// Passes notices on until the connection is lost or `stop` fires.
    async fn serve(&self, mut live: Live, sink: &dyn NoticeSink, stop: &CancellationToken) -> Ended {
        let every = self.options.ping_every.max(Duration::from_millis(10));
        let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return Ended::Stopped,
                incoming = live.incoming.recv() => match incoming {
                    Some(Incoming::Notice(notice)) => dispatch(&notice, sink),
                    Some(Incoming::Closed(error)) => {
                        return Ended::Lost(error.unwrap_or_else(|| "the server closed the connection".into()))
                    }
                    None => return Ended::Lost("the connection's task ended".into()),
                },
                _ = ping.tick() => {
                    match tokio::time::timeout(self.options.timeout, live.client.simple_query("")).await {
                        Ok(Ok(_)) => {}
                        Ok(Err(error)) => return Ended::Lost(pg_text("ping", &error)),
                        Err(_) => return Ended::Lost(format!("no answer to a ping within {:?}", self.options.timeout)),
                    }
                }
            }
        }
    }
}

/// A driver error as one line: the server's message and SQLSTATE when there is one,
/// else the driver's words and their cause (the driver's own `Display` says only "db
/// error" or "error connecting to server").
fn pg_text(context: &str, error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{context}: {} (SQLSTATE {})", db.message(), db.code().code());
    }
    match std::error::Error::source(error) {
        Some(cause) => format!("{context}: {error}: {cause}"),
        None => format!("{context}: {error}"),
    }
}

fn dispatch(notice: &Notification, sink: &dyn NoticeSink) {
    match notice.channel() {
        NOTIFY_CHANNEL => match parse_events_notice(notice.payload()) {
            Some(entries) => {
                for (key, last_seq) in entries {
                    sink.events_written(key, last_seq);
                }
            }
            None => sink.events_written(None, u64::MAX),
        },
        CONTROL_CHANNEL => sink.control(notice.payload()),
        _ => {}
    }
}

/// An events notice: each task (`None` when an entry names none) and its last sequence
/// number; `None` for a payload that is not one (an empty array included).
pub(crate) fn parse_events_notice(payload: &str) -> Option<Vec<(Option<TaskKey>, u64)>> {
    let value: serde_json::Value = serde_json::from_str(payload).ok()?;
    match value {
        serde_json::Value::Array(entries) if !entries.is_empty() => entries.iter().map(events_entry).collect(),
        serde_json::Value::Object(_) => Some(vec![events_entry(&value)?]),
        _ => None,
    }
}

/// One task's entry of an events notice.
fn events_entry(value: &serde_json::Value) -> Option<(Option<TaskKey>, u64)> {
    let last_seq = value.get("last_seq")?.as_u64()?;
    let key = match (value.get("tenant")?.as_str(), value.get("id")?.as_str()) {
        (Some(tenant), Some(id)) => Some(TaskKey::new(tenant, id)),
        _ => None,
    };
    Some((key, last_seq))
}

impl PostgresStore {
    /// Sends `payload` on [`CONTROL_CHANNEL`] at once (outside any transaction), to every
    /// listening server process of this database.
    pub async fn notify_control(&self, payload: &str) -> Result<(), StoreError> {
        if payload.len() > MAX_PAYLOAD {
            return Err(backend("notify", format_args!("a payload of {} bytes is too long", payload.len())));
        }
        let client = self.inner.client().await?;
        let notify = client.prepare_cached("SELECT pg_notify($1, $2)").await.map_err(|e| pg("prepare notify", e))?;
        client.execute(&notify, &[&CONTROL_CHANNEL, &payload]).await.map_err(|e| pg("notify", e))?;
        Ok(())
    }
}

/// Where replicas send each other messages: [`CONTROL_CHANNEL`] of this store's
/// database.
impl crate::store::ControlChannel for PostgresStore {
    fn send(&self, payload: String) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move { self.notify_control(&payload).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_notices_name_a_task_or_none() {
        assert_eq!(
            parse_events_notice(r#"{"tenant":"t","id":"a","last_seq":7}"#),
            Some(vec![(Some(TaskKey::new("t", "a")), 7)])
        );
        assert_eq!(parse_events_notice(r#"{"tenant":null,"id":null,"last_seq":3}"#), Some(vec![(None, 3)]));
        assert_eq!(
            parse_events_notice(r#"[{"tenant":"t","id":"a","last_seq":7},{"tenant":null,"id":null,"last_seq":2}]"#),
            Some(vec![(Some(TaskKey::new("t", "a")), 7), (None, 2)])
        );
        for bad in [
            "",
            "[]",
            "7",
            r#"{"tenant":"t","id":"a"}"#,
            r#"{"tenant":"t","id":"a","last_seq":-1}"#,
            r#"[{"tenant":"t","id":"a","last_seq":1},{"tenant":"t","id":"b"}]"#,
        ] {
            assert_eq!(parse_events_notice(bad), None, "{bad:?}");
        }
        // What a commit transaction sends reads back, for one task and for several.
        let (a, b) = (TaskKey::new("tenant", "id"), TaskKey::new("", "other"));
        assert_eq!(parse_events_notice(&super::super::commit::notice(&a, 42)), Some(vec![(Some(a.clone()), 42)]));
        let batch = super::super::commit::notices([(&a, 42), (&b, 1)].into_iter());
        assert_eq!(parse_events_notice(&batch[0]), Some(vec![(Some(a), 42), (Some(b), 1)]));
    }
}
