//! The limits of a remote ACP server, and what they bound.

use std::time::Duration;

/// How much one server holds, and for how long.
///
/// Memory per ACP connection is bounded by `max_queued_bytes` twice (messages received
/// and not read yet by the connection; messages written and not sent yet, over all its
/// streams) plus the bodies being received (`max_body_bytes` each) plus the
/// connection's own queues ([`ConnectionOptions`](agentproto_jsonrpc::ConnectionOptions));
/// per server, by `max_connections` times that. A connection over its outgoing bound
/// stops its agent's sends (the agent's calls wait), one over its incoming bound holds
/// the POST or stops reading the WebSocket: nothing is dropped.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerLimits {
    /// ACP connections at once; an `initialize` POST or a WebSocket upgrade beyond it
    /// is refused with 503.
    pub max_connections: usize,
    /// TCP connections at once (an SSE stream holds one); one more is closed at once.
    pub max_sockets: usize,
    /// The largest POST body (refused with 413 before it is buffered: by its
    /// `Content-Length`, or as soon as a chunked body grows past it) and the largest
    /// WebSocket message (the socket is closed with 1009).
    pub max_body_bytes: usize,
    /// Bytes one connection queues in each direction before it waits.
    pub max_queued_bytes: usize,
    /// After this long with no stream open and no request, a Streamable HTTP
    /// connection is ended, as by DELETE. A WebSocket connection ends with its socket.
    pub idle_timeout: Duration,
    /// Silence after which an SSE stream gets a comment line.
    pub keepalive_interval: Duration,
    /// How long the `initialize` POST waits for the agent's answer (then 504).
    pub initialize_timeout: Duration,
    /// How long a connection's output may stay over its bound (a stream nobody reads,
    /// a WebSocket peer that does not read), and a request body may take to arrive,
    /// before the connection is ended (the body: 408).
    pub stall_timeout: Duration,
    /// How long a request's head (request line and headers) may take to arrive.
    pub header_timeout: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            max_connections: 1024,
            max_sockets: 4096,
            max_body_bytes: 16 * 1024 * 1024,
            max_queued_bytes: 4 * 1024 * 1024,
            idle_timeout: Duration::from_secs(60),
            keepalive_interval: Duration::from_secs(15),
            initialize_timeout: Duration::from_secs(30),
            stall_timeout: Duration::from_secs(60),
            header_timeout: Duration::from_secs(10),
        }
    }
}

impl ServerLimits {
    /// The defaults.
    pub fn new() -> Self {
        ServerLimits::default()
    }

    /// Sets [`max_connections`](Self::max_connections).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Sets [`max_body_bytes`](Self::max_body_bytes).
    pub fn max_body_bytes(mut self, n: usize) -> Self {
        self.max_body_bytes = n.max(1);
        self
    }

    /// Sets [`max_queued_bytes`](Self::max_queued_bytes).
    pub fn max_queued_bytes(mut self, n: usize) -> Self {
        self.max_queued_bytes = n.max(1);
        self
    }

    /// Sets [`idle_timeout`](Self::idle_timeout).
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.idle_timeout = d;
        self
    }

    /// Sets [`keepalive_interval`](Self::keepalive_interval).
    pub fn keepalive_interval(mut self, d: Duration) -> Self {
        self.keepalive_interval = d;
        self
    }

    /// Sets [`initialize_timeout`](Self::initialize_timeout).
    pub fn initialize_timeout(mut self, d: Duration) -> Self {
        self.initialize_timeout = d;
        self
    }

    /// Sets [`stall_timeout`](Self::stall_timeout).
    pub fn stall_timeout(mut self, d: Duration) -> Self {
        self.stall_timeout = d;
        self
    }

    /// Sets [`header_timeout`](Self::header_timeout).
    pub fn header_timeout(mut self, d: Duration) -> Self {
        self.header_timeout = d;
        self
    }
}
