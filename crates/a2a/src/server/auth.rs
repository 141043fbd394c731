//! Authentication as the agent card declares it.
//!
//! When the card lists `securityRequirements`, every call except the public card must
//! satisfy one of them: each scheme a requirement names must find a credential that the
//! [`CredentialValidator`] accepts. API keys (header, query or cookie) and HTTP bearer
//! tokens are read here; anything else (OAuth 2, OpenID Connect, mTLS) is the
//! validator's business through [`Authenticator`], which replaces this logic entirely.

use std::collections::HashMap;
use std::sync::Arc;

use http::HeaderMap;

use crate::errors::{A2aError, ErrorKind};
use crate::v1::{AgentCard, SecurityScheme};

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// Who the caller is (a user or service name, as the validator says).
    pub subject: String,
    /// The tenant this caller is bound to, if its credential maps to one.
    pub tenant: Option<String>,
}

/// Checks one credential for one security scheme of the card.
pub trait CredentialValidator: Send + Sync + 'static {
    /// `scheme` is the scheme's name in `securitySchemes`; `credential` the API key or token.
    fn validate(&self, scheme: &str, credential: &str) -> Option<Principal>;
}

/// A fixed table of credentials, for configuration files and tests.
#[derive(Debug, Clone, Default)]
pub struct StaticCredentials {
    entries: HashMap<(String, String), Principal>,
}

impl StaticCredentials {
    /// An empty table, accepting nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `credential` for `scheme` as `principal`.
    pub fn with(mut self, scheme: &str, credential: &str, principal: Principal) -> Self {
        self.entries.insert((scheme.to_owned(), credential.to_owned()), principal);
        self
    }
}

impl CredentialValidator for StaticCredentials {
    fn validate(&self, scheme: &str, credential: &str) -> Option<Principal> {
        self.entries.get(&(scheme.to_owned(), credential.to_owned())).cloned()
    }
}

/// Decides who is calling. `Ok(None)`: anonymous (allowed when the card requires nothing).
pub trait Authenticator: Send + Sync + 'static {
    /// Reads the credentials of a request from its `headers` and `query` string: the
    /// caller, `Ok(None)` for an anonymous one, or the error to refuse it with
    /// (`Unauthenticated`, `PermissionDenied`). Runs on every request; keep it fast.
    fn authenticate(&self, headers: &HeaderMap, query: Option<&str>) -> Result<Option<Principal>, A2aError>;
}

/// The built-in authenticator: enforces the card's requirements with a validator.
pub struct CardAuthenticator {
    card: AgentCard,
    validator: Arc<dyn CredentialValidator>,
}

impl CardAuthenticator {
    /// Enforces `card`'s security requirements, asking `validator` about each credential.
    pub fn new(card: AgentCard, validator: Arc<dyn CredentialValidator>) -> Self {
        CardAuthenticator { card, validator }
    }

    fn credential(&self, scheme_name: &str, headers: &HeaderMap, query: Option<&str>) -> Option<String> {
        let scheme = self.card.security_schemes.get(scheme_name)?;
        match scheme {
            SecurityScheme::ApiKeySecurityScheme(k) => match k.location.to_ascii_lowercase().as_str() {
                "header" => headers.get(k.name.as_str())?.to_str().ok().map(str::to_owned),
                "query" => query_param(query?, &k.name),
                "cookie" => headers
                    .get_all(http::header::COOKIE)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .flat_map(|v| v.split(';'))
                    .find_map(|c| {
                        let (n, v) = c.trim().split_once('=')?;
                        (n == k.name).then(|| v.to_owned())
                    }),
                _ => None,
            },
            SecurityScheme::HttpAuthSecurityScheme(h) => {
                let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
                let (kind, cred) = value.split_once(' ')?;
                kind.eq_ignore_ascii_case(&h.scheme).then(|| cred.trim().to_owned())
            }
            // Token-based flows present a bearer token too; validating it is the validator's job.
            SecurityScheme::Oauth2SecurityScheme(_) | SecurityScheme::OpenIdConnectSecurityScheme(_) => {
                let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
                let (kind, cred) = value.split_once(' ')?;
                kind.eq_ignore_ascii_case("bearer").then(|| cred.trim().to_owned())
            }
            _ => None,
        }
    }
}

impl Authenticator for CardAuthenticator {
    fn authenticate(&self, headers: &HeaderMap, query: Option<&str>) -> Result<Option<Principal>, A2aError> {
        let requirements = &self.card.security_requirements;
        if requirements.is_empty() {
            return Ok(None);
        }
        let mut presented = false;
        for req in requirements {
            let mut who: Option<Principal> = None;
            let mut ok = true;
            for (name, _scopes) in &req.schemes.0 {
                match self.credential(name, headers, query) {
                    Some(cred) => {
                        presented = true;
                        match self.validator.validate(name, &cred) {
                            Some(p) => who = who.or(Some(p)),
                            None => ok = false,
                        }
                    }
                    None => ok = false,
                }
            }
            if ok {
                if let Some(p) = who {
                    return Ok(Some(p));
                }
            }
        }
        let msg = if presented {
            "the credentials presented are not valid"
        } else {
            "this agent requires authentication (see securitySchemes in its card)"
        };
        Err(A2aError::new(ErrorKind::Unauthenticated).with_message(msg))
    }
}

fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(k) == name).then(|| percent_decode(v))
    })
}

/// Decodes `%XX` escapes and `+` (as a space) of a query component.
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b+c%2"), "a b c%2");
        assert_eq!(percent_decode("%E2%9C%93"), "✓");
        assert_eq!(query_param("x=1&key=s%3Dcret", "key").as_deref(), Some("s=cret"));
    }
}
