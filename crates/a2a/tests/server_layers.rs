//! The server's middleware over real sockets: the rate limit (per address and per
//! principal, on both bindings), CORS (preflights, allowed and other origins), the
//! authentication layer, and interceptors.
#![cfg(feature = "server")]
mod common;

use agentproto_a2a::errors::{A2aError, ErrorKind};
use agentproto_a2a::server::auth::{Principal, StaticCredentials};
use agentproto_a2a::server::layers::{Cors, RateLimit, RateLimitKey};
use agentproto_a2a::server::{A2aServer, CallContext};
use agentproto_a2a::v1::{Operation, Request};
use common::*;
use serde_json::json;

const RATE_LIMITED: E =
    E { code: -32603, http: 429, rpc_http: 429, status: "RESOURCE_EXHAUSTED", reason: "RATE_LIMIT_EXCEEDED" };

fn list() -> Call {
    Call::new("ListTasks", json!({}))
}

/// A refusal's `Retry-After`, in seconds.
fn retry_after(reply: &Reply) -> u64 {
    reply.header("retry-after").expect("Retry-After").parse().expect("delta-seconds")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_rate_limit_requests_get_429_with_retry_after_on_both_bindings() {
    // Two requests at once, then one a minute: the third within the minute is refused.
    let limit = RateLimit::per_minute(1).burst(2);
    let srv = start(|base| A2aServer::builder(demo(300), agentproto_a2a::demo::card(base)).rate_limit(limit)).await;
    srv.run(B::Rpc, list()).await.ok();
    srv.run(B::Rest, list()).await.ok();
    for b in BOTH {
        let r = srv.run(b, list()).await;
        let info = r.err(RATE_LIMITED);
        let wait = retry_after(&r);
        assert!((1..=60).contains(&wait), "a token is back within the minute: {wait}");
        assert_eq!(info["metadata"]["retryAfterSeconds"], wait.to_string(), "{}", r.text);
        if b == B::Rpc {
            // Refused before the body (and its id) is read.
            assert_eq!(r.body["id"], json!(null), "{}", r.text);
        }
    }
    // The card is behind the same limit.
    let card = srv.http.get(format!("{}/.well-known/agent-card.json", srv.base)).send().await.unwrap();
    assert_eq!(card.status(), 429);
}

fn secured(base: &str) -> agentproto_a2a::v1::AgentCard {
    card_with(base, |c| {
        c["securitySchemes"] = json!({"apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}});
        c["securityRequirements"] = json!([{"schemes": {"apiKey": {"list": []}}}]);
    })
}

fn two_users() -> StaticCredentials {
    let user = |name: &str| Principal { subject: name.into(), tenant: None };
    StaticCredentials::new().with("apiKey", "key-alice", user("alice")).with("apiKey", "key-bob", user("bob"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_by_principal_gives_each_caller_its_own_bucket() {
    let limit = RateLimit::per_minute(1).by(RateLimitKey::Principal);
    let srv =
        start(|base| A2aServer::builder(demo(300), secured(base)).credentials(two_users()).rate_limit(limit)).await;
    let as_user = |key: &str| list().header("X-API-Key", key);
    srv.run(B::Rest, as_user("key-alice")).await.ok();
    srv.run(B::Rest, as_user("key-alice")).await.err(RATE_LIMITED);
    // Same address, another principal: a bucket of its own.
    srv.run(B::Rpc, as_user("key-bob")).await.ok();
    srv.run(B::Rpc, as_user("key-bob")).await.err(RATE_LIMITED);
    // Anonymous callers count by address: refused as unauthenticated once, then limited.
    srv.run(B::Rest, list()).await.err(UNAUTHENTICATED);
    srv.run(B::Rest, list()).await.err(RATE_LIMITED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auth_layer_refuses_in_the_binding_shape_with_the_request_id() {
    let srv = start(|base| A2aServer::builder(demo(300), secured(base)).credentials(two_users())).await;
    for b in BOTH {
        let r = srv.run(b, list()).await;
        r.err(UNAUTHENTICATED);
        if b == B::Rpc {
            assert_eq!(r.body["id"], 7, "{}", r.text);
        }
        srv.run(b, list().header("X-API-Key", "key-bob")).await.ok();
    }
    // The public card needs no credential.
    let card = srv.http.get(format!("{}/.well-known/agent-card.json", srv.base)).send().await.unwrap();
    assert_eq!(card.status(), 200);
}

const PAGE: &str = "https://app.example";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_answers_preflights_from_allowed_origins_only() {
    let srv = start(|base| {
        A2aServer::builder(demo(300), agentproto_a2a::demo::card(base))
            .cors(Cors::origins([PAGE]))
            .rate_limit(RateLimit::per_minute(1).burst(2))
    })
    .await;
    let preflight = |origin: &'static str| {
        srv.http
            .request(reqwest::Method::OPTIONS, format!("{}/", srv.base))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header("Access-Control-Request-Headers", "content-type, a2a-version, x-api-key")
            .send()
    };
    let ok = within("preflight", preflight(PAGE)).await.unwrap();
    assert_eq!(ok.status(), 200);
    let h = ok.headers();
    assert_eq!(h["access-control-allow-origin"], PAGE);
    let methods = h["access-control-allow-methods"].to_str().unwrap().to_ascii_uppercase();
    assert!(methods.contains("POST") && methods.contains("GET") && methods.contains("DELETE"), "{methods}");
    let headers = h["access-control-allow-headers"].to_str().unwrap().to_ascii_lowercase();
    assert!(headers.contains("a2a-version") && headers.contains("x-api-key"), "{headers}");
    let other = within("preflight", preflight("https://evil.example")).await.unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none(), "no CORS grant for another origin");

    // A call from the page is marked for it, and so is a refusal by a later layer.
    let call = || list().header("Origin", PAGE);
    let r = srv.run(B::Rest, call()).await;
    r.ok();
    assert_eq!(r.header("access-control-allow-origin"), Some(PAGE));
    let exposed = r.header("access-control-expose-headers").unwrap_or("").to_ascii_lowercase();
    assert!(exposed.contains("retry-after"), "{exposed}");
    srv.run(B::Rpc, call()).await.ok();
    let refused = srv.run(B::Rpc, call()).await;
    refused.err(RATE_LIMITED);
    assert_eq!(refused.header("access-control-allow-origin"), Some(PAGE));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interceptors_see_every_call_and_may_refuse_it() {
    let read_only = |_: &CallContext, request: &Request| match request.operation() {
        Operation::CancelTask => {
            Err(A2aError::new(ErrorKind::PermissionDenied).with_message("this agent is read-only"))
        }
        _ => Ok(()),
    };
    let srv =
        start(|base| A2aServer::builder(demo(300), agentproto_a2a::demo::card(base)).interceptor(read_only)).await;
    for b in BOTH {
        let task = srv.task(b, &mid("tck-input-required")).await;
        srv.call(b, "GetTask", json!({"id": task["id"]})).await.ok();
        srv.call(b, "CancelTask", json!({"id": task["id"]})).await.err(PERMISSION_DENIED);
    }
}
