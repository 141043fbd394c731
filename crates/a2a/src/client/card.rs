//! Agent-card discovery (`/.well-known/agent-card.json`, then the pre-1.0
//! `/.well-known/agent.json`) and revalidation with the card's `ETag`.

use agentproto_codec::decode_slice;
use http::header::{ACCEPT, ETAG, IF_NONE_MATCH};
use http::StatusCode;

use super::error::parse_error_payload;
use super::{
    common_headers, select_interface, send_retrying, A2aClient, CallOptions, CardState, ClientError, ClientOptions,
};
use crate::v1::AgentCard;

/// The well-known card path of A2A 1.0.
pub const CARD_PATH: &str = "/.well-known/agent-card.json";
/// The card path used before (0.2), still served by some agents.
pub const LEGACY_CARD_PATH: &str = "/.well-known/agent.json";

/// What one card request produced.
#[allow(clippy::large_enum_variant)] // one per request, never stored
enum Fetched {
    Card(AgentCard, Option<String>),
    NotModified,
}

impl A2aClient {
    /// Fetches the agent card under `base_url` (its path prefix kept) and selects the
    /// interface to use. A 404 on `agent-card.json` falls back to `agent.json`. A
    /// `base_url` that itself ends in `.json` is taken as the card's URL.
    pub async fn discover(base_url: &str, opts: ClientOptions) -> Result<Self, ClientError> {
        let base = base_url.trim_end_matches('/');
        let candidates: Vec<String> = if base.ends_with(".json") {
            vec![base.to_owned()]
        } else {
            vec![format!("{base}{CARD_PATH}"), format!("{base}{LEGACY_CARD_PATH}")]
        };
        let http = match &opts.http_client {
            Some(c) => c.clone(),
            None => Self::http_client(&opts)?,
        };
        // A provisional client carries the headers and retry policy for the fetch.
        let probe = ProbeClient { http: http.clone(), opts: opts.clone() };
        let mut last_err = None;
        for (i, url) in candidates.iter().enumerate() {
            match probe.fetch(url, None).await {
                Ok(Fetched::Card(card, etag)) => {
                    let parsed = reqwest::Url::parse(url)
                        .map_err(|e| ClientError::InvalidRequest(format!("card URL `{url}`: {e}")))?;
                    let opts = ClientOptions { http_client: Some(http), ..opts };
                    return Self::build(opts, card, etag, Some(parsed));
                }
                Ok(Fetched::NotModified) => {
                    return Err(ClientError::Protocol(format!("{url} answered 304 to a request without a validator")))
                }
                Err(ClientError::Status { http_status: Some(404), .. }) if i + 1 < candidates.len() => {}
                Err(e) => {
                    last_err = Some(e);
                    break;
                }
            }
        }
        Err(last_err.unwrap_or_else(|| ClientError::Protocol(format!("no agent card under {base}"))))
    }

    /// Revalidates the card (`If-None-Match` with the stored `ETag`). `Ok(false)`: the
    /// server answered 304 (or the client was made with [`A2aClient::from_card`]) and
    /// the cached card stays; `Ok(true)`: a new card was stored and the interface
    /// selected again.
    pub async fn refresh_card(&self) -> Result<bool, ClientError> {
        let Some(url) = self.inner.card_url.clone() else { return Ok(false) };
        let etag = self.card_etag();
        let probe = ProbeClient { http: self.inner.http.clone(), opts: self.inner.opts.clone() };
        match probe.fetch(url.as_str(), etag.as_deref()).await? {
            Fetched::NotModified => Ok(false),
            Fetched::Card(card, new_etag) => {
                let iface = select_interface(&card, self.inner.opts.binding, Some(&url))?;
                let mut state = self.inner.state.write().unwrap_or_else(std::sync::PoisonError::into_inner);
                *state = CardState { card, etag: new_etag, iface };
                Ok(true)
            }
        }
    }
}

/// The part of a client that card requests need, available before a card exists.
struct ProbeClient {
    http: reqwest::Client,
    opts: ClientOptions,
}

impl ProbeClient {
    async fn fetch(&self, url: &str, etag: Option<&str>) -> Result<Fetched, ClientError> {
        let mut headers = common_headers(&self.opts, &CallOptions::default())?;
        if let Some(tag) = etag {
            if let Ok(v) = http::HeaderValue::from_str(tag) {
                headers.insert(IF_NONE_MATCH, v);
            }
        }
        let timeout = self.opts.request_timeout;
        let resp = send_retrying(&self.opts.retry, crate::retry::Repeat::Harmless, url, || {
            let b = self.http.get(url).headers(headers.clone()).header(ACCEPT, "application/json");
            match timeout {
                Some(t) => b.timeout(t),
                None => b,
            }
        })
        .await?;
        let status = resp.status();
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        let new_etag = resp.headers().get(ETAG).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let bytes = resp.bytes().await.map_err(|e| ClientError::transport(url, e))?;
        if !status.is_success() {
            return Err(parse_error_payload(&bytes, Some(status.as_u16())));
        }
        let card = decode_slice::<AgentCard>(&bytes, "$")
            .map_err(|e| ClientError::decode(format!("agent card at {url}"), e))?
            .value;
        Ok(Fetched::Card(card, new_etag))
    }
}
