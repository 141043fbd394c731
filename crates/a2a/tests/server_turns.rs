//! Where a turn runs (`server::turn`): on the task of the request that waits for it,
//! then on its own once nobody waits. A turn finishes whatever happens to its request,
//! and an executor that panics fails its turn without taking the server down.
#![cfg(feature = "server")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_a2a::errors::A2aError;
use agentproto_a2a::executor::{AgentExecutor, RequestContext, TaskUpdater};
use agentproto_a2a::server::A2aServer;
use serde_json::{json, Value};
use tokio::sync::Notify;

use common::*;

/// Panics before its first update (`before`) or after moving the task to WORKING
/// (`after`); completes anything else.
struct Panics;

impl AgentExecutor for Panics {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        match cx.text().as_str() {
            "before" => panic!("before any update"),
            "after" => {
                task.working(None).await?;
                panic!("{}", String::from("after an update"))
            }
            _ => task.complete(None).await,
        }
    }
}

/// Moves the task to WORKING, says so, waits for the gate, then completes.
#[derive(Clone, Default)]
struct Gated {
    started: Arc<Mutex<Vec<String>>>,
    started_signal: Arc<Notify>,
    gate: Arc<Notify>,
}

impl AgentExecutor for Gated {
    async fn execute(&self, _cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        task.working(None).await?;
        // Held updates are stored when the executor next waits; store WORKING now, so that a
        // GetTask after `started` finds the task (it raced the first commit under load).
        task.flush().await?;
        self.started.lock().unwrap().push(task.task_id().to_owned());
        self.started_signal.notify_one();
        self.gate.notified().await;
        task.complete(Some(task.text("done"))).await
    }
}

async fn state_of(srv: &Server, id: &str) -> Value {
    srv.call(B::Rpc, "GetTask", json!({"id": id})).await.ok()["status"]["state"].clone()
}

async fn until_completed(srv: &Server, id: &str) {
    within("the detached turn to complete the task", async {
        while state_of(srv, id).await != "TASK_STATE_COMPLETED" {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_executor_fails_its_turn_and_the_server_goes_on() {
    let srv = start(|base| A2aServer::builder(Panics, card_with(base, |_| {}))).await;
    for b in BOTH {
        // Before the first update there is no task: the send is answered with the error.
        let before = srv.call(b, "SendMessage", send(&mid("p"), "before")).await;
        let text = before.text.clone();
        assert!(text.contains("the agent panicked: before any update"), "{b:?}: {text}");
        let internal = match b {
            B::Rpc => before.body["error"]["code"] == -32603,
            B::Rest => before.status == 500,
        };
        assert!(internal, "{b:?}: {} {text}", before.status);
        // After it, the task exists and ends FAILED, saying why.
        let after = srv.call(b, "SendMessage", send(&mid("p"), "after")).await;
        let task = after.ok()["task"].clone();
        assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{b:?}: {task}");
        let said = task["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default();
        assert!(said.contains("the agent panicked: after an update"), "{b:?}: {said}");
        // The server, and the client's pooled connection, still serve.
        let fine = srv.call(b, "SendMessage", send(&mid("p"), "fine")).await;
        assert_eq!(fine.ok()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_answered_early_runs_to_its_end_on_its_own() {
    let agent = Gated::default();
    let srv = start({
        let agent = agent.clone();
        move |base| A2aServer::builder(agent, card_with(base, |_| {}))
    })
    .await;
    let mut params = send(&mid("early"), "hi");
    params["configuration"] = json!({"returnImmediately": true});
    let answer = srv.call(B::Rpc, "SendMessage", params).await;
    let id = answer.ok()["task"]["id"].as_str().unwrap().to_owned();
    within("the turn to start", async {
        while agent.started.lock().unwrap().is_empty() {
            agent.started_signal.notified().await;
        }
    })
    .await;
    assert_eq!(state_of(&srv, &id).await, "TASK_STATE_WORKING");
    agent.gate.notify_one();
    until_completed(&srv, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_goes_on_when_its_caller_hangs_up() {
    let agent = Gated::default();
    let srv = start({
        let agent = agent.clone();
        move |base| A2aServer::builder(agent, card_with(base, |_| {}))
    })
    .await;
    // A blocking send whose client goes away while the turn waits at the gate.
    let call = srv.call(B::Rpc, "SendMessage", send(&mid("gone"), "hi"));
    let id = tokio::select! {
        _ = call => panic!("the send was answered before the gate opened"),
        id = async {
            loop {
                if let Some(id) = agent.started.lock().unwrap().first().cloned() {
                    break id;
                }
                agent.started_signal.notified().await;
            }
        } => id,
    };
    // The request (and its connection) is gone; the turn is not.
    assert_eq!(state_of(&srv, &id).await, "TASK_STATE_WORKING");
    agent.gate.notify_one();
    until_completed(&srv, &id).await;
}
