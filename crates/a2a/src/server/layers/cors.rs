//! [`Cors`]: which browser origins may call the agent (tower-http's CORS layer,
//! configured for A2A).
//!
//! A preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin
//! is answered `200` with the allowed methods (`GET`, `POST`, `DELETE`, the verbs of
//! both bindings) and the request headers it asked for (A2A's own, `Authorization` and
//! an API key header of any name); other preflights get no CORS headers, which the
//! browser reads as a refusal. Answers to allowed origins carry
//! `Access-Control-Allow-Origin` and expose the headers a client reads (`ETag`,
//! `Last-Modified`, `Retry-After`, `WWW-Authenticate`). Credentials mode (cookies) is
//! not enabled: A2A credentials travel in headers the caller sets itself.

use std::time::Duration;

use http::{HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};

/// The browser origins allowed to call the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cors {
    origins: Origins,
    max_age: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Origins {
    Any,
    List(Vec<String>),
}

impl Cors {
    /// Allows these origins (`scheme://host[:port]`, compared exactly).
    pub fn origins<S: Into<String>>(origins: impl IntoIterator<Item = S>) -> Self {
        Cors {
            origins: Origins::List(origins.into_iter().map(Into::into).collect()),
            max_age: Duration::from_secs(600),
        }
    }

    /// Allows every origin (`Access-Control-Allow-Origin: *`): for agents meant to be
    /// called from any page.
    pub fn any_origin() -> Self {
        Cors { origins: Origins::Any, max_age: Duration::from_secs(600) }
    }

    /// How long a browser may cache a preflight's answer (10 minutes unless set).
    pub fn max_age(self, max_age: Duration) -> Self {
        Cors { max_age, ..self }
    }

    /// Whether `origin` is allowed.
    pub fn allows(&self, origin: &str) -> bool {
        match &self.origins {
            Origins::Any => true,
            Origins::List(list) => list.iter().any(|o| o.trim_end_matches('/') == origin),
        }
    }

    /// The tower-http layer.
    pub(crate) fn layer(&self) -> CorsLayer {
        let origin = match &self.origins {
            Origins::Any => AllowOrigin::any(),
            Origins::List(list) => AllowOrigin::list(
                list.iter().filter_map(|o| HeaderValue::from_str(o.trim_end_matches('/')).ok()).collect::<Vec<_>>(),
            ),
        };
        CorsLayer::new()
            .allow_origin(origin)
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers([
                http::header::ETAG,
                http::header::LAST_MODIFIED,
                http::header::RETRY_AFTER,
                http::header::WWW_AUTHENTICATE,
                HeaderName::from_static("a2a-version"),
            ])
            .max_age(self.max_age)
    }
}
