//! [`AuthLayer`]: runs the [`Authenticator`] once per request, before any handler, and
//! leaves its verdict in the request's extensions as an [`Authentication`].
//!
//! The layer decides and the binding answers: a refused caller gets its error in the
//! shape of the binding it called (a JSON-RPC error object carrying the request's id,
//! or an AIP-193 body), which only the handler that read the request can write. A
//! handler that finds no [`Authentication`] (the router served without this layer)
//! treats the caller as anonymous.

use std::sync::Arc;
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use crate::errors::A2aError;
use crate::server::auth::{Authenticator, Principal};

/// What the authenticator made of a request's credentials.
#[derive(Debug, Clone)]
pub struct Authentication(Result<Option<Principal>, A2aError>);

impl Authentication {
    /// The verdict of an authenticator.
    pub(crate) fn new(outcome: Result<Option<Principal>, A2aError>) -> Self {
        Authentication(outcome)
    }

    /// The verdict: `Ok(None)` for an anonymous caller the card allows, `Ok(Some(_))`
    /// for an authenticated one, `Err` for a caller to refuse.
    pub fn outcome(&self) -> Result<Option<&Principal>, &A2aError> {
        self.0.as_ref().map(Option::as_ref)
    }

    /// The authenticated caller, if any.
    pub fn principal(&self) -> Option<&Principal> {
        self.0.as_ref().ok().and_then(Option::as_ref)
    }
}

/// The tower layer that authenticates every request with an [`Authenticator`] (see the
/// [module documentation](self)).
#[derive(Clone)]
pub struct AuthLayer {
    authenticator: Arc<dyn Authenticator>,
}

impl AuthLayer {
    /// A layer asking `authenticator` about every request.
    pub fn new(authenticator: Arc<dyn Authenticator>) -> Self {
        AuthLayer { authenticator }
    }
}

impl std::fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayer").finish_non_exhaustive()
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AuthService { inner, authenticator: Arc::clone(&self.authenticator) }
    }
}

/// The service [`AuthLayer`] wraps around the router.
#[derive(Clone)]
pub struct AuthService<S> {
    inner: S,
    authenticator: Arc<dyn Authenticator>,
}

impl<S> std::fmt::Debug for AuthService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthService").finish_non_exhaustive()
    }
}

impl<S, B> Service<http::Request<B>> for AuthService<S>
where
    S: Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let outcome = self.authenticator.authenticate(request.headers(), request.uri().query());
        request.extensions_mut().insert(Authentication::new(outcome));
        self.inner.call(request)
    }
}
