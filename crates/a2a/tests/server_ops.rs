//! The eleven operations on both bindings, their success and error paths, the exact
//! wire codes (JSON-RPC code, REST status + AIP-193 body + ErrorInfo.reason), and the
//! HTTP surface around them (card, versions, media types, body limit).
#![cfg(feature = "server")]
mod common;

use std::time::Instant;

use agentproto_a2a::errors::ErrorTable;
use agentproto_a2a::server::{auth::Principal, auth::StaticCredentials, A2aServer, HttpOptions};
use agentproto_a2a::store::memory::MemoryOptions;
use common::*;
use serde_json::{json, Value};

/// The demo agent (short delay) that accepts only text/plain parts.
async fn demo_server() -> Server {
    start(|base| {
        A2aServer::builder(demo(300), agentproto_a2a::demo::card(base))
            .memory(MemoryOptions::default())
            .accepted_media_types(vec!["text/plain".into()])
    })
    .await
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_else(|| panic!("no state in {task}"))
}

fn first_text(v: &Value) -> &str {
    v["parts"][0]["text"].as_str().unwrap_or_else(|| panic!("no text part in {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_message_follows_the_tck_contract_on_both_bindings() {
    let srv = demo_server().await;
    for b in BOTH {
        // (prefix, final state, check of the answer)
        type Check = fn(&Value);
        let cases: &[(&str, &str, Check)] = &[
            ("tck-complete-task", "TASK_STATE_COMPLETED", |t| {
                assert_eq!(first_text(&t["status"]["message"]), "Hello from TCK");
                assert_eq!(t["status"]["message"]["role"], "ROLE_AGENT");
            }),
            ("tck-artifact-text", "TASK_STATE_COMPLETED", |t| {
                assert_eq!(first_text(&t["artifacts"][0]), "Generated text content");
            }),
            ("tck-artifact-file", "TASK_STATE_COMPLETED", |t| {
                let p = &t["artifacts"][0]["parts"][0];
                assert_eq!(
                    (&p["raw"], &p["mediaType"], &p["filename"]),
                    (&json!("dGNr"), &json!("text/plain"), &json!("output.txt"))
                );
            }),
            ("tck-artifact-file-url", "TASK_STATE_COMPLETED", |t| {
                assert_eq!(t["artifacts"][0]["parts"][0]["url"], "https://example.com/output.txt");
            }),
            ("tck-artifact-data", "TASK_STATE_COMPLETED", |t| {
                assert_eq!(t["artifacts"][0]["parts"][0]["data"], json!({"key": "value", "count": 42}));
            }),
            ("tck-reject-task", "TASK_STATE_REJECTED", |t| {
                assert_eq!(first_text(&t["status"]["message"]), "rejected");
            }),
            ("tck-input-required", "TASK_STATE_INPUT_REQUIRED", |_| {}),
            ("plain-hello", "TASK_STATE_COMPLETED", |t| {
                assert_eq!(first_text(&t["artifacts"][0]), "hi");
            }),
        ];
        for (prefix, want, check) in cases {
            let r = srv.call(b, "SendMessage", send(&mid(prefix), "hi")).await;
            let task = &r.ok()["task"];
            assert_eq!(state(task), *want, "{prefix} on {b:?}: {}", r.text);
            assert!(!task["id"].as_str().unwrap().is_empty() && !task["contextId"].as_str().unwrap().is_empty());
            assert_eq!(task["history"][0]["role"], "ROLE_USER", "{}", r.text);
            check(task);
        }
        let r = srv.call(b, "SendMessage", send(&mid("tck-message-response"), "hi")).await;
        let m = &r.ok()["message"];
        assert_eq!(first_text(m), "Direct message response", "{}", r.text);
        assert!(r.ok().get("task").is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_message_errors_on_both_bindings() {
    let srv = demo_server().await;
    for b in BOTH {
        let done = srv.task(b, &mid("tck-complete-task")).await;
        let waiting = srv.task(b, &mid("tck-input-required")).await;
        let with = |f: &dyn Fn(&mut Value)| {
            let mut p = send(&mid("x"), "more");
            f(&mut p);
            p
        };
        let cases: Vec<(&str, Value, E, Option<&str>)> = vec![
            ("unknown taskId", with(&|p| p["message"]["taskId"] = json!("no-such-task")), TASK_NOT_FOUND, None),
            ("terminal task", with(&|p| p["message"]["taskId"] = done["id"].clone()), UNSUPPORTED, None),
            (
                "mismatched contextId",
                with(&|p| {
                    p["message"]["taskId"] = waiting["id"].clone();
                    p["message"]["contextId"] = json!("another-context");
                }),
                INVALID_PARAMS,
                Some("message.contextId"),
            ),
            (
                "unsupported media type",
                with(&|p| {
                    p["message"]["parts"] = json!([{"raw": "dGNr", "mediaType": "application/x-unsupported-tck-type"}])
                }),
                CONTENT_TYPE,
                Some("message.parts[0].mediaType"),
            ),
            (
                "missing role",
                with(&|p| {
                    p["message"].as_object_mut().unwrap().remove("role");
                }),
                INVALID_PARAMS,
                Some("message"),
            ),
            ("message not an object", json!({"message": 5}), INVALID_PARAMS, Some("message")),
        ];
        for (what, params, want, path) in cases {
            let r = srv.call(b, "SendMessage", params).await;
            let info = r.err(want);
            if let Some(path) = path {
                // The exact root on REST: see rest_error_paths_are_rooted_like_the_binding.
                let got = info["metadata"]["path"].as_str().unwrap_or_default();
                assert!(got.starts_with('$') && got.ends_with(&format!(".{path}")), "{what} on {b:?}: {}", r.text);
                if b == B::Rpc {
                    assert_eq!(got, format!("$.params.{path}"), "{what}: {}", r.text);
                }
            }
        }
        // The waiting task is untouched by the refused follow-up.
        let r = srv.call(b, "GetTask", json!({"id": waiting["id"]})).await;
        assert_eq!(state(r.ok()), "TASK_STATE_INPUT_REQUIRED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_waits_for_the_end_and_return_immediately_does_not() {
    let srv = demo_server().await; // tck-delayed-complete waits 300 ms
    for b in BOTH {
        let started = Instant::now();
        let r = srv.call(b, "SendMessage", send(&mid("tck-delayed-complete"), "hi")).await;
        let task = &r.ok()["task"];
        assert_eq!(state(task), "TASK_STATE_COMPLETED", "{}", r.text);
        assert!(started.elapsed().as_millis() >= 300);
        assert_eq!(first_text(&task["status"]["message"]), "Done after delay");

        let mut p = send(&mid("tck-delayed-complete"), "hi");
        p["configuration"] = json!({"returnImmediately": true});
        let r = srv.call(b, "SendMessage", p).await;
        let task = r.ok()["task"].clone();
        assert!(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"].contains(&state(&task)), "{}", r.text);
        // It still completes: a subscription follows it to the end.
        let mut s = srv.stream(b, Call::new("SubscribeToTask", json!({"id": task["id"]}))).await;
        let evs = s.rest().await;
        assert_eq!(evs.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_length_zero_one_and_unset() {
    let srv = demo_server().await;
    for b in BOTH {
        // tck-complete-task: the user's message, then the agent's "Hello from TCK".
        for (h, want) in [(None, 2usize), (Some(1), 1), (Some(0), 0), (Some(5), 2)] {
            let mut p = send(&mid("tck-complete-task"), "hi");
            if let Some(h) = h {
                p["configuration"] = json!({"historyLength": h});
            }
            let r = srv.call(b, "SendMessage", p).await;
            let task = &r.ok()["task"];
            let got = task.get("history").map(|h| h.as_array().unwrap().len());
            if want == 0 {
                assert_eq!(got, None, "historyLength 0 omits history: {}", r.text);
            } else {
                assert_eq!(got, Some(want), "{h:?}: {}", r.text);
            }
            let mut q = json!({"id": task["id"]});
            if let Some(h) = h {
                q["historyLength"] = json!(h);
            }
            let r = srv.call(b, "GetTask", q).await;
            let got = r.ok().get("history").map(|h| h.as_array().unwrap().len());
            assert_eq!(got.unwrap_or(0), want, "GetTask {h:?}: {}", r.text);
            if want == 0 {
                assert!(r.ok().get("history").is_none(), "{}", r.text);
            }
            if want == 1 {
                // The most recent message.
                assert_eq!(r.ok()["history"][0]["role"], "ROLE_AGENT", "{}", r.text);
            }
        }
        let r = srv.call(b, "GetTask", json!({"id": "x", "historyLength": -1})).await;
        r.err(INVALID_PARAMS);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_task_returns_the_current_state_or_task_not_found() {
    let srv = demo_server().await;
    for b in BOTH {
        let t = srv.task(b, &mid("tck-artifact-text")).await;
        for other in BOTH {
            let r = srv.call(other, "GetTask", json!({"id": t["id"]})).await;
            assert_eq!(r.ok(), &t, "the same task on every binding");
        }
        let r = srv.call(b, "GetTask", json!({"id": "does-not-exist"})).await;
        let info = r.err(TASK_NOT_FOUND);
        assert_eq!(info["metadata"]["taskId"], "does-not-exist");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tasks_pages_sorts_and_filters() {
    for b in BOTH {
        let srv = demo_server().await;
        let mut ids = Vec::new();
        for i in 0..5 {
            let mut p = send(&mid("tck-artifact-text"), "hi");
            if i < 2 {
                p["message"]["contextId"] = json!("ctx-a");
            }
            ids.push(srv.call(b, "SendMessage", p).await.ok()["task"]["id"].as_str().unwrap().to_owned());
        }
        let mut seen = Vec::new();
        let mut stamps = Vec::new();
        let mut token = String::new();
        for page in 0.. {
            assert!(page < 5, "paging does not end");
            let mut q = json!({"pageSize": 2});
            if !token.is_empty() {
                q["pageToken"] = json!(token);
            }
            let r = srv.call(b, "ListTasks", q).await;
            let v = r.ok();
            assert_eq!(v["totalSize"], 5, "{}", r.text);
            // The page size used (a2a.proto: "The page size used for this response"), not
            // the number of tasks on the page (the last page holds one).
            assert_eq!(v["pageSize"], 2, "{}", r.text);
            for t in v["tasks"].as_array().unwrap() {
                seen.push(t["id"].as_str().unwrap().to_owned());
                stamps.push(t["status"]["timestamp"].as_str().unwrap().to_owned());
                assert!(t.get("artifacts").is_none(), "includeArtifacts unset omits artifacts: {t}");
            }
            token = v["nextPageToken"].as_str().expect("nextPageToken always present").to_owned();
            if token.is_empty() {
                assert_eq!(v["tasks"].as_array().unwrap().len(), 1, "the last page: {}", r.text);
                break;
            }
        }
        let mut sorted = seen.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 5, "each task exactly once: {seen:?}");
        let mut all = ids.clone();
        all.sort();
        assert_eq!(sorted, all);
        let mut desc = stamps.clone();
        desc.sort_by(|a, b| b.cmp(a));
        assert_eq!(stamps, desc, "status timestamp descending");

        // Without pageSize: the default page size, also on a page with nothing in it.
        let r = srv.call(b, "ListTasks", json!({"contextId": "no-such-context"})).await;
        assert_eq!((&r.ok()["pageSize"], &r.ok()["totalSize"]), (&json!(50), &json!(0)), "{}", r.text);
        let r = srv.call(b, "ListTasks", json!({"contextId": "ctx-a"})).await;
        let mut got: Vec<String> =
            r.ok()["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect();
        got.sort();
        let mut want = ids[..2].to_vec();
        want.sort();
        assert_eq!(got, want, "{}", r.text);
        assert_eq!(r.ok()["totalSize"], 2);

        let waiting = srv.task(b, &mid("tck-input-required")).await;
        let r = srv.call(b, "ListTasks", json!({"status": "TASK_STATE_INPUT_REQUIRED"})).await;
        let tasks = r.ok()["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 1, "{}", r.text);
        assert_eq!(tasks[0]["id"], waiting["id"]);

        let r = srv.call(b, "ListTasks", json!({"includeArtifacts": true, "contextId": "ctx-a"})).await;
        for t in r.ok()["tasks"].as_array().unwrap() {
            assert_eq!(first_text(&t["artifacts"][0]), "Generated text content");
        }
        let r = srv.call(b, "ListTasks", json!({"includeArtifacts": false})).await;
        for t in r.ok()["tasks"].as_array().unwrap() {
            assert!(t.get("artifacts").is_none(), "omitted, not [] or null: {t}");
        }

        for bad in [json!({"pageSize": 0}), json!({"pageSize": 101}), json!({"pageToken": "garbage!"})] {
            let r = srv.call(b, "ListTasks", bad.clone()).await;
            let info = r.err(INVALID_PARAMS);
            let field = bad.as_object().unwrap().keys().next().unwrap().clone();
            let got = info["metadata"]["path"].as_str().unwrap_or_default();
            assert!(got.ends_with(&format!(".{field}")), "{}", r.text);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_task_cancels_once() {
    let srv = demo_server().await;
    for b in BOTH {
        let waiting = srv.task(b, &mid("tck-input-required")).await;
        let r = srv.call(b, "CancelTask", json!({"id": waiting["id"]})).await;
        assert_eq!(state(r.ok()), "TASK_STATE_CANCELED", "{}", r.text);
        assert_eq!(r.ok()["id"], waiting["id"]);
        let r = srv.call(b, "CancelTask", json!({"id": waiting["id"]})).await;
        assert_eq!(r.err(TASK_NOT_CANCELABLE)["metadata"]["taskId"], waiting["id"]);
        let done = srv.task(b, &mid("tck-complete-task")).await;
        srv.call(b, "CancelTask", json!({"id": done["id"]})).await.err(TASK_NOT_CANCELABLE);
        srv.call(b, "CancelTask", json!({"id": "nope"})).await.err(TASK_NOT_FOUND);
        let r = srv.call(b, "GetTask", json!({"id": waiting["id"]})).await;
        assert_eq!(state(r.ok()), "TASK_STATE_CANCELED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_id_is_kept_and_a_follow_up_continues_the_task() {
    let srv = demo_server().await;
    for b in BOTH {
        let mut p = send(&mid("tck-complete-task"), "hi");
        p["message"]["contextId"] = json!("client-ctx-1");
        let r = srv.call(b, "SendMessage", p).await;
        assert_eq!(r.ok()["task"]["contextId"], "client-ctx-1", "{}", r.text);

        let waiting = srv.task(b, &mid("tck-input-required")).await;
        assert_eq!(state(&waiting), "TASK_STATE_INPUT_REQUIRED");
        let mut p = send("follow-up", "the answer");
        p["message"]["taskId"] = waiting["id"].clone();
        let r = srv.call(b, "SendMessage", p).await;
        let task = &r.ok()["task"];
        assert_eq!(task["id"], waiting["id"], "the same task: {}", r.text);
        assert_eq!(task["contextId"], waiting["contextId"], "context inferred from the task");
        // The state returned may still be WORKING (see
        // follow_up_right_after_input_required_is_accepted_every_time): follow the log.
        let mut log =
            srv.stream(b, Call::new("SubscribeToTask", json!({"id": task["id"]})).header("Last-Event-ID", "0")).await;
        let log = log.rest().await;
        assert_eq!(log.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
        let r = srv.call(b, "GetTask", json!({"id": task["id"]})).await;
        assert_eq!(first_text(&r.ok()["artifacts"][0]), "the answer");
        assert_eq!(r.ok()["history"].as_array().unwrap().len(), 4, "user, agent, user, agent: {}", r.text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_up_right_after_input_required_is_accepted_every_time() {
    let srv = demo_server().await;
    for i in 0..200 {
        let b = BOTH[i % 2];
        let waiting = srv.task(b, &mid("tck-input-required")).await;
        let mut p = send(&mid("follow"), "x");
        p["message"]["taskId"] = waiting["id"].clone();
        let r = srv.call(b, "SendMessage", p).await;
        assert_eq!(state(&r.ok()["task"]), "TASK_STATE_COMPLETED", "attempt {i}: {}", r.text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_config_crud_on_both_bindings() {
    let srv = demo_server().await;
    for b in BOTH {
        let task = srv.task(b, &mid("tck-input-required")).await;
        let tid = task["id"].clone();
        let r = srv
            .call(
                b,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": tid, "url": "https://example.com/hook", "token": "tok"}),
            )
            .await;
        let created = r.ok().clone();
        let id = created["id"].as_str().expect("an id is assigned").to_owned();
        assert!(!id.is_empty());
        assert_eq!(
            (&created["taskId"], &created["url"], &created["token"]),
            (&tid, &json!("https://example.com/hook"), &json!("tok"))
        );
        let r = srv
            .call(
                b,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": tid, "id": "mine", "url": "https://example.com/2"}),
            )
            .await;
        assert_eq!(r.ok()["id"], "mine");

        let r = srv.call(b, "GetTaskPushNotificationConfig", json!({"taskId": tid, "id": id})).await;
        assert_eq!(r.ok(), &created);
        let r = srv.call(b, "ListTaskPushNotificationConfigs", json!({"taskId": tid})).await;
        let mut ids: Vec<&str> =
            r.ok()["configs"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        ids.sort();
        let mut want = vec![id.as_str(), "mine"];
        want.sort();
        assert_eq!(ids, want, "{}", r.text);

        for _ in 0..2 {
            // Idempotent.
            let r = srv.call(b, "DeleteTaskPushNotificationConfig", json!({"taskId": tid, "id": id})).await;
            assert_eq!(r.ok(), &json!({}), "{}", r.text);
        }
        let r = srv.call(b, "GetTaskPushNotificationConfig", json!({"taskId": tid, "id": id})).await;
        r.err(TASK_NOT_FOUND);
        let r = srv.call(b, "ListTaskPushNotificationConfigs", json!({"taskId": tid})).await;
        assert_eq!(r.ok()["configs"].as_array().unwrap().len(), 1, "{}", r.text);

        // Unknown task on every push operation; a bad URL.
        for (op, p) in [
            ("CreateTaskPushNotificationConfig", json!({"taskId": "nope", "url": "https://example.com/h"})),
            ("GetTaskPushNotificationConfig", json!({"taskId": "nope", "id": "c"})),
            ("ListTaskPushNotificationConfigs", json!({"taskId": "nope"})),
            ("DeleteTaskPushNotificationConfig", json!({"taskId": "nope", "id": "c"})),
        ] {
            srv.call(b, op, p).await.err(TASK_NOT_FOUND);
        }
        let r =
            srv.call(b, "CreateTaskPushNotificationConfig", json!({"taskId": tid, "url": "ftp://example.com/h"})).await;
        r.err(INVALID_PARAMS);
    }
}

/// A server whose card declares neither streaming, push nor an extended card.
async fn bare_server() -> Server {
    start(|base| {
        let card = card_with(base, |c| c["capabilities"] = json!({"streaming": false, "pushNotifications": false}));
        A2aServer::builder(demo(300), card).memory(MemoryOptions::default())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undeclared_capabilities_are_refused() {
    let srv = bare_server().await;
    for b in BOTH {
        let task = srv.task(b, &mid("tck-input-required")).await;
        let tid = task["id"].clone();
        let cases = [
            (
                "CreateTaskPushNotificationConfig",
                json!({"taskId": tid, "url": "https://example.com/h"}),
                PUSH_NOT_SUPPORTED,
            ),
            ("GetTaskPushNotificationConfig", json!({"taskId": tid, "id": "c"}), PUSH_NOT_SUPPORTED),
            ("ListTaskPushNotificationConfigs", json!({"taskId": tid}), PUSH_NOT_SUPPORTED),
            ("DeleteTaskPushNotificationConfig", json!({"taskId": tid, "id": "c"}), PUSH_NOT_SUPPORTED),
            ("SendStreamingMessage", send(&mid("tck-stream-001"), "hi"), UNSUPPORTED),
            ("SubscribeToTask", json!({"id": tid}), UNSUPPORTED),
            ("GetExtendedAgentCard", json!({}), UNSUPPORTED),
        ];
        for (op, params, want) in cases {
            let r = srv.call(b, op, params).await;
            r.err(want);
        }
        // An inline push config on SendMessage too.
        let mut p = send(&mid("tck-complete-task"), "hi");
        p["configuration"] = json!({"taskPushNotificationConfig": {"url": "https://example.com/h"}});
        srv.call(b, "SendMessage", p).await.err(PUSH_NOT_SUPPORTED);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extended_card_declared_but_not_configured() {
    let srv = start(|base| {
        let card = card_with(base, |c| {
            c["capabilities"]["extendedAgentCard"] = json!(true);
            c["securitySchemes"] =
                json!({"apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}});
            c["securityRequirements"] = json!([{"schemes": {"apiKey": {"list": []}}}]);
        });
        A2aServer::builder(demo(300), card).credentials(StaticCredentials::new().with(
            "apiKey",
            "k1",
            Principal { subject: "s".into(), tenant: None },
        ))
    })
    .await;
    for b in BOTH {
        let r = srv.run(b, Call::new("GetExtendedAgentCard", json!({})).header("X-API-Key", "k1")).await;
        r.err(CARD_NOT_CONFIGURED);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2a_version_is_required_and_checked() {
    let srv = demo_server().await;
    for b in BOTH {
        let get = || Call::new("ListTasks", json!({}));
        // The error says what this interface does serve: 0.3 and 1.0 on JSON-RPC (0.3
        // through its own method names), 1.0 alone on HTTP+JSON.
        let served = if b == B::Rpc { "1.0, 0.3" } else { "1.0" };
        let r = srv.run(b, get().without_header("A2A-Version")).await;
        let info = r.err(VERSION);
        assert_eq!(info["metadata"]["supportedVersions"], served, "{}", r.text);
        if b == B::Rpc {
            let message = r.body["error"]["message"].as_str().unwrap();
            assert!(message.contains("ListTasks") && message.contains("message/send"), "{message}");
            assert!(!message.contains("not served"), "{message}");
        }
        let r = srv.run(b, get().header("A2A-Version", "2.0")).await;
        let info = r.err(VERSION);
        assert_eq!(info["metadata"]["version"], "2.0");
        assert_eq!(info["metadata"]["supportedVersions"], served, "{}", r.text);
        srv.run(b, get().header("A2A-Version", "0.2")).await.err(VERSION);
        // Patch numbers are ignored.
        srv.run(b, get().header("A2A-Version", "1.0.1")).await.ok();
        srv.run(b, get().header("A2A-Version", " 1.0 ")).await.ok();
    }
    // The version as a query parameter.
    let r = srv.http.get(format!("{}/a2a/rest/tasks?A2A-Version=1.0", srv.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = srv
        .http
        .post(format!("{}/?A2A-Version=1.0", srv.base))
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap();
    Reply::read(B::Rpc, r).await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_get_the_standard_codes() {
    let srv = demo_server().await;
    let raw = |path: &str, body: &str| {
        srv.http
            .post(format!("{}{path}", srv.base))
            .header("A2A-Version", "1.0")
            .header("Content-Type", "application/json")
            .body(body.to_owned())
    };
    // JSON-RPC
    let r = Reply::read(B::Rpc, raw("/", "{not json").send().await.unwrap()).await;
    assert_eq!(r.body["id"], Value::Null, "{}", r.text);
    let e = &r.body["error"];
    assert_eq!(
        (r.status, &e["code"], &e["data"][0]["reason"]),
        (200, &json!(-32700), &json!("PARSE_ERROR")),
        "{}",
        r.text
    );
    let r = srv.run(B::Rpc, Call::new("NoSuchMethod", json!({}))).await;
    assert_eq!(r.err(METHOD_NOT_FOUND)["metadata"]["method"], "NoSuchMethod");
    // 0.3 names are not 1.0 methods.
    srv.run(B::Rpc, Call::new("message/send", send("m", "hi"))).await.err(METHOD_NOT_FOUND);
    let r = Reply::read(B::Rpc, raw("/", r#"{"jsonrpc":"2.0","id":3}"#).send().await.unwrap()).await;
    assert_eq!(r.body["error"]["code"], -32600, "{}", r.text);
    let r = Reply::read(
        B::Rpc,
        raw("/", r#"{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":5}}"#).send().await.unwrap(),
    )
    .await;
    assert_eq!(r.body["id"], 3);
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.text);
    assert_eq!(r.body["error"]["data"][0]["metadata"]["path"], "$.params.id", "{}", r.text);

    // REST (a body that is not JSON: see rest_bad_json_is_always_a_parse_error)
    let r = Reply::read(B::Rest, raw("/a2a/rest/message:send", "{\"message\": ").send().await.unwrap()).await;
    r.err(PARSE);
    let r = Reply::read(B::Rest, raw("/a2a/rest/no/such/route", "{}").send().await.unwrap()).await;
    r.err(METHOD_NOT_FOUND);
    let r = srv
        .http
        .delete(format!("{}/a2a/rest/message:send", srv.base))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    // A wrong verb: 405 with the verbs the path takes, and an AIP-193 body whose code
    // is that status.
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["allow"], "POST");
    let r = Reply::read(B::Rest, r).await;
    assert_eq!(
        (&r.body["error"]["code"], &r.body["error"]["details"][0]["reason"]),
        (&json!(405), &json!("METHOD_NOT_ALLOWED")),
        "{}",
        r.text
    );
    let r = srv
        .http
        .put(format!("{}/a2a/rest/tasks/t-1:subscribe", srv.base))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!((r.status().as_u16(), r.headers()["allow"].to_str().unwrap()), (405, "GET, POST"));
    let r = srv
        .http
        .get(format!("{}/a2a/rest/tasks?pageSize=abc", srv.base))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    let r = Reply::read(B::Rest, r).await;
    assert_eq!(r.err(INVALID_PARAMS)["metadata"]["path"], "$.pageSize");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_bad_json_is_always_a_parse_error() {
    let srv = demo_server().await;
    for body in ["{not json", "[1,", "{\"message\": }", "nul"] {
        let r = srv
            .http
            .post(format!("{}/a2a/rest/message:send", srv.base))
            .header("A2A-Version", "1.0")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        Reply::read(B::Rest, r).await.err(PARSE);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_error_paths_are_rooted_like_the_binding() {
    let srv = demo_server().await;
    let waiting = srv.task(B::Rest, &mid("tck-input-required")).await;
    let mut p = send(&mid("x"), "more");
    p["message"]["taskId"] = waiting["id"].clone();
    p["message"]["contextId"] = json!("another-context");
    let info = srv.call(B::Rest, "SendMessage", p).await.err(INVALID_PARAMS);
    assert_eq!(info["metadata"]["path"], "$.message.contextId");
    let info = srv.call(B::Rest, "ListTasks", json!({"pageSize": 0})).await.err(INVALID_PARAMS);
    assert_eq!(info["metadata"]["path"], "$.pageSize");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_table_1_0_0_uses_409_and_415() {
    let srv = start(|base| {
        A2aServer::builder(demo(300), agentproto_a2a::demo::card(base))
            .accepted_media_types(vec!["text/plain".into()])
            .error_table(ErrorTable::V1_0_0)
    })
    .await;
    let done = srv.task(B::Rest, &mid("tck-complete-task")).await;
    let r = srv.call(B::Rest, "CancelTask", json!({"id": done["id"]})).await;
    r.err(E { http: 409, ..TASK_NOT_CANCELABLE });
    let mut p = send(&mid("x"), "hi");
    p["message"]["parts"] = json!([{"raw": "dGNr", "mediaType": "application/x-unsupported-tck-type"}]);
    let r = srv.call(B::Rest, "SendMessage", p.clone()).await;
    r.err(E { http: 415, ..CONTENT_TYPE });
    // The JSON-RPC codes do not change.
    srv.call(B::Rpc, "CancelTask", json!({"id": done["id"]})).await.err(TASK_NOT_CANCELABLE);
    srv.call(B::Rpc, "SendMessage", p).await.err(CONTENT_TYPE);
    srv.call(B::Rest, "GetTask", json!({"id": "nope"})).await.err(TASK_NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_card_at_both_paths_with_etag_and_cache_control() {
    let srv = demo_server().await;
    let mut etags = Vec::new();
    for path in ["/.well-known/agent-card.json", "/.well-known/agent.json"] {
        let r = srv.http.get(format!("{}{path}", srv.base)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let etag = r.headers()["etag"].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
        let cc = r.headers()["cache-control"].to_str().unwrap().to_owned();
        assert!(cc.contains("max-age=300"), "{cc}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
        let card: Value = r.json().await.unwrap();
        assert_eq!(card["supportedInterfaces"][0]["url"], format!("{}/", srv.base));
        assert_eq!(card["capabilities"]["streaming"], true);
        let r = srv.http.get(format!("{}{path}", srv.base)).header("If-None-Match", &etag).send().await.unwrap();
        assert_eq!(r.status(), 304);
        assert_eq!(r.headers()["etag"].to_str().unwrap(), etag);
        assert!(r.bytes().await.unwrap().is_empty());
        let r = srv.http.get(format!("{}{path}", srv.base)).header("If-None-Match", "\"other\"").send().await.unwrap();
        assert_eq!(r.status(), 200);
        etags.push(etag);

        // Last-Modified (the TCK's CARD-CACHE-003), an IMF-fixdate, and If-Modified-Since.
        let r = srv.http.get(format!("{}{path}", srv.base)).send().await.unwrap();
        let modified = r.headers()["last-modified"].to_str().unwrap().to_owned();
        assert!(modified.ends_with(" GMT") && modified.len() == 29, "{modified}");
        let since = |value: &str| srv.http.get(format!("{}{path}", srv.base)).header("If-Modified-Since", value);
        let r = since(&modified).send().await.unwrap();
        assert_eq!(r.status(), 304);
        assert_eq!(r.headers()["last-modified"].to_str().unwrap(), modified);
        assert_eq!(since("Tue, 01 Jan 2030 00:00:00 GMT").send().await.unwrap().status(), 304);
        assert_eq!(since("Sat, 01 Jan 2000 00:00:00 GMT").send().await.unwrap().status(), 200);
        assert_eq!(since("not a date").send().await.unwrap().status(), 200);
        // If-None-Match decides when both are sent.
        let r = since(&modified).header("If-None-Match", "\"other\"").send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
    assert_eq!(etags[0], etags[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_json_media_types_are_accepted_and_others_refused() {
    let srv = demo_server().await;
    for b in BOTH {
        for ct in ["application/a2a+json", "application/json", "application/json; charset=utf-8"] {
            let r = srv
                .run(b, Call::new("SendMessage", send(&mid("tck-complete-task"), "hi")).header("Content-Type", ct))
                .await;
            assert_eq!(state(&r.ok()["task"]), "TASK_STATE_COMPLETED");
        }
        let r = srv
            .run(
                b,
                Call::new("SendMessage", send(&mid("tck-complete-task"), "hi")).header("Content-Type", "text/plain"),
            )
            .await;
        r.err(INVALID_REQUEST);
    }
    // REST answers are application/a2a+json.
    let r = srv.call(B::Rest, "ListTasks", json!({})).await;
    assert_eq!(r.header("content-type"), Some("application/a2a+json"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_over_the_limit_are_refused() {
    let srv = start(|base| {
        let http = HttpOptions { max_body_bytes: 1024, ..HttpOptions::default() };
        A2aServer::builder(demo(300), agentproto_a2a::demo::card(base)).http(http)
    })
    .await;
    let big = "x".repeat(2048);
    for b in BOTH {
        let r = srv.call(b, "SendMessage", send(&mid("tck-complete-task"), &big)).await;
        r.err(TOO_LARGE);
        let r = srv.call(b, "SendMessage", send(&mid("tck-complete-task"), "small")).await;
        assert_eq!(state(&r.ok()["task"]), "TASK_STATE_COMPLETED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_answers_get_and_post() {
    let srv = demo_server().await;
    for b in BOTH {
        let task = srv.task(b, &mid("tck-input-required")).await;
        let mut calls = vec![Call::new("SubscribeToTask", json!({"id": task["id"]}))];
        if b == B::Rest {
            let mut get = Call::new("SubscribeToTask", json!({"id": task["id"]}));
            get.get_subscribe = true;
            calls.push(get);
        }
        for call in calls {
            let mut s = srv.stream(b, call).await;
            let first = s.expect().await;
            assert_eq!(first.kind(), "task");
            assert_eq!(first.payload()["task"]["id"], task["id"]);
            assert_eq!(first.state().as_deref(), Some("TASK_STATE_INPUT_REQUIRED"));
        }
        srv.call(b, "SubscribeToTask", json!({"id": "nope"})).await.err(TASK_NOT_FOUND);
        let done = srv.task(b, &mid("tck-complete-task")).await;
        srv.call(b, "SubscribeToTask", json!({"id": done["id"]})).await.err(UNSUPPORTED);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_ids_and_notifications_follow_json_rpc_2_0() {
    let srv = demo_server().await;
    let post = |body: String| {
        srv.http
            .post(format!("{}/", srv.base))
            .header("A2A-Version", "1.0")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
    };
    // A request without an id is a notification: it is processed, and not answered.
    let ctx = format!("notified-{}", uuid::Uuid::new_v4().simple());
    let mut params = send(&mid("tck-complete-task"), "hi");
    params["message"]["contextId"] = json!(ctx);
    let body = json!({"jsonrpc": "2.0", "method": "SendMessage", "params": params});
    let r = post(body.to_string()).await.unwrap();
    assert_eq!(r.status(), 204);
    assert!(r.bytes().await.unwrap().is_empty(), "no reply to a notification");
    let listed = srv.call(B::Rpc, "ListTasks", json!({"contextId": ctx})).await;
    assert_eq!(listed.ok()["totalSize"], 1, "the notification was processed: {}", listed.text);
    // Even one that fails is not answered.
    let r = post(r#"{"jsonrpc":"2.0","method":"NoSuchMethod","params":{}}"#.into()).await.unwrap();
    assert_eq!(r.status(), 204);
    assert!(r.bytes().await.unwrap().is_empty());

    // `"id": null` is an id: the answer carries it.
    let r = post(r#"{"jsonrpc":"2.0","id":null,"method":"ListTasks","params":{}}"#.into()).await.unwrap();
    let r = Reply::read(B::Rpc, r).await;
    assert!(r.body.get("id").is_some_and(Value::is_null), "{}", r.text);
    assert!(r.body["result"]["tasks"].is_array(), "{}", r.text);

    // Any JSON number is an id, echoed exactly, also beyond 64 bits.
    for id in ["123456789012345678901234567890", "-9223372036854775809", "1.5", "1e3"] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask","params":{{"id":"nope"}}}}"#);
        let r = post(body).await.unwrap();
        let text = r.text().await.unwrap();
        assert!(text.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"#)), "{id}: {text}");
        assert!(text.contains("-32001"), "{id}: {text}");
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ListTasks","params":{{}}}}"#);
        let text = post(body).await.unwrap().text().await.unwrap();
        assert!(text.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#)), "{id}: {text}");
    }
    // Other types are still not ids.
    let r = post(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ListTasks","params":{}}"#.into()).await.unwrap();
    let r = Reply::read(B::Rpc, r).await;
    assert_eq!((&r.body["id"], &r.body["error"]["code"]), (&Value::Null, &json!(-32600)), "{}", r.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protojson_leniency_on_both_bindings() {
    let srv = demo_server().await;
    for b in BOTH {
        // An enum by number, an int32 as a string, null for "the default".
        let mut p = send(&mid("tck-input-required"), "hi");
        p["message"]["role"] = json!(1);
        p["message"]["contextId"] = Value::Null;
        p["configuration"] = json!({"historyLength": "1e0", "returnImmediately": null});
        let r = srv.call(b, "SendMessage", p).await;
        let task = &r.ok()["task"];
        assert_eq!(task["history"].as_array().map(Vec::len), Some(1), "{}", r.text);
        let r = srv.call(b, "ListTasks", json!({"status": 6, "pageSize": "2"})).await;
        assert_eq!(r.ok()["pageSize"], 2, "{}", r.text);
        assert!(r.ok()["tasks"].as_array().unwrap().iter().all(|t| state(t) == "TASK_STATE_INPUT_REQUIRED"));
    }
}
