//! What every binding does with a call before the core sees it, the same on JSON-RPC,
//! HTTP+JSON and gRPC: the A2A version it asks for, and its [`CallContext`] (tenant,
//! principal, resume point, idempotency key, extensions). Reads an `http::HeaderMap`
//! (gRPC metadata converts to one); knows nothing of any binding's framing.

use http::HeaderMap;

use crate::errors::{A2aError, ErrorKind};
use crate::server::auth::percent_decode;
use crate::server::core::CallContext;
use crate::server::layers::auth::Authentication;

/// What a request without an `A2A-Version` is taken to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingVersion {
    /// A2A 0.3, as the specification requires (answered `-32009` when 0.3 is not served).
    #[default]
    V0_3,
    /// A2A 1.0: a lenient mode for peers and test kits that omit the header.
    V1_0,
}

/// The options every binding reads a call by.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallRules {
    /// What a request without `A2A-Version` is taken to be.
    pub(crate) missing_version: MissingVersion,
    /// A header that names the tenant, if the deployment routes tenants by header.
    pub(crate) tenant_header: Option<String>,
}

/// The protocol version a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V03,
}

/// The bindings the server serves; they do not serve the same versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// 1.0, and 0.3 through its own method names (`message/send`, …).
    JsonRpc,
    /// 1.0 only (0.3's REST paths were different: `/v1/message:send`).
    Rest,
    /// 1.0 only, and a call without `a2a-version` is 1.0: 0.3's gRPC service was
    /// another one (`a2a.v1`), so nothing reaching this one can be 0.3.
    #[cfg(feature = "grpc")]
    Grpc,
}

impl Binding {
    fn supported_versions(self) -> &'static str {
        match self {
            Binding::JsonRpc => "1.0, 0.3",
            _ => "1.0",
        }
    }

    /// Whether every call is 1.0, with or without the header (gRPC).
    fn always_v1(self) -> bool {
        #[cfg(feature = "grpc")]
        return self == Binding::Grpc;
        #[cfg(not(feature = "grpc"))]
        false
    }
}

/// The version a request asks for (`A2A-Version`, or the query parameter of that name),
/// or the error naming what `binding` serves.
pub(crate) fn version(
    rules: &CallRules,
    headers: &HeaderMap,
    query: Option<&str>,
    binding: Binding,
) -> Result<Version, A2aError> {
    let header = headers.get("a2a-version").and_then(|v| v.to_str().ok()).map(str::trim).map(str::to_owned);
    let param = query.and_then(|q| {
        q.split('&').find_map(|p| {
            p.split_once('=').filter(|(k, _)| k.eq_ignore_ascii_case("A2A-Version")).map(|(_, v)| percent_decode(v))
        })
    });
    let v = header.or(param).unwrap_or_default();
    let mut parts = v.split('.');
    match (parts.next(), parts.next()) {
        (Some(""), None) if binding.always_v1() => Ok(Version::V1),
        (Some(""), None) => Ok(match rules.missing_version {
            MissingVersion::V0_3 => Version::V03,
            MissingVersion::V1_0 => Version::V1,
        }),
        (Some("1"), Some("0")) => Ok(Version::V1),
        (Some("0"), Some("3")) if !binding.always_v1() => Ok(Version::V03),
        _ => {
            let served = match binding {
                Binding::JsonRpc => "1.0 (with A2A-Version: 1.0) and 0.3 (without the header)",
                _ => "1.0",
            };
            Err(A2aError::new(ErrorKind::VersionNotSupported)
                .with_message(format!("A2A version {v:?} is not supported; this interface serves {served}"))
                .with("version", v)
                .with("supportedVersions", binding.supported_versions()))
        }
    }
}

/// A request taken as 0.3 (no `A2A-Version`) that 0.3 cannot answer.
pub(crate) fn v03_refused(binding: Binding, method: &str) -> A2aError {
    let message = match binding {
        Binding::JsonRpc => format!(
            "a request without an A2A-Version header is A2A 0.3, and {method:?} is not a 0.3 method; this interface \
             serves 0.3 under its own method names (message/send, message/stream, tasks/get, tasks/cancel, \
             tasks/resubscribe, tasks/pushNotificationConfig/*, agent/getAuthenticatedExtendedCard) and 1.0 with \
             A2A-Version: 1.0"
        ),
        _ => "a request without an A2A-Version header is A2A 0.3, which the HTTP+JSON interface does not serve (it \
              serves 1.0); send A2A-Version: 1.0"
            .to_owned(),
    };
    A2aError::new(ErrorKind::VersionNotSupported)
        .with_message(message)
        .with("version", "0.3")
        .with("supportedVersions", binding.supported_versions())
}

/// The verdict of the authentication layer (anonymous without one), then the tenant:
/// from the path, the request, a header, or the credential; then what the headers say
/// about the call.
pub(crate) fn call_context_of(
    rules: &CallRules,
    headers: &HeaderMap,
    authentication: Option<&Authentication>,
    path_tenant: Option<&str>,
    request_tenant: &str,
) -> Result<CallContext, A2aError> {
    let principal = match authentication.map(Authentication::outcome) {
        Some(Ok(principal)) => principal.cloned(),
        Some(Err(e)) => return Err(e.clone()),
        None => None,
    };
    let header_tenant = rules
        .tenant_header
        .as_deref()
        .and_then(|h| headers.get(h))
        .and_then(|v| v.to_str().ok())
        .filter(|s| !s.is_empty());
    let mut asked: Option<&str> = None;
    for t in [path_tenant, (!request_tenant.is_empty()).then_some(request_tenant), header_tenant].into_iter().flatten()
    {
        match asked {
            Some(prev) if prev != t => {
                return Err(A2aError::new(ErrorKind::InvalidParams)
                    .with_message(format!("the request names two tenants, {prev:?} and {t:?}"))
                    .with("path", "$.params.tenant"));
            }
            _ => asked = Some(t),
        }
    }
    let bound = principal.as_ref().and_then(|p| p.tenant.as_deref());
    let tenant = match (asked, bound) {
        (Some(a), Some(b)) if a != b => {
            return Err(A2aError::new(ErrorKind::PermissionDenied)
                .with_message(format!("these credentials do not give access to tenant {a:?}")))
        }
        (Some(a), _) => a.to_owned(),
        (None, Some(b)) => b.to_owned(),
        (None, None) => String::new(),
    };
    let last_event_id = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok());
    let idempotency_key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty() && s.len() <= 255);
    let extensions = headers
        .get_all("a2a-extensions")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    Ok(CallContext { tenant, principal, last_event_id, idempotency_key, extensions })
}
