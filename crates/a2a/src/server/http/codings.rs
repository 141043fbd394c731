//! The codings a request may come in: its transfer codings (RFC 9112 §6.1) and its
//! content codings (RFC 9110 §8.4), checked before any route sees the request.
//!
//! The server decodes `chunked` framing only (hyper does it) and no content coding:
//! a body in any other coding would be read as if it were plain JSON, so it is refused
//! instead of being answered as if it had been understood.
//!
//! - A `Transfer-Encoding` with a coding other than `chunked` (`gzip, chunked`) is
//!   answered `501 Not Implemented` (RFC 9112 §6.1) and the connection is closed.
//! - A `Content-Encoding` other than `identity` is answered `415 Unsupported Media
//!   Type` with `Accept-Encoding: identity`, the codings that would have been accepted
//!   (RFC 9110 §15.5.16).
//!
//! The answers are plain text, as the accept loop's `503` is: no binding has read the
//! request yet, so there is no JSON-RPC id to answer with.

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, StatusCode};

/// Refuses a request in a coding the server does not decode; passes the others on.
pub(crate) async fn check_codings(request: Request, next: Next) -> Response {
    if let Some(coding) = foreign(request.headers(), header::TRANSFER_ENCODING, "chunked") {
        let mut answer = plain(
            StatusCode::NOT_IMPLEMENTED,
            format!("transfer coding \"{coding}\" is not supported; only chunked is\n"),
        );
        answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return answer;
    }
    if let Some(coding) = foreign(request.headers(), header::CONTENT_ENCODING, "identity") {
        let mut answer = plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("content coding \"{coding}\" is not supported; send the body without one\n"),
        );
        answer.headers_mut().insert(header::ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        return answer;
    }
    next.run(request).await
}

/// The first coding listed in the `name` fields (each a comma-separated list, codings
/// compared without case and without parameters) that is not `allowed`; a value that
/// is not text counts as such a coding.
fn foreign(headers: &HeaderMap, name: header::HeaderName, allowed: &str) -> Option<String> {
    for value in headers.get_all(name) {
        let Ok(text) = value.to_str() else { return Some(String::from_utf8_lossy(value.as_bytes()).into_owned()) };
        for coding in text.split(',') {
            let token = coding.split(';').next().unwrap_or("").trim();
            if !token.is_empty() && !token.eq_ignore_ascii_case(allowed) {
                return Some(token.to_owned());
            }
        }
    }
    None
}

fn plain(status: StatusCode, text: String) -> Response {
    let mut answer = Response::new(Body::from(text));
    *answer.status_mut() = status;
    answer.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn only_the_allowed_coding_passes() {
        let te = |pairs| foreign(&headers(pairs), header::TRANSFER_ENCODING, "chunked");
        assert_eq!(te(&[]), None);
        assert_eq!(te(&[("transfer-encoding", "chunked")]), None);
        assert_eq!(te(&[("transfer-encoding", "Chunked")]), None);
        assert_eq!(te(&[("transfer-encoding", "gzip, chunked")]).as_deref(), Some("gzip"));
        assert_eq!(te(&[("transfer-encoding", "gzip"), ("transfer-encoding", "chunked")]).as_deref(), Some("gzip"));
        let ce = |pairs| foreign(&headers(pairs), header::CONTENT_ENCODING, "identity");
        assert_eq!(ce(&[("content-encoding", "identity")]), None);
        assert_eq!(ce(&[("content-encoding", "")]), None);
        assert_eq!(ce(&[("content-encoding", "br")]).as_deref(), Some("br"));
        assert_eq!(ce(&[("content-encoding", "identity, gzip")]).as_deref(), Some("gzip"));
    }
}
