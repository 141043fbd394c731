//! What the Streamable HTTP profile needs to know about a message to route it.
//!
//! The connection runtime never looks at method names; this transport has to, a
//! little: the RFD routes by connection and by session. Each scan reads only the few
//! members it needs (the rest is skipped unparsed) and is never the message's decode:
//! the connection decodes and validates every message as on stdio. A message the scan
//! cannot read is routed as connection-level, and the connection answers it as it
//! would on stdio.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The header naming an ACP connection.
pub const CONNECTION_ID_HEADER: &str = "acp-connection-id";
/// The header naming a session of that connection.
pub const SESSION_ID_HEADER: &str = "acp-session-id";

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SessionOf {
    #[serde(rename = "sessionId", default)]
    session_id: Option<String>,
}

/// A message id as a map key: its JSON text (`1`, `"a"`, `null`).
pub(crate) type IdKey = String;

/// A message, as far as routing cares.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Scan {
    /// The id's JSON text (a request's or a response's).
    pub(crate) id: Option<IdKey>,
    pub(crate) method: Option<String>,
    /// `params.sessionId`.
    pub(crate) session: Option<String>,
    /// Whether it is a response (no method; a result or an error).
    pub(crate) response: bool,
    /// A successful response (it has a `result`).
    pub(crate) success: bool,
    /// `result.sessionId`.
    pub(crate) result_session: Option<String>,
}

impl Scan {
    /// A request: a method and an id.
    pub(crate) fn is_request(&self) -> bool {
        self.method.is_some() && self.id.is_some()
    }
}

fn session_of(raw: Option<&RawValue>) -> Option<String> {
    let raw = raw?;
    if !raw.get().starts_with('{') {
        return None;
    }
    serde_json::from_str::<SessionOf>(raw.get()).ok()?.session_id
}

/// `None` when `message` is not a JSON object.
pub(crate) fn scan(message: &[u8]) -> Option<Scan> {
    // A derived struct would also read an array, positionally.
    if message.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let head: Head<'_> = serde_json::from_slice(message).ok()?;
    let response = head.method.is_none() && (head.result.is_some() || head.error.is_some());
    Some(Scan {
        id: head.id.map(|id| normalize_id(id.get())),
        method: head.method.map(|m| m.into_owned()),
        session: if response { None } else { session_of(head.params) },
        response,
        success: response && head.result.is_some(),
        result_session: if response { session_of(head.result) } else { None },
    })
}

/// The same id written the same way (`"a"` and `"\u0061"` are one id).
fn normalize_id(text: &str) -> IdKey {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => value.to_string(),
        Err(_) => text.to_owned(),
    }
}

/// Whether a body is a JSON array (a batch, which this transport refuses).
#[cfg(feature = "remote-server")]
pub(crate) fn is_batch(body: &[u8]) -> bool {
    body.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n')) == Some(&b'[')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_requests_responses_and_notifications() {
        let request = scan(br#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1"}}"#);
        let request = request.unwrap();
        assert!(request.is_request());
        assert_eq!(request.session.as_deref(), Some("s1"));
        let answer = scan(br#"{"jsonrpc":"2.0","id":"\u0061","result":{"sessionId":"s2"}}"#).unwrap();
        assert!(answer.response && answer.success);
        assert_eq!(answer.id.as_deref(), Some("\"a\""));
        assert_eq!(answer.result_session.as_deref(), Some("s2"));
        assert_eq!(scan(b"[1]"), None);
        #[cfg(feature = "remote-server")]
        assert!(is_batch(b"  \n[{}]"));
        #[cfg(feature = "remote-server")]
        assert!(!is_batch(b"{}"));
    }
}
