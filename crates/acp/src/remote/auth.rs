//! [`BearerAuth`]: a `tower` layer that admits only requests carrying
//! `Authorization: Bearer <token>`; the others are answered 401. An example of the
//! layer point of [`RemoteServer::serve_with`](super::RemoteServer::serve_with): any
//! `tower` layer over [`AcpService`](super::AcpService) fits there.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, FutureExt};
use http::{header, HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;

use super::server::{reply, AcpBody};

/// Admits requests carrying one of the accepted bearer tokens.
#[derive(Clone)]
pub struct BearerAuth {
    tokens: Arc<Vec<Vec<u8>>>,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth").field("tokens", &self.tokens.len()).finish()
    }
}

impl BearerAuth {
    /// Accepts `token`.
    pub fn new(token: impl Into<String>) -> BearerAuth {
        BearerAuth { tokens: Arc::new(vec![token.into().into_bytes()]) }
    }

    fn admits(&self, value: Option<&HeaderValue>) -> bool {
        let Some(given) = value.and_then(|v| v.as_bytes().strip_prefix(b"Bearer ")) else { return false };
        self.tokens.iter().any(|token| same(token, given))
    }
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl<S> tower_layer::Layer<S> for BearerAuth {
    type Service = BearerAuthService<S>;

    fn layer(&self, inner: S) -> BearerAuthService<S> {
        BearerAuthService { auth: self.clone(), inner }
    }
}

/// The service of [`BearerAuth`].
#[derive(Clone, Debug)]
pub struct BearerAuthService<S> {
    auth: BearerAuth,
    inner: S,
}

impl<S> tower_service::Service<Request<Incoming>> for BearerAuthService<S>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<AcpBody>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response<AcpBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<AcpBody>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        if self.auth.admits(request.headers().get(header::AUTHORIZATION)) {
            return self.inner.call(request).boxed();
        }
        let mut response = reply(StatusCode::UNAUTHORIZED, "a bearer token is required");
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        futures::future::ready(Ok(response)).boxed()
    }
}
