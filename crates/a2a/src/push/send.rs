//! One delivery attempt: build the request from the stored config, send it, and sort
//! the result into delivered, worth retrying, or permanent.

use std::error::Error as StdError;
use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use http::StatusCode;

use super::guard::{Refused, SsrfGuard};
use crate::retry::{retry_after_seconds, Failure, Repeat, RetryPolicy};
use crate::store::Delivery;
use crate::v1;

/// The media type of an A2A push body.
pub const CONTENT_TYPE_A2A: &str = "application/a2a+json";
/// The token header Python, JS and Java send.
pub const TOKEN_HEADER_X: &str = "x-a2a-notification-token";
/// The token header Go sends.
pub const TOKEN_HEADER: &str = "a2a-notification-token";
/// The protocol version header.
pub const VERSION_HEADER: &str = "a2a-version";

/// How much of an error response's body is kept in the error message.
const ERROR_BODY_BYTES: usize = 200;

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Attempt {
    /// The receiver answered 2xx.
    Delivered,
    /// A failure that may go away: a timeout, a connection error, 408, 429 or 5xx.
    /// `retry_after` is what the receiver asked for on 429 or 503.
    Retry { error: String, retry_after: Option<Duration> },
    /// A failure that will not: a config that does not decode, a redirect, or any
    /// other 4xx.
    Permanent { error: String },
    /// The SSRF guard refused the target (permanent too).
    Refused { error: String },
}

/// Makes one attempt to deliver `delivery`.
pub(crate) async fn attempt(client: &reqwest::Client, guard: &SsrfGuard, delivery: &Delivery) -> Attempt {
    let config = match agentproto_codec::decode_slice::<v1::TaskPushNotificationConfig>(&delivery.config, "$") {
        Ok(decoded) => decoded.value,
        Err(e) => {
            return Attempt::Permanent { error: format!("push config {:?} does not decode: {e}", delivery.config_id) }
        }
    };
    let url = match guard.check_url(&config.url) {
        Ok(url) => url,
        Err(refusal) => return Attempt::Refused { error: refusal.to_string() },
    };
    let headers = match headers(&config) {
        Ok(headers) => headers,
        Err(error) => return Attempt::Permanent { error },
    };
    match client.post(url).headers(headers).body(delivery.event.clone()).send().await {
        Ok(response) => judge_response(response).await,
        Err(e) => judge_error(&e),
    }
}

/// The request headers a config asks for. A token or credentials that cannot be a
/// header value (a line break, say) make the config unusable.
fn headers(config: &v1::TaskPushNotificationConfig) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_A2A));
    headers.insert(HeaderName::from_static(VERSION_HEADER), HeaderValue::from_static("1.0"));
    if !config.token.is_empty() {
        let mut value = HeaderValue::from_str(&config.token)
            .map_err(|_| "push config token is not a valid header value".to_owned())?;
        value.set_sensitive(true);
        // The spec names no header; send both spellings the SDKs use (notes §7).
        headers.insert(HeaderName::from_static(TOKEN_HEADER_X), value.clone());
        headers.insert(HeaderName::from_static(TOKEN_HEADER), value);
    }
    if let Some(auth) = &config.authentication {
        if auth.scheme.trim().is_empty() {
            return Err("push config authentication has no scheme".to_owned());
        }
        let text = if auth.credentials.is_empty() {
            auth.scheme.clone()
        } else {
            format!("{} {}", auth.scheme, auth.credentials)
        };
        let mut value = HeaderValue::from_str(&text)
            .map_err(|_| "push config authentication is not a valid header value".to_owned())?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    Ok(headers)
}

/// Sorts a response by status.
///
/// - 2xx: delivered.
/// - 408, 429 and 5xx: the receiver is busy, down or slow; the same request can succeed
///   later, so it is retried ([`RetryPolicy::is_transient`] decides, with deliveries
///   counted as harmless to repeat).
/// - 3xx: redirects are never followed (a redirect could lead past the SSRF guard to an
///   address it refuses), and the same request will be redirected again: permanent.
/// - Any other 4xx: the receiver understood the request and rejected it (bad token,
///   unknown task, gone endpoint). Sending the same bytes again gets the same answer, so
///   retrying would only hammer the receiver and delay the dead letter an operator needs
///   to see.
async fn judge_response(mut response: reqwest::Response) -> Attempt {
    let status = response.status();
    if status.is_success() {
        return Attempt::Delivered;
    }
    let retry_after = match status {
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => retry_after_seconds(response.headers()),
        _ => None,
    };
    let mut error = format!("receiver answered HTTP {status}");
    if status.is_redirection() {
        error.push_str(" (redirects are not followed)");
    }
    // A short excerpt of the body helps whoever reads the dead letter. Reading is bounded
    // by the client's request timeout; a failure to read only loses the excerpt.
    if let Ok(Some(chunk)) = response.chunk().await {
        let excerpt = String::from_utf8_lossy(&chunk[..chunk.len().min(ERROR_BODY_BYTES)]);
        let excerpt = excerpt.trim();
        if !excerpt.is_empty() {
            error.push_str(": ");
            error.push_str(excerpt);
        }
    }
    // 1xx cannot end an exchange; a client that reports one saw a broken peer.
    let retryable =
        RetryPolicy::is_transient(Failure::Status(status.as_u16()), Repeat::Harmless) || status.is_informational();
    if retryable {
        Attempt::Retry { error, retry_after }
    } else {
        Attempt::Permanent { error }
    }
}

/// Sorts a transport error: a refusal by the guard's resolver and a request that could
/// not be built are permanent; timeouts, connection, TLS and I/O errors are retried.
fn judge_error(error: &reqwest::Error) -> Attempt {
    let text = chain(error);
    let mut source: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<Refused>() {
            return Attempt::Refused { error: refusal.to_string() };
        }
        source = e.source();
    }
    if error.is_builder() || error.is_redirect() {
        return Attempt::Permanent { error: text };
    }
    // Timeouts, connection, TLS and I/O errors: `Failure::NotSent` or `Failure::Lost`,
    // both transient for a delivery (see `RetryPolicy::is_transient`).
    Attempt::Retry { error: text, retry_after: None }
}

/// An error and its causes, `outer: inner: innermost`, without repeating a cause whose
/// text the previous message already contains.
fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_carry_both_token_spellings_and_authorization() {
        let mut config = v1::TaskPushNotificationConfig::new("https://example.com/hook");
        config.token = "tok".into();
        config.authentication = Some(v1::AuthenticationInfo { scheme: "Bearer".into(), credentials: "secret".into() });
        let headers = headers(&config).expect("headers");
        assert_eq!(headers[TOKEN_HEADER_X], "tok");
        assert_eq!(headers[TOKEN_HEADER], "tok");
        assert_eq!(headers[AUTHORIZATION], "Bearer secret");
        assert_eq!(headers[CONTENT_TYPE], CONTENT_TYPE_A2A);
        assert_eq!(headers[VERSION_HEADER], "1.0");
    }

    #[test]
    fn no_token_no_token_headers() {
        let config = v1::TaskPushNotificationConfig::new("https://example.com/hook");
        let headers = headers(&config).expect("headers");
        assert!(!headers.contains_key(TOKEN_HEADER_X));
        assert!(!headers.contains_key(TOKEN_HEADER));
        assert!(!headers.contains_key(AUTHORIZATION));
    }

    #[test]
    fn a_token_with_a_line_break_is_refused() {
        let mut config = v1::TaskPushNotificationConfig::new("https://example.com/hook");
        config.token = "a\r\nX-Evil: 1".into();
        assert!(headers(&config).is_err());
    }
}
