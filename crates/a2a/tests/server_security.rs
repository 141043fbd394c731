//! Tenants, card-declared authentication, the extended card, and idempotency keys, on
//! both bindings.
#![cfg(feature = "server")]
mod common;

use agentproto_a2a::server::auth::{Principal, StaticCredentials};
use agentproto_a2a::server::A2aServer;
use common::*;
use serde_json::{json, Value};

fn ids(list: &Value) -> Vec<String> {
    let mut v: Vec<String> =
        list["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_do_not_see_each_others_tasks() {
    let srv = start(|base| A2aServer::builder(demo(300), agentproto_a2a::demo::card(base))).await;
    let create = |b: B| {
        let srv = &srv;
        async move {
            let r = srv.run(b, Call::new("SendMessage", send(&mid("tck-input-required"), "hi")).tenant("acme")).await;
            r.ok()["task"]["id"].as_str().unwrap().to_owned()
        }
    };
    let mut acme = vec![create(B::Rest).await, create(B::Rpc).await];
    acme.sort();
    let default_task = srv.task(B::Rest, &mid("tck-input-required")).await["id"].as_str().unwrap().to_owned();
    for b in BOTH {
        for id in &acme {
            let get = |t: Option<&str>| {
                let c = Call::new("GetTask", json!({"id": id}));
                match t {
                    Some(t) => c.tenant(t),
                    None => c,
                }
            };
            srv.run(b, get(Some("acme"))).await.ok();
            srv.run(b, get(Some("other"))).await.err(TASK_NOT_FOUND);
            srv.run(b, get(None)).await.err(TASK_NOT_FOUND);
            // Nor can another tenant cancel, subscribe or attach push configs.
            let other = |op, p: Value| Call::new(op, p).tenant("other");
            srv.run(b, other("CancelTask", json!({"id": id}))).await.err(TASK_NOT_FOUND);
            srv.run(b, other("SubscribeToTask", json!({"id": id}))).await.err(TASK_NOT_FOUND);
            let mut follow = send(&mid("x"), "more");
            follow["message"]["taskId"] = json!(id);
            srv.run(b, other("SendMessage", follow)).await.err(TASK_NOT_FOUND);
            srv.run(
                b,
                other("CreateTaskPushNotificationConfig", json!({"taskId": id, "url": "https://example.com/h"})),
            )
            .await
            .err(TASK_NOT_FOUND);
        }
        srv.run(b, Call::new("GetTask", json!({"id": default_task})).tenant("acme")).await.err(TASK_NOT_FOUND);
        let r = srv.run(b, Call::new("ListTasks", json!({})).tenant("acme")).await;
        assert_eq!(ids(r.ok()), acme, "{}", r.text);
        let r = srv.run(b, Call::new("ListTasks", json!({})).tenant("other")).await;
        assert!(ids(r.ok()).is_empty(), "{}", r.text);
        assert_eq!(r.ok()["totalSize"], 0);
        let r = srv.call(b, "ListTasks", json!({})).await;
        assert_eq!(ids(r.ok()), vec![default_task.clone()], "{}", r.text);
    }
    // Two different tenants named by one request are refused.
    let mut c = Call::new("SendMessage", send(&mid("tck-complete-task"), "hi")).tenant("acme");
    c.params["tenant"] = json!("other");
    srv.run(B::Rest, c).await.err(INVALID_PARAMS);
}

/// A card requiring an API key (`X-API-Key`) or a bearer token; `key-1` is a user of the
/// default tenant, `tok-acme` is bound to tenant `acme`.
fn secured_card(base: &str, extended: bool) -> agentproto_a2a::v1::AgentCard {
    card_with(base, |c| {
        c["securitySchemes"] = json!({
            "apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}},
        });
        c["securityRequirements"] =
            json!([{"schemes": {"apiKey": {"list": []}}}, {"schemes": {"bearer": {"list": []}}}]);
        if extended {
            c["capabilities"]["extendedAgentCard"] = json!(true);
        }
    })
}

fn credentials() -> StaticCredentials {
    StaticCredentials::new().with("apiKey", "key-1", Principal { subject: "user-1".into(), tenant: None }).with(
        "bearer",
        "tok-acme",
        Principal { subject: "acme-bot".into(), tenant: Some("acme".into()) },
    )
}

async fn secured_server() -> Server {
    start(|base| {
        let mut ext = secured_card(base, true);
        ext.name = "agentproto demo agent (extended)".into();
        A2aServer::builder(demo(300), secured_card(base, true)).credentials(credentials()).extended_card(ext)
    })
    .await
}

const KEY: (&str, &str) = ("X-API-Key", "key-1");
const ACME: (&str, &str) = ("Authorization", "Bearer tok-acme");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_need_a_credential_the_card_declares() {
    let srv = secured_server().await;
    for b in BOTH {
        let list = || Call::new("ListTasks", json!({}));
        let r = srv.run(b, list()).await;
        r.err(UNAUTHENTICATED);
        assert!(r.header("www-authenticate").is_some(), "401 carries WWW-Authenticate");
        if b == B::Rpc {
            assert_eq!(r.body["id"], 7, "a JSON-RPC error body: {}", r.text);
        }
        srv.run(b, list().header("X-API-Key", "wrong")).await.err(UNAUTHENTICATED);
        srv.run(b, list().header("Authorization", "Bearer wrong")).await.err(UNAUTHENTICATED);
        srv.run(b, list().header("Authorization", "Basic a2V5LTE=")).await.err(UNAUTHENTICATED);
        srv.run(b, list().header("x-api-key", "KEY-1")).await.err(UNAUTHENTICATED);
        srv.run(b, list().header(KEY.0, KEY.1)).await.ok();
        srv.run(b, list().header(ACME.0, ACME.1)).await.ok();
        srv.run(b, list().header("authorization", "bearer tok-acme")).await.ok();
        // Every operation is behind the check, streams included.
        srv.run(b, Call::new("SendMessage", send(&mid("tck-complete-task"), "hi"))).await.err(UNAUTHENTICATED);
        srv.run(b, Call::new("SendStreamingMessage", send(&mid("tck-stream-001"), "hi"))).await.err(UNAUTHENTICATED);
    }
    // The card stays public.
    for path in ["/.well-known/agent-card.json", "/.well-known/agent.json"] {
        let r = srv.http.get(format!("{}{path}", srv.base)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let card: Value = r.json().await.unwrap();
        assert!(card["securitySchemes"]["apiKey"].is_object(), "{card}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_bound_token_sees_only_its_tenant() {
    let srv = secured_server().await;
    for b in BOTH {
        let as_acme = |c: Call| c.header(ACME.0, ACME.1);
        let as_user = |c: Call| c.header(KEY.0, KEY.1);
        let r = srv.run(b, as_acme(Call::new("SendMessage", send(&mid("tck-input-required"), "hi")))).await;
        let acme_task = r.ok()["task"]["id"].as_str().unwrap().to_owned();
        let r = srv.run(b, as_user(Call::new("SendMessage", send(&mid("tck-input-required"), "hi")))).await;
        let user_task = r.ok()["task"]["id"].as_str().unwrap().to_owned();

        // The token's tenant is implied; naming it explicitly is the same.
        for c in [Call::new("ListTasks", json!({})), Call::new("ListTasks", json!({})).tenant("acme")] {
            let r = srv.run(b, as_acme(c)).await;
            let got = ids(r.ok());
            assert!(got.contains(&acme_task) && !got.contains(&user_task), "{}", r.text);
        }
        let r = srv.run(b, as_user(Call::new("ListTasks", json!({})))).await;
        let got = ids(r.ok());
        assert!(got.contains(&user_task) && !got.contains(&acme_task), "{}", r.text);
        srv.run(b, as_acme(Call::new("GetTask", json!({"id": user_task})))).await.err(TASK_NOT_FOUND);
        srv.run(b, as_user(Call::new("GetTask", json!({"id": acme_task})))).await.err(TASK_NOT_FOUND);
        srv.run(b, as_user(Call::new("GetTask", json!({"id": acme_task})).tenant("acme"))).await.ok();
        // Another tenant than the token's: forbidden.
        srv.run(b, as_acme(Call::new("ListTasks", json!({})).tenant("other"))).await.err(PERMISSION_DENIED);
        srv.run(b, as_acme(Call::new("GetTask", json!({"id": acme_task})).tenant("other")))
            .await
            .err(PERMISSION_DENIED);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extended_card_needs_authentication() {
    let srv = secured_server().await;
    for b in BOTH {
        srv.run(b, Call::new("GetExtendedAgentCard", json!({}))).await.err(UNAUTHENTICATED);
        for cred in [KEY, ACME] {
            let r = srv.run(b, Call::new("GetExtendedAgentCard", json!({})).header(cred.0, cred.1)).await;
            assert_eq!(r.ok()["name"], "agentproto demo agent (extended)", "{}", r.text);
            assert_eq!(r.ok()["capabilities"]["extendedAgentCard"], true);
        }
    }
    // Declared and configured, but the card asks for no credentials: nobody is
    // authenticated, so nobody gets it.
    let open = start(|base| {
        let card = card_with(base, |c| c["capabilities"]["extendedAgentCard"] = json!(true));
        A2aServer::builder(demo(300), card.clone()).extended_card(card)
    })
    .await;
    for b in BOTH {
        open.run(b, Call::new("GetExtendedAgentCard", json!({}))).await.err(UNAUTHENTICATED);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_makes_send_message_happen_once() {
    for b in BOTH {
        let srv = start(|base| A2aServer::builder(demo(300), agentproto_a2a::demo::card(base))).await;
        let body = send(&mid("tck-artifact-text"), "hi");
        let keyed = |p: Value, k: &str| Call::new("SendMessage", p).header("Idempotency-Key", k);
        let first = srv.run(b, keyed(body.clone(), "k-1")).await;
        let again = srv.run(b, keyed(body.clone(), "k-1")).await;
        assert_eq!(first.ok()["task"]["id"], again.ok()["task"]["id"], "{}", again.text);
        assert_eq!(first.ok(), again.ok());
        let r = srv.call(b, "ListTasks", json!({})).await;
        assert_eq!(r.ok()["totalSize"], 1, "one task created: {}", r.text);
        // The same key with another body.
        let info = srv.run(b, keyed(send(&mid("tck-artifact-text"), "other"), "k-1")).await.err(INVALID_REQUEST);
        assert_eq!(info["metadata"]["idempotencyKey"], "k-1");
        // Another key, or none: new tasks.
        let other = srv.run(b, keyed(body.clone(), "k-2")).await;
        assert_ne!(other.ok()["task"]["id"], first.ok()["task"]["id"]);
        let n1 = srv.call(b, "SendMessage", body.clone()).await;
        let n2 = srv.call(b, "SendMessage", body.clone()).await;
        assert_ne!(n1.ok()["task"]["id"], n2.ok()["task"]["id"]);
        let r = srv.call(b, "ListTasks", json!({})).await;
        assert_eq!(r.ok()["totalSize"], 4, "{}", r.text);
        // Keys are per tenant.
        let t = srv.run(b, keyed(body.clone(), "k-1").tenant("acme")).await;
        assert_ne!(t.ok()["task"]["id"], first.ok()["task"]["id"]);
        // A refused request does not use up its key.
        let mut bad = send(&mid("x"), "hi");
        bad["message"]["taskId"] = json!("no-such-task");
        srv.run(b, keyed(bad.clone(), "k-3")).await.err(TASK_NOT_FOUND);
        srv.run(b, keyed(send(&mid("tck-complete-task"), "hi"), "k-3")).await.ok();
    }
}
