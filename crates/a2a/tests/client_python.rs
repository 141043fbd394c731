//! The client against the official Python SDK server
//! (`interop/official/a2a-python/server.py`, a2a-sdk 1.3.0, installed by `.ci/run`) on both
//! bindings. `AGENTPROTO_A2A_PYTHON` names another interpreter; `0` skips the test
//! (for machines without the SDK).
#![cfg(feature = "client")]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use agentproto_a2a::client::{A2aClient, A2aErrorKind, Binding, ClientOptions};
use agentproto_a2a::v1::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, Message, Part, PartContent, Role, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, TaskState,
};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, BufReader};

const BOUND: Duration = Duration::from_secs(30);

fn python() -> Option<String> {
    match std::env::var("AGENTPROTO_A2A_PYTHON").ok().as_deref() {
        Some("0") => None,
        None | Some("" | "1") => Some("python3".to_owned()),
        Some(path) => Some(path.to_owned()),
    }
}

fn send(id: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::new(id, Role::User, vec![Part::new(PartContent::Text("hi".into()))]))
}

#[tokio::test]
async fn client_against_the_python_sdk_server() {
    let Some(python) = python() else {
        eprintln!("skipped: AGENTPROTO_A2A_PYTHON=0");
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/official/a2a-python/server.py");
    let mut child = tokio::process::Command::new(python)
        .arg(script)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the Python server");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let port = tokio::time::timeout(BOUND, async {
        while let Some(line) = lines.next_line().await.expect("read stdout") {
            if let Some(p) = line.strip_prefix("LISTENING ") {
                return p.trim().to_owned();
            }
        }
        panic!("the server exited before listening");
    })
    .await
    .expect("the server listens within the bound");
    let base = format!("http://127.0.0.1:{port}");

    tokio::time::timeout(BOUND, async {
        for binding in [Binding::JsonRpc, Binding::HttpJson] {
            let opts = ClientOptions { binding: Some(binding), ..ClientOptions::default() };
            let client = A2aClient::discover(&base, opts).await.expect("discover");
            assert_eq!(client.interface().binding, binding);

            let task = match client.send_message(send(&format!("tck-complete-task-{binding:?}"))).await.unwrap() {
                SendMessageResponse::Task(t) => t,
                other => panic!("{binding:?}: {other:?}"),
            };
            assert_eq!(task.status.state, TaskState::Completed, "{binding:?}");
            let got = client.get_task(GetTaskRequest::new(task.id.clone())).await.unwrap();
            assert_eq!(got.id, task.id);
            client.list_tasks(ListTasksRequest::default()).await.unwrap();

            let reply = client.send_message(send(&format!("tck-message-response-{binding:?}"))).await.unwrap();
            assert!(matches!(reply, SendMessageResponse::Message(_)), "{binding:?}: {reply:?}");

            let events: Vec<_> = client
                .send_streaming_message(send(&format!("tck-stream-001-{binding:?}")))
                .await
                .unwrap()
                .collect()
                .await;
            let events: Vec<_> = events.into_iter().map(|e| e.expect("stream item")).collect();
            assert!(events.iter().any(|e| matches!(e.response(), Some(StreamResponse::ArtifactUpdate(_)))));
            let last_state = events.iter().rev().find_map(|e| match e.response()? {
                StreamResponse::StatusUpdate(u) => Some(u.status.state),
                StreamResponse::Task(t) => Some(t.status.state),
                _ => None,
            });
            assert_eq!(last_state, Some(TaskState::Completed), "{binding:?}");

            let e = client.get_task(GetTaskRequest::new("no-such-task")).await.unwrap_err();
            assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotFound), "{binding:?}: {e:?}");
            let e = client.cancel_task(CancelTaskRequest::new(task.id.clone())).await.unwrap_err();
            assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotCancelable), "{binding:?}: {e:?}");
            let e = client.subscribe_to_task(SubscribeToTaskRequest::new(task.id.clone())).await.unwrap_err();
            assert_eq!(e.kind(), Some(A2aErrorKind::UnsupportedOperation), "{binding:?}: {e:?}");
        }
    })
    .await
    .expect("the run finishes within the bound");
}
