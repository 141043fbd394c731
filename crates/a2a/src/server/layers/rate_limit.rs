//! [`RateLimitLayer`]: a token bucket per client, refusing what goes over with HTTP 429
//! and a `Retry-After`.
//!
//! Each client has a bucket holding up to `burst` tokens, refilled at `requests` per
//! `per`; a request takes one token, and a request that finds the bucket empty is
//! refused at once, before its body is read, with the number of whole seconds until a
//! token is back in `Retry-After`. A client is its IP address
//! ([`RateLimitKey::ClientIp`]) or its authenticated principal
//! ([`RateLimitKey::Principal`], which needs the [`AuthLayer`](super::AuthLayer) in
//! front; anonymous and refused callers then count by IP address).
//!
//! The refusal has the shape of the binding called ([`ErrorKind::RateLimited`]): on
//! the JSON-RPC path a JSON-RPC error object (`-32603`, `ErrorInfo.reason`
//! `RATE_LIMIT_EXCEEDED`) whose `id` is `null`, since the body that holds the request's
//! id is not read; anywhere else an AIP-193 body with `code` 429 and status
//! `RESOURCE_EXHAUSTED`. Both travel with status 429.
//!
//! The IP address comes from axum's `ConnectInfo<SocketAddr>`, which
//! [`A2aServer::serve`](crate::server::A2aServer::serve) provides; a router served
//! another way without it puts every client in one bucket. Buckets are kept in memory,
//! per server process; at most [`MAX_CLIENTS`] are remembered (full buckets are
//! forgotten first, since a new bucket starts full anyway).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::response::Response;
use futures::future::{Either, Ready};
use http::HeaderValue;
use tower_layer::Layer;
use tower_service::Service;

use super::auth::Authentication;
use crate::errors::{A2aError, ErrorKind, ErrorTable};

/// The most clients whose buckets are remembered at once.
pub const MAX_CLIENTS: usize = 100_000;

/// Who a bucket belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum RateLimitKey {
    /// One bucket per client IP address.
    #[default]
    ClientIp,
    /// One bucket per authenticated principal (its subject); callers without one count
    /// by IP address.
    Principal,
}

/// A token-bucket rate limit: on average `requests` per `per`, with bursts of up to
/// `burst` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed per `per`, on average.
    pub requests: u32,
    /// The period `requests` are counted over.
    pub per: Duration,
    /// The most requests a client may send at once after a quiet spell (the bucket's
    /// size); at least one.
    pub burst: u32,
    /// Who a bucket belongs to.
    pub key: RateLimitKey,
}

impl RateLimit {
    /// `requests` per second, with bursts of as many, per client IP address.
    pub fn per_second(requests: u32) -> Self {
        RateLimit { requests, per: Duration::from_secs(1), burst: requests.max(1), key: RateLimitKey::ClientIp }
    }

    /// `requests` per minute, with bursts of as many, per client IP address.
    pub fn per_minute(requests: u32) -> Self {
        RateLimit { requests, per: Duration::from_secs(60), burst: requests.max(1), key: RateLimitKey::ClientIp }
    }

    /// The same limit with bursts of up to `burst` requests.
    pub fn burst(self, burst: u32) -> Self {
        RateLimit { burst, ..self }
    }

    /// The same limit with buckets per `key`.
    pub fn by(self, key: RateLimitKey) -> Self {
        RateLimit { key, ..self }
    }

    /// Tokens added per second.
    fn rate(&self) -> f64 {
        let per = self.per.as_secs_f64();
        if per > 0.0 {
            f64::from(self.requests) / per
        } else {
            f64::INFINITY
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Client {
    Ip(IpAddr),
    Subject(String),
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The buckets of one limit.
#[derive(Debug)]
struct Buckets {
    limit: RateLimit,
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<Client, Bucket>>,
}

impl Buckets {
    fn new(limit: RateLimit) -> Self {
        Buckets { rate: limit.rate(), burst: f64::from(limit.burst.max(1)), limit, buckets: Mutex::new(HashMap::new()) }
    }

    fn refilled(&self, bucket: Bucket, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        (bucket.tokens + elapsed * self.rate).min(self.burst)
    }

    /// Takes a token for `client`, or says how long until there is one.
    fn take(&self, client: Client, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_CLIENTS && !buckets.contains_key(&client) {
            buckets.retain(|_, b| self.refilled(*b, now) < self.burst);
            if buckets.len() >= MAX_CLIENTS {
                // Every remembered client is mid-burst: forget them all rather than
                // grow without bound (they start again with full buckets).
                buckets.clear();
            }
        }
        let bucket = buckets.entry(client).or_insert(Bucket { tokens: self.burst, at: now });
        let tokens = self.refilled(*bucket, now);
        if tokens >= 1.0 {
            *bucket = Bucket { tokens: tokens - 1.0, at: now };
            Ok(())
        } else {
            *bucket = Bucket { tokens, at: now };
            let wait = if self.rate > 0.0 { (1.0 - tokens) / self.rate } else { f64::MAX };
            Err(Duration::try_from_secs_f64(wait).unwrap_or(Duration::MAX))
        }
    }
}

/// The tower layer that applies a [`RateLimit`] (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct RateLimitLayer {
    buckets: Arc<Buckets>,
    jsonrpc_path: Arc<str>,
    error_table: ErrorTable,
}

impl RateLimitLayer {
    /// A layer applying `limit`, answering refusals on `/` in the JSON-RPC shape (as
    /// the default [`HttpOptions`](crate::server::HttpOptions) serve JSON-RPC there).
    pub fn new(limit: RateLimit) -> Self {
        RateLimitLayer {
            buckets: Arc::new(Buckets::new(limit)),
            jsonrpc_path: Arc::from("/"),
            error_table: ErrorTable::V1_0_1,
        }
    }

    /// The same layer, answering in the JSON-RPC shape on `path` instead of `/`.
    pub fn jsonrpc_path(mut self, path: &str) -> Self {
        self.jsonrpc_path = Arc::from(path);
        self
    }

    /// The same layer, with HTTP statuses from `table` in the HTTP+JSON error body.
    pub fn error_table(mut self, table: ErrorTable) -> Self {
        self.error_table = table;
        self
    }

    /// The limit applied.
    pub fn limit(&self) -> RateLimit {
        self.buckets.limit
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimitService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RateLimitService { inner, layer: self.clone() }
    }
}

/// The service [`RateLimitLayer`] wraps around the router.
#[derive(Debug, Clone)]
pub struct RateLimitService<S> {
    inner: S,
    layer: RateLimitLayer,
}

impl<S, B> Service<http::Request<B>> for RateLimitService<S>
where
    S: Service<http::Request<B>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let ip = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |info| info.0.ip());
        let client = match self.layer.buckets.limit.key {
            RateLimitKey::ClientIp => Client::Ip(ip),
            RateLimitKey::Principal => match request.extensions().get::<Authentication>().and_then(|a| a.principal()) {
                Some(p) => Client::Subject(p.subject.clone()),
                None => Client::Ip(ip),
            },
        };
        match self.layer.buckets.take(client, Instant::now()) {
            Ok(()) => Either::Right(self.inner.call(request)),
            Err(wait) => {
                let jsonrpc =
                    request.method() == http::Method::POST && request.uri().path() == &*self.layer.jsonrpc_path;
                Either::Left(futures::future::ready(Ok(refusal(wait, jsonrpc, self.layer.error_table))))
            }
        }
    }
}

/// The 429 answer, in the JSON-RPC or the HTTP+JSON shape.
fn refusal(wait: Duration, jsonrpc: bool, table: ErrorTable) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let error = A2aError::new(ErrorKind::RateLimited)
        .with_message(format!("too many requests; retry in {} s", seconds.max(1)))
        .with("retryAfterSeconds", seconds.max(1).to_string());
    let mut response = if jsonrpc {
        crate::server::http::rpc_error_response(&error, None)
    } else {
        crate::server::http::rest_error(&error, table)
    };
    if let Ok(value) = HeaderValue::from_str(&seconds.max(1).to_string()) {
        response.headers_mut().insert(http::header::RETRY_AFTER, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_the_rate() {
        let buckets = Buckets::new(RateLimit::per_second(2).burst(3));
        let client = || Client::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(buckets.take(client(), start), Ok(()));
        }
        let wait = buckets.take(client(), start).expect_err("burst spent");
        assert_eq!(wait, Duration::from_millis(500));
        assert_eq!(buckets.take(client(), start + Duration::from_millis(500)), Ok(()));
        assert!(buckets.take(client(), start + Duration::from_millis(500)).is_err());
        // Another client has its own bucket.
        assert_eq!(buckets.take(Client::Subject("alice".into()), start), Ok(()));
    }

    #[test]
    fn remembered_clients_are_bounded() {
        let buckets = Buckets::new(RateLimit::per_minute(1));
        let now = Instant::now();
        for i in 0..(MAX_CLIENTS + 10) {
            let _ = buckets.take(Client::Subject(i.to_string()), now);
        }
        assert!(buckets.buckets.lock().unwrap().len() <= MAX_CLIENTS);
    }
}
