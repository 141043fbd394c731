//! The push worker against a real HTTP receiver on loopback, plus the SSRF guard.
//!
//! Every wait is on an event (a request reaching the receiver, the worker's counters)
//! and bounded by a timeout; nothing sleeps to synchronise.
#![cfg(feature = "server")]

use std::collections::VecDeque;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agentproto_a2a::push::{
    classify, AddressClass, Cidr, PushOptions, PushStats, PushWorker, PushWorkerHandle, RetryPolicy, SsrfGuard,
};
use agentproto_a2a::store::memory::{MemoryOptions, MemoryStore};
use agentproto_a2a::store::{Commit, DeadLetter, LeaseChange, PushConfigRecord, Store, TaskKey, TaskRecord};
use agentproto_a2a::v1;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// The longest any single wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(10);

async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(WAIT, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// One request as the receiver saw it.
#[derive(Debug)]
struct Received {
    path: String,
    headers: HeaderMap,
    body: Bytes,
}

/// A scripted answer: a status and an optional `Retry-After` value.
type Answer = (u16, Option<&'static str>);

#[derive(Clone)]
struct ReceiverState {
    /// Answers to give, in order; once empty, 200.
    script: Arc<Mutex<VecDeque<Answer>>>,
    seen: mpsc::UnboundedSender<Received>,
}

async fn receive(
    State(state): State<ReceiverState>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let answer = state.script.lock().expect("script lock").pop_front();
    let _ = state.seen.send(Received { path: uri.path().to_owned(), headers, body });
    let (status, retry_after) = answer.unwrap_or((200, None));
    let status = StatusCode::from_u16(status).expect("status");
    match retry_after {
        Some(seconds) => (status, [("retry-after", seconds)], "scripted").into_response(),
        None => (status, "scripted").into_response(),
    }
}

/// An HTTP receiver on 127.0.0.1 answering with `script`, then 200.
struct Receiver {
    addr: SocketAddr,
    seen: mpsc::UnboundedReceiver<Received>,
    stop: CancellationToken,
}

impl Receiver {
    async fn start(script: Vec<Answer>) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let (tx, rx) = mpsc::unbounded_channel();
        let state = ReceiverState { script: Arc::new(Mutex::new(script.into())), seen: tx };
        let app = axum::Router::new().fallback(receive).with_state(state);
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).with_graceful_shutdown(stopped.cancelled_owned()).await;
        });
        Receiver { addr, seen: rx, stop }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn next(&mut self) -> Received {
        bounded("a request at the receiver", self.seen.recv()).await.expect("receiver channel open")
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn now_ms() -> i64 {
    i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_millis()).expect("ms")
}

fn store() -> Arc<MemoryStore> {
    Arc::new(MemoryStore::new(MemoryOptions::default()))
}

fn record(key: &TaskKey, state: &str) -> TaskRecord {
    TaskRecord {
        key: key.clone(),
        context_id: "ctx".into(),
        state: state.into(),
        terminal: state == "TASK_STATE_COMPLETED",
        status_ts_ms: now_ms(),
        version: 0,
        body: format!(r#"{{"id":"{}","contextId":"ctx","status":{{"state":"{state}"}}}}"#, key.id).into_bytes().into(),
        lease: None,
    }
}

fn status_event(task: &str, state: &str) -> Vec<u8> {
    format!(r#"{{"statusUpdate":{{"taskId":"{task}","contextId":"ctx","status":{{"state":"{state}"}}}}}}"#).into_bytes()
}

/// Creates task `id`, registers `config` on it, then commits `events` with `push: true`.
async fn queue(store: &dyn Store, id: &str, config: v1::TaskPushNotificationConfig, events: &[Vec<u8>]) -> TaskKey {
    let key = TaskKey::new("", id);
    let created = store
        .commit(Commit {
            task: record(&key, "TASK_STATE_SUBMITTED"),
            expected_version: None,
            events: Vec::new(),
            push: false,
            lease: LeaseChange::Keep,
        })
        .await
        .expect("create task");
    let mut config = config;
    config.task_id = id.into();
    if config.id.is_empty() {
        config.id = "cfg-1".into();
    }
    let body = serde_json::to_vec(&config).expect("config json");
    store.put_push_config(PushConfigRecord { task: key.clone(), id: config.id.clone(), body }).await.expect("config");
    store
        .commit(Commit {
            task: record(&key, "TASK_STATE_WORKING"),
            expected_version: Some(created.version),
            events: events.iter().map(|e| (e.clone().into(), false)).collect(),
            push: true,
            lease: LeaseChange::Keep,
        })
        .await
        .expect("commit events");
    key
}

/// Fast options with loopback explicitly allow-listed (the default refuses it).
fn loopback_options() -> PushOptions {
    PushOptions {
        retry: RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
        },
        request_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
        allow: vec!["127.0.0.0/8".parse().expect("cidr")],
        ..PushOptions::default()
    }
}

struct Running {
    handle: PushWorkerHandle,
    stats: watch::Receiver<PushStats>,
    stop: CancellationToken,
}

impl Running {
    fn start(store: Arc<dyn Store>, opts: PushOptions) -> Running {
        let stop = CancellationToken::new();
        let handle = PushWorker::spawn(store, opts, stop.clone());
        let stats = handle.stats();
        handle.wake();
        Running { handle, stats, stop }
    }

    async fn until(&mut self, what: &str, done: impl FnMut(&PushStats) -> bool) -> PushStats {
        bounded(what, self.stats.wait_for(done)).await.expect("worker alive").clone()
    }

    async fn stop(self) {
        self.stop.cancel();
        bounded("the worker to stop", self.handle.join()).await.expect("worker ended cleanly");
    }
}

async fn dead_letters(store: &dyn Store) -> Vec<DeadLetter> {
    store.dead_letters(100).await.expect("dead letters")
}

#[tokio::test]
async fn every_event_is_delivered_with_body_and_headers() {
    let mut receiver = Receiver::start(Vec::new()).await;
    let store = store();
    let mut config = v1::TaskPushNotificationConfig::new(receiver.url("/hook"));
    config.token = "tok-123".into();
    config.authentication = Some(v1::AuthenticationInfo { scheme: "Bearer".into(), credentials: "s3cret".into() });
    let events = vec![
        status_event("t1", "TASK_STATE_WORKING"),
        status_event("t1", "TASK_STATE_INPUT_REQUIRED"),
        status_event("t1", "TASK_STATE_COMPLETED"),
    ];
    queue(&*store, "t1", config, &events).await;

    let mut worker = Running::start(store.clone(), loopback_options());
    for expected in &events {
        let got = receiver.next().await;
        assert_eq!(got.path, "/hook");
        assert_eq!(&got.body[..], &expected[..], "body is the stored event, byte for byte, in order");
        assert_eq!(got.headers["content-type"], "application/a2a+json");
        assert_eq!(got.headers["x-a2a-notification-token"], "tok-123");
        assert_eq!(got.headers["a2a-notification-token"], "tok-123");
        assert_eq!(got.headers["authorization"], "Bearer s3cret");
        assert_eq!(got.headers["a2a-version"], "1.0");
    }
    let stats = worker.until("3 deliveries recorded", |s| s.delivered == 3).await;
    assert_eq!((stats.retried, stats.dead), (0, 0));
    assert_eq!(store.next_delivery_due().await.expect("due"), None, "the outbox is empty");
    worker.stop().await;
}

#[tokio::test]
async fn a_second_commit_is_picked_up_on_wake() {
    let mut receiver = Receiver::start(Vec::new()).await;
    let store = store();
    let mut worker = Running::start(store.clone(), loopback_options());
    // The worker found nothing and sleeps (for up to its poll interval): a wake must be
    // enough to get the new deliveries out.
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(receiver.url("/a")), &[status_event("t1", "W")]).await;
    worker.handle.wake();
    assert_eq!(&receiver.next().await.body[..], &status_event("t1", "W")[..]);
    worker.until("the delivery recorded", |s| s.delivered == 1).await;
    worker.stop().await;
}

#[tokio::test]
async fn two_503s_then_success_is_delivered_on_the_third_attempt() {
    let mut receiver = Receiver::start(vec![(503, None), (503, None)]).await;
    let store = store();
    let event = status_event("t1", "TASK_STATE_WORKING");
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(receiver.url("/hook")), std::slice::from_ref(&event))
        .await;

    let mut worker = Running::start(store.clone(), loopback_options());
    for _ in 0..3 {
        assert_eq!(&receiver.next().await.body[..], &event[..], "each attempt carries the same body");
    }
    let stats = worker.until("the third attempt recorded", |s| s.delivered == 1).await;
    assert_eq!(stats.retried, 2);
    assert_eq!(stats.dead, 0);
    assert!(dead_letters(&*store).await.is_empty());
    worker.stop().await;
}

#[tokio::test]
async fn retry_after_on_429_is_honoured_and_capped() {
    // Retry-After: 3600 would park the delivery for an hour; max_backoff (20 ms) caps it.
    let mut receiver = Receiver::start(vec![(429, Some("3600"))]).await;
    let store = store();
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(receiver.url("/hook")), &[status_event("t1", "W")]).await;
    let mut worker = Running::start(store.clone(), loopback_options());
    receiver.next().await;
    receiver.next().await;
    let stats = worker.until("delivered after the 429", |s| s.delivered == 1).await;
    assert_eq!(stats.retried, 1);
    worker.stop().await;
}

#[tokio::test]
async fn after_max_attempts_the_delivery_is_a_dead_letter_with_the_last_error() {
    let script = vec![(500, None), (502, None), (503, None), (504, None)];
    let mut receiver = Receiver::start(script).await;
    let store = store();
    let event = status_event("t1", "TASK_STATE_WORKING");
    let key =
        queue(&*store, "t1", v1::TaskPushNotificationConfig::new(receiver.url("/hook")), std::slice::from_ref(&event))
            .await;

    let mut worker = Running::start(store.clone(), loopback_options());
    for _ in 0..4 {
        receiver.next().await;
    }
    let stats = worker.until("the dead letter", |s| s.dead == 1).await;
    assert_eq!(stats.retried, 3);
    let dead = dead_letters(&*store).await;
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].delivery.task, key);
    assert_eq!(dead[0].delivery.event, event);
    assert!(dead[0].error.contains("gave up after 4 attempts"), "{}", dead[0].error);
    assert!(dead[0].error.contains("504"), "the last error is kept: {}", dead[0].error);
    assert_eq!(store.next_delivery_due().await.expect("due"), None);
    worker.stop().await;
    assert!(receiver.seen.try_recv().is_err(), "no fifth attempt");
}

#[tokio::test]
async fn connection_errors_and_timeouts_are_retried() {
    // Nothing listens on this port any more: every attempt is refused by the OS.
    let closed = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = closed.local_addr().expect("addr");
    drop(closed);
    let refused_store = store();
    let url = format!("http://{addr}/hook");
    queue(&*refused_store, "t1", v1::TaskPushNotificationConfig::new(url), &[status_event("t1", "W")]).await;
    let mut worker = Running::start(refused_store.clone(), loopback_options());
    let stats = worker.until("the dead letter", |s| s.dead == 1).await;
    assert_eq!(stats.retried, 3, "connection errors are retried");
    let dead = dead_letters(&*refused_store).await;
    assert!(dead[0].error.contains("gave up after 4 attempts"), "{}", dead[0].error);
    worker.stop().await;

    // A receiver that accepts but never answers: the request timeout ends each attempt.
    let silent = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = silent.local_addr().expect("addr");
    let silent_store = store();
    queue(
        &*silent_store,
        "t1",
        v1::TaskPushNotificationConfig::new(format!("http://{addr}/")),
        &[status_event("t1", "W")],
    )
    .await;
    let base = loopback_options();
    let retry = RetryPolicy { max_attempts: 2, ..base.retry };
    let opts = PushOptions { retry, request_timeout: Duration::from_millis(100), ..base };
    let mut worker = Running::start(silent_store.clone(), opts);
    let stats = worker.until("the dead letter", |s| s.dead == 1).await;
    assert_eq!(stats.retried, 1, "a timeout is retried");
    let dead = dead_letters(&*silent_store).await;
    assert!(dead[0].error.contains("timed out") || dead[0].error.contains("timeout"), "{}", dead[0].error);
    worker.stop().await;
    drop(silent);
}

/// An https URL whose receiver does not speak TLS fails its handshake on every attempt:
/// retried, then a dead letter that says why.
#[tokio::test]
async fn an_https_url_whose_handshake_fails_ends_as_a_dead_letter() {
    let receiver = Receiver::start(Vec::new()).await;
    let store = store();
    let url = format!("https://{}/hook", receiver.addr);
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(url), &[status_event("t1", "W")]).await;
    let mut worker = Running::start(store.clone(), loopback_options());
    worker.until("the dead letter", |s| s.dead == 1).await;
    let dead = dead_letters(&*store).await;
    assert!(dead[0].error.contains("gave up"), "{}", dead[0].error);
    worker.stop().await;
}

#[tokio::test]
async fn a_400_is_dead_lettered_at_once() {
    let mut receiver = Receiver::start(vec![(400, None)]).await;
    let store = store();
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(receiver.url("/hook")), &[status_event("t1", "W")]).await;
    let mut worker = Running::start(store.clone(), loopback_options());
    receiver.next().await;
    let stats = worker.until("the dead letter", |s| s.dead == 1).await;
    assert_eq!(stats.retried, 0);
    let dead = dead_letters(&*store).await;
    assert_eq!(dead.len(), 1);
    assert!(dead[0].error.contains("400"), "{}", dead[0].error);
    worker.stop().await;
    assert!(receiver.seen.try_recv().is_err(), "a 400 is not retried");
}

#[tokio::test]
async fn a_config_that_does_not_decode_is_dead_lettered() {
    let store = store();
    let key = TaskKey::new("", "t1");
    let created = store
        .commit(Commit {
            task: record(&key, "S"),
            expected_version: None,
            events: Vec::new(),
            push: false,
            lease: LeaseChange::Keep,
        })
        .await
        .expect("create");
    store
        .put_push_config(PushConfigRecord { task: key.clone(), id: "bad".into(), body: b"{\"url\": 7}".to_vec() })
        .await
        .expect("config");
    store
        .commit(Commit {
            task: record(&key, "W"),
            expected_version: Some(created.version),
            events: vec![(status_event("t1", "W").into(), false)],
            push: true,
            lease: LeaseChange::Keep,
        })
        .await
        .expect("commit");
    let mut worker = Running::start(store.clone(), loopback_options());
    worker.until("the dead letter", |s| s.dead == 1).await;
    let dead = dead_letters(&*store).await;
    assert!(dead[0].error.contains("does not decode"), "{}", dead[0].error);
    worker.stop().await;
}

/// Queues one delivery to `url` with the default (guarded) options and returns the
/// dead letter's error.
async fn refused(url: &str, opts: PushOptions) -> String {
    let store = store();
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(url), &[status_event("t1", "W")]).await;
    let mut worker = Running::start(store.clone(), opts);
    let stats = worker.until(&format!("{url} to be refused"), |s| s.dead == 1).await;
    assert_eq!((stats.delivered, stats.retried), (0, 0), "{url}: refused at once, never retried");
    worker.stop().await;
    let dead = dead_letters(&*store).await;
    assert_eq!(dead.len(), 1);
    dead[0].error.clone()
}

/// Warnings this test binary emitted through `tracing`, one formatted line each, kept
/// for the tests to read.
static LOGGED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// A writer that appends what the formatter writes to `LOGGED`, a line per event.
struct Capture;

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut logged = LOGGED.lock().unwrap();
        logged.extend(String::from_utf8_lossy(buf).lines().map(str::to_owned));
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn capture_logs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tracing_subscriber::fmt()
            .with_writer(|| Capture)
            .with_ansi(false)
            .without_time()
            .with_max_level(tracing::Level::WARN)
            .try_init()
            .expect("no other subscriber in this test binary");
    });
}

fn logged(containing: &str) -> Vec<String> {
    LOGGED.lock().unwrap().iter().filter(|l| l.contains(containing)).cloned().collect()
}

fn guarded_options() -> PushOptions {
    let retry = RetryPolicy {
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        ..PushOptions::default().retry
    };
    PushOptions { retry, ..PushOptions::default() }
}

#[tokio::test]
async fn the_ssrf_guard_refuses_private_targets_by_default() {
    // A live receiver on loopback: without the guard these requests would get through.
    let mut receiver = Receiver::start(Vec::new()).await;
    let port = receiver.addr.port();
    let cases = [
        (format!("http://127.0.0.1:{port}/hook"), "loopback"),
        ("http://10.0.0.1/hook".to_owned(), "private"),
        ("http://169.254.169.254/latest/meta-data/".to_owned(), "link-local"),
        (format!("http://[::1]:{port}/hook"), "loopback"),
        ("http://[fe80::1]/hook".to_owned(), "link-local"),
        ("http://[::ffff:10.0.0.1]/hook".to_owned(), "private"),
        ("http://100.64.0.1/hook".to_owned(), "shared"),
        ("http://0.0.0.0/hook".to_owned(), "unspecified"),
        (format!("http://2130706433:{port}/hook"), "loopback"),
    ];
    capture_logs();
    for (url, class) in &cases {
        let error = refused(url, guarded_options()).await;
        assert!(error.contains("SSRF"), "{url}: {error}");
        assert!(error.contains(class), "{url}: {error}");
        // Not silent: the refusal is logged, as such, with the reason.
        let lines = logged(&error);
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with("WARN agentproto_a2a::push")
                    && l.contains("refused by the SSRF guard")),
            "{url}: {lines:?}"
        );
    }
    assert!(receiver.seen.try_recv().is_err(), "nothing reached the loopback receiver");
}

#[tokio::test]
async fn the_ssrf_guard_checks_names_after_resolution() {
    let mut receiver = Receiver::start(Vec::new()).await;
    let url = format!("http://localhost:{}/hook", receiver.addr.port());
    let error = refused(&url, guarded_options()).await;
    assert!(error.contains("localhost") && error.contains("loopback"), "{error}");
    assert!(receiver.seen.try_recv().is_err(), "nothing reached the loopback receiver");

    // The same name is let through once loopback is allowed.
    let store = store();
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(url.as_str()), &[status_event("t1", "W")]).await;
    let opts = PushOptions { allow_loopback: true, ..guarded_options() };
    let mut worker = Running::start(store.clone(), opts);
    receiver.next().await;
    worker.until("delivered", |s| s.delivered == 1).await;
    worker.stop().await;
}

#[tokio::test]
async fn the_ssrf_guard_refuses_other_schemes_and_bad_urls() {
    for url in ["file:///etc/passwd", "ftp://example.com/x", "gopher://example.com/", "not a url", "http://"] {
        let error = refused(url, guarded_options()).await;
        assert!(error.contains("scheme") || error.contains("not a valid absolute URL"), "{url}: {error}");
    }
}

#[tokio::test]
async fn a_lease_left_by_a_stopped_worker_is_delivered_by_the_next_one() {
    let mut receiver = Receiver::start(Vec::new()).await;
    let store = store();
    let event = status_event("t1", "TASK_STATE_WORKING");
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(receiver.url("/hook")), std::slice::from_ref(&event))
        .await;

    // A worker that claimed the delivery and died before sending it.
    let lease_ms = 150;
    let claimed = store.claim_deliveries(now_ms(), lease_ms, 10).await.expect("claim");
    assert_eq!(claimed.len(), 1);
    assert!(store.claim_deliveries(now_ms(), lease_ms, 10).await.expect("claim").is_empty(), "leased");

    // A new worker on the same store: the delivery is hidden until the lease ends, then
    // it is sent (the worker waits for next_delivery_due, no polling needed).
    let mut worker = Running::start(store.clone(), loopback_options());
    let got = receiver.next().await;
    assert_eq!(&got.body[..], &event[..]);
    worker.until("delivered", |s| s.delivered == 1).await;
    assert_eq!(store.next_delivery_due().await.expect("due"), None);
    worker.stop().await;
}

#[tokio::test]
async fn deliveries_of_one_config_are_sent_in_order_and_configs_in_parallel() {
    let mut receiver = Receiver::start(Vec::new()).await;
    let store = store();
    let events: Vec<Vec<u8>> = (0..20).map(|i| status_event("t1", &format!("S{i}"))).collect();
    queue(&*store, "t1", v1::TaskPushNotificationConfig::new(receiver.url("/t1")), &events).await;
    let other: Vec<Vec<u8>> = (0..20).map(|i| status_event("t2", &format!("S{i}"))).collect();
    queue(&*store, "t2", v1::TaskPushNotificationConfig::new(receiver.url("/t2")), &other).await;

    let mut worker = Running::start(store.clone(), PushOptions { batch: 7, ..loopback_options() });
    let mut by_path: std::collections::HashMap<String, Vec<Bytes>> = Default::default();
    for _ in 0..40 {
        let got = receiver.next().await;
        by_path.entry(got.path).or_default().push(got.body);
    }
    let as_bytes = |v: &[Vec<u8>]| v.iter().map(|e| Bytes::from(e.clone())).collect::<Vec<_>>();
    assert_eq!(by_path["/t1"], as_bytes(&events));
    assert_eq!(by_path["/t2"], as_bytes(&other));
    worker.until("all recorded", |s| s.delivered == 40).await;
    worker.stop().await;
}

#[tokio::test]
async fn shutdown_ends_an_idle_worker() {
    let worker = Running::start(store(), loopback_options());
    worker.stop().await;
}

#[test]
fn ip_classification() {
    let class = |s: &str| classify(s.parse::<IpAddr>().expect("ip"));
    assert_eq!(class("127.0.0.1"), Some(AddressClass::Loopback));
    assert_eq!(class("127.255.0.9"), Some(AddressClass::Loopback));
    assert_eq!(class("::1"), Some(AddressClass::Loopback));
    assert_eq!(class("::ffff:127.0.0.1"), Some(AddressClass::Loopback));
    for private in ["10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fc00::1", "fd12:3456::1"] {
        assert_eq!(class(private), Some(AddressClass::Private), "{private}");
    }
    assert_eq!(class("::ffff:192.168.0.1"), Some(AddressClass::Private));
    assert_eq!(class("100.64.0.1"), Some(AddressClass::SharedAddressSpace));
    assert_eq!(class("100.127.255.255"), Some(AddressClass::SharedAddressSpace));
    assert_eq!(class("169.254.169.254"), Some(AddressClass::LinkLocal));
    assert_eq!(class("fe80::1"), Some(AddressClass::LinkLocal));
    assert_eq!(class("febf::1"), Some(AddressClass::LinkLocal));
    assert_eq!(class("0.0.0.0"), Some(AddressClass::Unspecified));
    assert_eq!(class("::"), Some(AddressClass::Unspecified));
    assert_eq!(class("255.255.255.255"), Some(AddressClass::Broadcast));
    assert_eq!(class("224.0.0.1"), Some(AddressClass::Multicast));
    assert_eq!(class("239.255.255.250"), Some(AddressClass::Multicast));
    assert_eq!(class("ff02::1"), Some(AddressClass::Multicast));
    assert_eq!(class("64:ff9b::a9fe:a9fe"), Some(AddressClass::LinkLocal), "NAT64 of 169.254.169.254");
    assert_eq!(class("2002:0a00:0001::1"), Some(AddressClass::Private), "6to4 of 10.0.0.1");
    assert_eq!(class("2001:db8::1"), Some(AddressClass::Reserved));
    assert_eq!(class("240.0.0.1"), Some(AddressClass::Reserved));
    // Public addresses, including neighbours of the refused ranges.
    for public in
        ["8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.0", "100.63.255.255", "100.128.0.0", "2606:4700::1111"]
    {
        assert_eq!(class(public), None, "{public}");
    }
    assert_eq!(class("64:ff9b::808:808"), None, "NAT64 of 8.8.8.8");
}

#[test]
fn cidr_parsing_and_matching() {
    let cidr: Cidr = "10.1.2.3/8".parse().expect("cidr");
    assert_eq!(cidr.to_string(), "10.0.0.0/8", "host bits are cleared");
    assert!(cidr.contains("10.200.0.1".parse().expect("ip")));
    assert!(cidr.contains("::ffff:10.200.0.1".parse().expect("ip")), "mapped addresses match IPv4 networks");
    assert!(!cidr.contains("11.0.0.1".parse().expect("ip")));
    let host: Cidr = "192.168.1.5".parse().expect("cidr");
    assert_eq!(host.prefix(), 32);
    assert!(host.contains("192.168.1.5".parse().expect("ip")));
    assert!(!host.contains("192.168.1.6".parse().expect("ip")));
    let v6: Cidr = "fd00::/8".parse().expect("cidr");
    assert!(v6.contains("fd12::1".parse().expect("ip")));
    assert!(!v6.contains("fe00::1".parse().expect("ip")));
    let mapped: Cidr = "::ffff:10.0.0.0/104".parse().expect("cidr");
    assert_eq!(mapped.to_string(), "10.0.0.0/8");
    let all: Cidr = "0.0.0.0/0".parse().expect("cidr");
    assert!(all.contains("8.8.8.8".parse().expect("ip")));
    for bad in ["10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0/8", "example.com", "10.0.0.0/x", "10.0.0.0/-1"] {
        assert!(bad.parse::<Cidr>().is_err(), "{bad}");
    }
}

#[test]
fn the_guard_allow_list_and_loopback_switch() {
    let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
    let strict = SsrfGuard::default();
    assert!(strict.check_ip("h", ip("8.8.8.8")).is_ok());
    assert!(strict.check_ip("h", ip("127.0.0.1")).is_err());
    let loopback = SsrfGuard::new(Vec::new()).with_loopback();
    assert!(loopback.check_ip("h", ip("127.0.0.1")).is_ok());
    assert!(loopback.check_ip("h", ip("::1")).is_ok());
    assert!(loopback.check_ip("h", ip("10.0.0.1")).is_err(), "allow_loopback is about loopback only");
    let listed = SsrfGuard::new(vec!["10.1.0.0/16".parse().expect("cidr")]);
    assert!(listed.check_ip("h", ip("10.1.2.3")).is_ok());
    assert!(listed.check_ip("h", ip("10.2.0.1")).is_err());

    assert!(strict.check_url("https://example.com/hook").is_ok());
    assert!(strict.check_url("http://example.com:8080/hook").is_ok(), "names are checked at connect time");
    assert!(strict.check_url("http://127.1/hook").is_err(), "shorthand IPv4 is normalised first");
    assert!(strict.check_url("http://0x7f000001/hook").is_err());
    assert!(strict.check_url("http://[::1]/hook").is_err());
    assert!(strict.check_url("javascript:alert(1)").is_err());
}
