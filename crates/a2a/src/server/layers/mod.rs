//! The server's middleware: the tower layers every HTTP request goes through before a
//! binding sees it, and the [`Interceptor`]s every decoded call goes through before
//! the core runs it.
//!
//! [`A2aServer::router`](crate::server::A2aServer::router) is the bindings' router
//! wrapped in these layers, outermost first, each present only when configured on the
//! [`Builder`](crate::server::Builder):
//!
//! 1. **CORS** ([`Cors`], `Builder::cors`): answers preflights from allowed origins and
//!    marks the answers to them, refusals included, so that a page can read them.
//! 2. **Authentication** ([`AuthLayer`], `Builder::credentials` or
//!    `Builder::authenticator`): asks the [`Authenticator`] about the request's
//!    credentials and leaves its verdict in the request ([`Authentication`]); the
//!    binding refuses a failed one in its own error shape (401 or 403), after reading
//!    the request, so that a JSON-RPC refusal carries the request's id.
//! 3. **Rate limiting** ([`RateLimitLayer`], `Builder::rate_limit`): a token bucket per
//!    client IP address or per principal; over the limit, 429 with `Retry-After`
//!    before the body is read.
//!
//! Then the bindings (the card, JSON-RPC, HTTP+JSON), and for each decoded call the
//! interceptors (`Builder::interceptor`), then the core. The connection limits of
//! [`HttpOptions`](crate::server::HttpOptions) (timeouts, connection count) sit below
//! all of this, in [`A2aServer::serve`](crate::server::A2aServer::serve)'s accept loop.
//!
//! The layers are public so that an application mounting the router in a larger axum
//! application can put the same ones around its own routes.

pub mod auth;
pub mod cors;
pub mod interceptor;
pub mod rate_limit;

use std::sync::Arc;

use axum::Router;

pub use auth::{AuthLayer, AuthService, Authentication};
pub use cors::Cors;
pub use interceptor::Interceptor;
pub use rate_limit::{RateLimit, RateLimitKey, RateLimitLayer, RateLimitService, MAX_CLIENTS};

use crate::server::auth::Authenticator;

/// The configured layers of one server.
#[derive(Default)]
pub(crate) struct Stack {
    pub(crate) auth: Option<Arc<dyn Authenticator>>,
    pub(crate) rate_limit: Option<RateLimitLayer>,
    pub(crate) cors: Option<Cors>,
}

impl Stack {
    /// `router` inside the layers, in the order the module documentation gives.
    pub(crate) fn wrap(self, mut router: Router) -> Router {
        // `Router::layer` wraps what is there: the last one added is the outermost.
        if let Some(rate_limit) = self.rate_limit {
            router = router.layer(rate_limit);
        }
        if let Some(auth) = self.auth {
            router = router.layer(AuthLayer::new(auth));
        }
        if let Some(cors) = self.cors {
            router = router.layer(cors.layer());
        }
        router
    }
}
