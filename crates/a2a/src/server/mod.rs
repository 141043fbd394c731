//! The A2A server: an [`AgentExecutor`] behind the JSON-RPC and HTTP+JSON bindings, on a
//! [`Store`] (in memory unless the builder is given another: SQLite with the `sqlite`
//! feature, PostgreSQL with the `postgres` feature, or any [`Store`]), with live streams, resumption and push delivery.
//!
//! ```no_run
//! # use agentproto_a2a::{server::A2aServer, executor::*, errors::A2aError, v1::AgentCard};
//! struct Echo;
//! impl AgentExecutor for Echo {
//!     async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
//!         task.complete(Some(task.text(cx.text()))).await
//!     }
//! }
//! # async fn run(card: AgentCard) -> std::io::Result<()> {
//! let server = A2aServer::builder(Echo, card).sqlite("agent.db").map_err(std::io::Error::other)?.build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! server.serve(listener).await
//! # }
//! ```
//!
//! Several servers on one PostgreSQL database are one service: any of them serves, streams,
//! resumes and cancels any task (see the `replicas` module for the rules, and
//! `Builder::postgres`, feature `postgres`).

pub mod auth;
pub(crate) mod call;
mod cancel;
pub mod core;
pub mod descriptors;
pub mod http;
pub mod layers;
pub(crate) mod listen;
mod push_configs;
mod replicas;
mod reply;
mod send;
mod spliced;
mod turn;
pub(crate) mod watch;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::errors::ErrorTable;
use crate::executor::AgentExecutor;
use crate::push::{PushOptions, PushWorker};
use crate::recovery::{ConfigError, Leases, RecoveryOptions, Retention, Sweeper};
use crate::store::memory::{MemoryOptions, MemoryStore};
#[cfg(feature = "postgres")]
use crate::store::postgres::{ListenOptions, ListenStatus, PgListener, PostgresOptions, PostgresStore};
#[cfg(feature = "sqlite")]
use crate::store::sqlite::SqliteStore;
use crate::store::Store;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use crate::store::StoreError;
use crate::stream::{EventHub, HubOptions};
use crate::tasks::Tasks;
use crate::v1::AgentCard;

pub use self::call::MissingVersion;
use self::core::Core;
pub use self::core::{CallContext, CoreOptions};
pub use self::http::HttpOptions;
pub use crate::store::ControlChannel;
use auth::{Authenticator, CardAuthenticator, CredentialValidator};
use layers::{Cors, Interceptor, RateLimit, RateLimitLayer};
pub use replicas::DEFAULT_CANCEL_WAIT;

/// Configures an [`A2aServer`].
pub struct Builder<E> {
    executor: E,
    card: AgentCard,
    extended_card: Option<AgentCard>,
    store: Option<Arc<dyn Store>>,
    http: HttpOptions,
    hub: HubOptions,
    push: Option<PushOptions>,
    auth: Option<Arc<dyn Authenticator>>,
    rate_limit: Option<RateLimit>,
    cors: Option<Cors>,
    interceptors: Vec<Arc<dyn Interceptor>>,
    accepted_media_types: Option<Vec<String>>,
    max_metadata_bytes: usize,
    return_immediately_by_default: bool,
    recovery: RecoveryOptions,
    retention: Retention,
    cancel_wait: Duration,
    /// The store and listener of a PostgreSQL database shared with other replicas.
    #[cfg(feature = "postgres")]
    bus: Option<(PostgresStore, PgListener)>,
}

impl<E: AgentExecutor> Builder<E> {
    /// How turns hold leases and how orphaned turns are found (see [`crate::recovery`]).
    /// Refuses a lease shorter than [`crate::recovery::MIN_LEASE`] or an empty replica id.
    pub fn recovery(mut self, options: RecoveryOptions) -> Result<Self, ConfigError> {
        options.validate()?;
        self.recovery = options;
        Ok(self)
    }

    /// How long terminal tasks are kept (24 h unless set; see [`crate::recovery`]).
    /// Refuses a retention shorter than its resume window.
    pub fn retention(mut self, retention: Retention) -> Result<Self, ConfigError> {
        retention.validate()?;
        self.retention = retention;
        Ok(self)
    }

    /// Answers sends at once unless they ask to wait (see [`CoreOptions`]); for old test kits.
    pub fn return_immediately_by_default(mut self) -> Self {
        self.return_immediately_by_default = true;
        self
    }

    /// Keeps everything in an SQLite database file (created if missing).
    #[cfg(feature = "sqlite")]
    pub fn sqlite(self, path: impl AsRef<std::path::Path>) -> Result<Self, StoreError> {
        Ok(self.store(Arc::new(SqliteStore::open(path.as_ref())?)))
    }

    /// Keeps everything in the PostgreSQL database `config` names (a `postgresql://` URL
    /// or a `key=value` string), with the default [`PostgresOptions`], and joins the other
    /// servers on that database: one more connection `LISTEN`s for their events and
    /// messages, so that streams and cancels work across them (see the `replicas`
    /// module). Connects, migrates the schema and starts listening before it returns.
    /// For other options, or a pool of your own, see [`Builder::postgres_store`].
    #[cfg(feature = "postgres")]
    pub async fn postgres(self, config: &str) -> Result<Self, StoreError> {
        let store = PostgresStore::connect(config, PostgresOptions::default()).await?;
        let mut listener = PgListener::new(config, ListenOptions::default())?;
        listener.connect().await?;
        Ok(self.postgres_store(store, listener))
    }

    /// [`Builder::postgres`] with a store and a listener built by the caller (pool
    /// options, TLS for the pool, listener backoff). The listener connects when the
    /// server starts unless it was connected already.
    #[cfg(feature = "postgres")]
    pub fn postgres_store(mut self, store: PostgresStore, listener: PgListener) -> Self {
        self.store = Some(Arc::new(store.clone()));
        self.bus = Some((store, listener));
        self
    }

    /// How long a `CancelTask` waits for the replica running the task's turn before it
    /// cancels the task itself ([`DEFAULT_CANCEL_WAIT`] unless set; see the `replicas`
    /// module).
    pub fn cancel_wait(mut self, wait: Duration) -> Self {
        self.cancel_wait = wait;
        self
    }

    /// Keeps everything in memory (lost on exit), bounded by `options`.
    pub fn memory(self, options: MemoryOptions) -> Self {
        self.store(Arc::new(MemoryStore::new(options)))
    }

    /// Any store. Events reach only this server's subscribers: for several servers on
    /// one PostgreSQL database use `Builder::postgres` or `Builder::postgres_store`
    /// (feature `postgres`).
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        #[cfg(feature = "postgres")]
        {
            self.bus = None;
        }
        self
    }

    /// The HTTP options: paths, body and connection limits, timeouts, card caching.
    pub fn http(mut self, options: HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// Which A2A revision's HTTP statuses errors use (1.0.1 unless set).
    pub fn error_table(mut self, table: ErrorTable) -> Self {
        self.http.error_table = table;
        self
    }

    /// How live streams buffer events for slow readers.
    pub fn hub(mut self, options: HubOptions) -> Self {
        self.hub = options;
        self
    }

    /// Delivers push notifications (the card must declare `pushNotifications`).
    pub fn push(mut self, options: PushOptions) -> Self {
        self.push = Some(options);
        self
    }

    /// The card `GetExtendedAgentCard` answers authenticated callers with (the public
    /// card must declare `extendedAgentCard`).
    pub fn extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// Enforces the card's security requirements with `validator`.
    pub fn credentials(mut self, validator: impl CredentialValidator) -> Self {
        self.auth = Some(Arc::new(CardAuthenticator::new(self.card.clone(), Arc::new(validator))));
        self
    }

    /// Replaces the built-in authentication.
    pub fn authenticator(mut self, auth: impl Authenticator) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Limits how often each client may call (see [`layers::RateLimit`]); over the
    /// limit a request is answered 429 with `Retry-After`.
    pub fn rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limit = Some(limit);
        self
    }

    /// Lets browser pages from these origins call the agent (see [`layers::Cors`]).
    pub fn cors(mut self, cors: Cors) -> Self {
        self.cors = Some(cors);
        self
    }

    /// Adds a check run before every operation, after those added earlier (see
    /// [`layers::Interceptor`]).
    pub fn interceptor(mut self, interceptor: impl Interceptor) -> Self {
        self.interceptors.push(Arc::new(interceptor));
        self
    }

    /// Refuses parts whose `mediaType` is not one of these (`type/*` and `*/*` allowed).
    pub fn accepted_media_types(mut self, types: Vec<String>) -> Self {
        self.accepted_media_types = Some(types);
        self
    }

    /// The largest `metadata` object a request may carry, in bytes (64 KiB unless set).
    pub fn max_metadata_bytes(mut self, n: usize) -> Self {
        self.max_metadata_bytes = n;
        self
    }

    /// Builds the server and, inside a tokio runtime, starts its background work: the
    /// push worker (when configured), the renewal of turn leases, the sweeper, which
    /// sweeps once at once and then every half lease, and on PostgreSQL the listener of
    /// the replica bus (outside a runtime they start with [`A2aServer::serve`]).
    pub fn build(self) -> A2aServer<E> {
        let store = self.store.unwrap_or_else(|| Arc::new(MemoryStore::new(MemoryOptions::default())));
        let hub = Arc::new(EventHub::new(self.hub));
        let shutdown = CancellationToken::new();
        let mut tasks = Tasks::new(store.clone(), hub);
        let leases = Arc::new(Leases::new(store.clone(), &self.recovery, shutdown.clone()));
        tasks.leases = Arc::clone(&leases);
        let push_declared = self.card.capabilities.push_notifications == Some(true);
        let worker = match (&self.push, push_declared) {
            (Some(opts), true) => {
                let handle = PushWorker::spawn(store.clone(), opts.clone(), shutdown.child_token());
                let wake = handle.waker();
                tasks.on_push = Some(Arc::new(move || wake.wake()));
                tasks.push_enabled = true;
                Some(handle)
            }
            _ => None,
        };
        let options = CoreOptions {
            card: self.card,
            extended_card: self.extended_card,
            accepted_media_types: self.accepted_media_types,
            max_metadata_bytes: self.max_metadata_bytes,
            return_immediately_by_default: self.return_immediately_by_default,
            // Without push options no worker runs; configs are still checked with the
            // default guard, so that none is accepted that a worker would refuse.
            push_guard: self.push.as_ref().map(PushOptions::guard).unwrap_or_default(),
            push_resolve_timeout: self.push.as_ref().map_or(Duration::from_secs(5), |p| p.connect_timeout),
            interceptors: self.interceptors,
        };
        let tasks = Arc::new(tasks);
        let sweeper = Sweeper::new(Arc::clone(&tasks), self.retention, Arc::clone(&self.recovery.clock));
        let mut background = Background {
            pending: self.recovery.background.then(|| (Arc::clone(&leases), sweeper.clone())),
            renew_every: self.recovery.renew_every(),
            sweep_every: self.recovery.sweep_every(),
            stop: shutdown.clone(),
            running: Vec::new(),
            #[cfg(feature = "postgres")]
            listener: None,
        };
        #[cfg(feature = "postgres")]
        let (replicas, bus_status) = match self.bus {
            Some((store, listener)) => {
                let replicas = Arc::new(replicas::Replicas::new(leases.owner(), Arc::new(store), self.cancel_wait));
                let sink = replicas::ReplicaBus {
                    replicas: Arc::clone(&replicas),
                    hub: Arc::clone(tasks.hub()),
                    push: worker.as_ref().map(crate::push::PushWorkerHandle::waker),
                };
                let status = listener.status();
                background.listener = Some((listener, Arc::new(sink)));
                (Some(replicas), Some(status))
            }
            None => (None, None),
        };
        #[cfg(not(feature = "postgres"))]
        let replicas: Option<Arc<replicas::Replicas>> = None;
        if tokio::runtime::Handle::try_current().is_ok() {
            background.start();
        }
        let core = Core::with_replicas(Arc::new(self.executor), tasks, options, shutdown.clone(), replicas.clone());
        if let Some(replicas) = &replicas {
            let canceler: std::sync::Weak<Core<E>> = Arc::downgrade(&core);
            replicas.set_canceler(canceler as std::sync::Weak<dyn replicas::TurnCanceler>);
        }
        let limits = listen::ConnLimits::from(&self.http);
        let rate_limit = self.rate_limit.map(|limit| {
            RateLimitLayer::new(limit).jsonrpc_path(&self.http.jsonrpc_path).error_table(self.http.error_table)
        });
        #[cfg(feature = "grpc")]
        let grpc_auth = self.auth.clone();
        let stack = layers::Stack { auth: self.auth, rate_limit, cors: self.cors };
        #[cfg(feature = "grpc")]
        let grpc = crate::grpc::server::GrpcService::new(
            Arc::clone(&core),
            self.http.call_rules(),
            self.http.error_table,
            self.http.max_body_bytes,
            grpc_auth,
        );
        let app = http::App::new(core, self.http);
        A2aServer {
            #[cfg(feature = "grpc")]
            grpc,
            #[cfg(feature = "grpc")]
            grpc_listener: None,
            router: stack.wrap(http::router(app)),
            shutdown,
            push: worker,
            store,
            limits,
            leases,
            sweeper,
            background,
            #[cfg(feature = "postgres")]
            bus_status,
            _e: std::marker::PhantomData,
        }
    }
}

/// The lease renewal, the sweeper and the replica bus's listener of a server, started
/// once.
struct Background {
    /// Not started yet (`None` once started, or when the application runs them itself).
    pending: Option<(Arc<Leases>, Sweeper)>,
    renew_every: Duration,
    sweep_every: Duration,
    stop: CancellationToken,
    running: Vec<tokio::task::JoinHandle<()>>,
    /// Not started yet (always runs, whatever `RecoveryOptions::background` says).
    #[cfg(feature = "postgres")]
    listener: Option<(PgListener, Arc<dyn crate::store::postgres::NoticeSink>)>,
}

impl Background {
    /// Spawns the loops; call inside a tokio runtime.
    fn start(&mut self) {
        #[cfg(feature = "postgres")]
        if let Some((listener, sink)) = self.listener.take() {
            self.running.push(tokio::spawn(listener.run(sink, self.stop.clone())));
        }
        let Some((leases, sweeper)) = self.pending.take() else { return };
        self.running.push(tokio::spawn(leases.run(self.renew_every, self.stop.clone())));
        self.running.push(tokio::spawn(sweeper.run(self.sweep_every, self.stop.clone())));
    }

    /// Waits for the loops, which end once the shutdown token fired.
    async fn join(self) {
        for task in self.running {
            let _ = task.await;
        }
    }
}

/// A configured server: an axum router (the bindings inside the [`layers`]) plus its
/// background work.
pub struct A2aServer<E> {
    router: axum::Router,
    #[cfg(feature = "grpc")]
    grpc: crate::grpc::server::GrpcService<E>,
    #[cfg(feature = "grpc")]
    grpc_listener: Option<tokio::net::TcpListener>,
    shutdown: CancellationToken,
    push: Option<crate::push::PushWorkerHandle>,
    store: Arc<dyn Store>,
    limits: listen::ConnLimits,
    leases: Arc<Leases>,
    sweeper: Sweeper,
    background: Background,
    #[cfg(feature = "postgres")]
    bus_status: Option<tokio::sync::watch::Receiver<ListenStatus>>,
    #[allow(dead_code)]
    _e: std::marker::PhantomData<fn() -> E>,
}

impl<E: AgentExecutor> A2aServer<E> {
    /// Starts configuring a server that runs `executor` and publishes `card`.
    pub fn builder(executor: E, card: AgentCard) -> Builder<E> {
        Builder {
            executor,
            card,
            extended_card: None,
            store: None,
            http: HttpOptions::default(),
            hub: HubOptions::default(),
            push: None,
            auth: None,
            rate_limit: None,
            cors: None,
            interceptors: Vec::new(),
            accepted_media_types: None,
            max_metadata_bytes: 64 << 10,
            return_immediately_by_default: false,
            recovery: RecoveryOptions::default(),
            retention: Retention::default(),
            cancel_wait: DEFAULT_CANCEL_WAIT,
            #[cfg(feature = "postgres")]
            bus: None,
        }
    }

    /// The router, to mount inside a larger axum application, inside its [`layers`]. The
    /// connection limits of [`HttpOptions`] (header, idle and shutdown timeouts, the
    /// connection limit) are [`A2aServer::serve`]'s; a router served otherwise gets only
    /// the body limits, and its rate limit sees client addresses only when served with
    /// `into_make_service_with_connect_info::<SocketAddr>()`.
    pub fn router(&self) -> axum::Router {
        self.router.clone()
    }

    /// The gRPC binding (`lf.a2a.v1.A2AService`), to serve with tonic's transport or
    /// mount beside other gRPC services; [`A2aServer::grpc`] has [`A2aServer::serve`]
    /// serve it. Authentication is the server's authenticator, read from the metadata;
    /// the rate limit and CORS layers are the HTTP bindings' only.
    #[cfg(feature = "grpc")]
    pub fn grpc_service(&self) -> crate::grpc::GrpcService<E> {
        self.grpc.clone()
    }

    /// Has [`A2aServer::serve`] also serve the gRPC binding on `listener` (HTTP/2
    /// without TLS), until the same shutdown. The card should declare it
    /// ([`crate::AgentCardBuilder::grpc_interface`]).
    #[cfg(feature = "grpc")]
    pub fn grpc(mut self, listener: tokio::net::TcpListener) -> Self {
        self.grpc_listener = Some(listener);
        self
    }

    /// The store the server keeps its tasks in.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// This server's turn leases (its replica id, and [`Leases::renew`]).
    pub fn leases(&self) -> &Arc<Leases> {
        &self.leases
    }

    /// The state of the replica bus's `LISTEN` connection, for a server on PostgreSQL
    /// ([`Builder::postgres`]); `None` otherwise.
    #[cfg(feature = "postgres")]
    pub fn bus_status(&self) -> Option<tokio::sync::watch::Receiver<ListenStatus>> {
        self.bus_status.clone()
    }

    /// A handle on the sweeper, to sweep now (see [`crate::recovery`]).
    pub fn sweeper(&self) -> Sweeper {
        self.sweeper.clone()
    }

    /// Cancels running executions, ends open streams and stops the push worker.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// The most connections [`A2aServer::serve`] serves at once on each of its
    /// listeners: [`HttpOptions::max_connections`], lowered when the listeners would
    /// need more file descriptors than the process may open (see [`descriptors`]).
    pub fn max_connections(&self) -> usize {
        #[cfg(feature = "grpc")]
        let listeners = 1 + usize::from(self.grpc_listener.is_some());
        #[cfg(not(feature = "grpc"))]
        let listeners = 1;
        descriptors::connection_cap(self.limits.max_connections, listeners, descriptors::open_files_limit())
    }

    /// Serves HTTP/1.1 until the shutdown token fires (or a signal, see
    /// [`A2aServer::serve_until_signal`]), within the connection limits of
    /// [`HttpOptions`], on the gRPC listener too when there is one: at most
    /// [`A2aServer::max_connections`] at once on each listener (beyond, HTTP/1.1 gets
    /// 503 and gRPC is closed at once), a connection's first request head due within
    /// `header_timeout` of its accept (a connection that never sends a byte is closed
    /// then), idle connections closed after `idle_timeout`.
    ///
    /// On shutdown, running executions are canceled and streams end; connections
    /// without a request in progress, or whose request body is still arriving, close at
    /// once, the others once their response is sent, and any still open after
    /// `shutdown_timeout` are closed. Then the push
    /// worker, the lease renewal and the sweeper stop. Turns the shutdown interrupted
    /// leave their leases expired, so the next sweep (the next start, or another replica
    /// on the same database) fails their tasks (see [`crate::recovery`]).
    pub async fn serve(mut self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        self.background.start();
        let limits = listen::ConnLimits { max_connections: self.max_connections(), ..self.limits };
        #[cfg(feature = "grpc")]
        let grpc = self
            .grpc_listener
            .take()
            .map(|l| tokio::spawn(crate::grpc::listen::serve(l, self.grpc.clone(), limits, self.shutdown.clone())));
        let result = listen::serve(listener, self.router.clone(), limits, self.shutdown.clone()).await;
        #[cfg(feature = "grpc")]
        let result = match grpc {
            Some(grpc) => {
                self.shutdown.cancel();
                let served = grpc.await.unwrap_or_else(|e| Err(std::io::Error::other(e)));
                result.and(served)
            }
            None => result,
        };
        if let Some(push) = self.push {
            let _ = push.join().await;
        }
        self.background.join().await;
        result
    }

    /// [`A2aServer::serve`], shutting down on SIGINT or SIGTERM.
    pub async fn serve_until_signal(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let token = self.shutdown.clone();
        tokio::spawn(async move {
            let ctrl_c = tokio::signal::ctrl_c();
            #[cfg(unix)]
            {
                let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(s) => s,
                    Err(_) => {
                        let _ = ctrl_c.await;
                        token.cancel();
                        return;
                    }
                };
                tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
            }
            #[cfg(not(unix))]
            let _ = ctrl_c.await;
            token.cancel();
        });
        self.serve(listener).await
    }
}
