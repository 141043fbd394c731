//! Answer cases (`direction: server_to_client`): the real `A2aClient` calls the case's
//! operation against a socket that answers with the case's bytes; what the call returns
//! (a value re-encoded by our encoder, a local decode error, the peer's error) is
//! compared with the case.

use agentproto_a2a::client::{A2aClient, Binding, ClientError, ClientOptions, ResumePolicy};
use agentproto_a2a::retry::RetryPolicy;
use agentproto_a2a::v1;
use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::case::{check_golden, json_eq, stated, Case};
use super::wire::{response_bytes, AnswerServer, Received, WAIT};

/// What a call gave.
enum Outcome {
    /// The value, as our encoder writes it.
    Value(Vec<u8>),
    Failed(ClientError),
}

fn card(base: &str, binding: &str) -> v1::AgentCard {
    serde_json::from_value(json!({
        "name": "vectors", "description": "answers from a case file", "version": "1",
        "supportedInterfaces": [{"url": base, "protocolBinding": binding, "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}],
    }))
    .expect("the runner's card decodes")
}

fn req<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("the runner's request decodes")
}

fn encoded<T: serde::Serialize>(r: Result<T, ClientError>) -> Outcome {
    match r {
        Ok(v) => Outcome::Value(serde_json::to_vec(&v).expect("a decoded answer encodes")),
        Err(e) => Outcome::Failed(e),
    }
}

/// Calls `op` with a fixed request; a streaming operation gives its first event.
async fn call(client: &A2aClient, op: &str) -> Result<Outcome, String> {
    let send = || {
        req::<v1::SendMessageRequest>(
            json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
        )
    };
    let push = || json!({"taskId": "t-1", "id": "cfg-1"});
    Ok(match op {
        "SendMessage" => encoded(client.send_message(send()).await),
        "GetTask" => encoded(client.get_task(req(json!({"id": "t-1"}))).await),
        "ListTasks" => encoded(client.list_tasks(req(json!({}))).await),
        "CancelTask" => encoded(client.cancel_task(req(json!({"id": "t-1"}))).await),
        "CreateTaskPushNotificationConfig" => encoded(
            client
                .create_task_push_notification_config(req(json!({"taskId": "t-1", "url": "https://example.com/h"})))
                .await,
        ),
        "GetTaskPushNotificationConfig" => encoded(client.get_task_push_notification_config(req(push())).await),
        "ListTaskPushNotificationConfigs" => {
            encoded(client.list_task_push_notification_configs(req(json!({"taskId": "t-1"}))).await)
        }
        "GetExtendedAgentCard" => encoded(client.get_extended_agent_card().await),
        "DeleteTaskPushNotificationConfig" => {
            encoded(client.delete_task_push_notification_config(req(push())).await.map(|()| v1::Empty {}))
        }
        "SendStreamingMessage" | "SubscribeToTask" => {
            let stream = if op == "SubscribeToTask" {
                client.subscribe_to_task(req(json!({"id": "t-1"}))).await
            } else {
                client.send_streaming_message(send()).await
            };
            match stream {
                Err(e) => Outcome::Failed(e),
                Ok(mut s) => match tokio::time::timeout(WAIT, s.next()).await {
                    Err(_) => return Err("no stream item in time".into()),
                    Ok(None) => return Err("the stream ended without an item".into()),
                    Ok(Some(Err(e))) => Outcome::Failed(e),
                    Ok(Some(Ok(ev))) => match ev.into_response() {
                        Some(r) => encoded(Ok(r)),
                        None => return Err("the first stream item is a gap marker".into()),
                    },
                },
            }
        }
        other => return Err(format!("unknown operation {other}")),
    })
}

/// The answer bytes for a request: the case's body with `"$request-id"` replaced by the
/// request's JSON-RPC id, one SSE event when the answer is a stream.
fn answer_for(case_body: &[u8], status: u16, headers: &[(String, String)], got: &Received) -> Vec<u8> {
    let id = serde_json::from_slice::<Value>(&got.body).ok().map(|v| v["id"].clone()).unwrap_or(Value::Null);
    let as_string = Value::String(match &id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let body = String::from_utf8_lossy(case_body)
        .replace("\"$request-id\"", &id.to_string())
        .replace("\"$request-id-as-string\"", &as_string.to_string())
        .into_bytes();
    let sse = headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.starts_with("text/event-stream"));
    let body = if sse { [b"data: ".as_slice(), &body, b"\n\n"].concat() } else { body };
    response_bytes(status, headers, &body)
}

pub(crate) async fn run(case: &Case) -> Result<(), String> {
    let body = case.body().ok_or("an answer case needs a body")?;
    let status = case.http.status.unwrap_or(200);
    let headers: Vec<(String, String)> = case.http.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let h = headers.clone();
    let server = AnswerServer::start(move |got| answer_for(&body, status, &h, got)).await;
    let (binding, name) = match case.binding.as_str() {
        "jsonrpc" => (Binding::JsonRpc, "JSONRPC"),
        "rest" => (Binding::HttpJson, "HTTP+JSON"),
        other => return Err(format!("unknown binding {other}")),
    };
    let opts = ClientOptions {
        binding: Some(binding),
        retry: RetryPolicy { max_attempts: 1, ..RetryPolicy::default() },
        resume: ResumePolicy { enabled: false, ..ResumePolicy::default() },
        idle_timeout: WAIT,
        request_timeout: Some(WAIT),
        ..ClientOptions::default()
    };
    let client =
        A2aClient::from_card(card(&format!("http://{}", server.addr), name), opts).map_err(|e| e.to_string())?;
    let op = case.operation.as_deref().ok_or("an answer case names its operation")?;
    let outcome =
        tokio::time::timeout(WAIT * 2, call(&client, op)).await.map_err(|_| "the call did not end in time")??;
    let e = &case.expect;
    match (case.outcome(), outcome) {
        ("decoded", Outcome::Value(bytes)) => {
            let value: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            if !json_eq(&value, &e["result"]) {
                return Err(format!("decoded result differs:\n  expected {}\n  found    {value}", e["result"]));
            }
            check_golden(case, &bytes)
        }
        ("call_failed", Outcome::Failed(ClientError::Decode { error, .. })) => {
            let got = json!({"path": error.path, "kind": error.kind.as_str()});
            let mut want = e.clone();
            want.as_object_mut().map(|o| o.remove("outcome"));
            stated(&want, &got, "decode error").map_err(|why| format!("{why} ({error})"))
        }
        ("call_failed", Outcome::Failed(ClientError::Protocol(msg))) if e.get("path").is_none() => {
            let _ = msg;
            Ok(())
        }
        ("error_reply", Outcome::Failed(ClientError::Rpc { code, data, .. })) if case.binding == "jsonrpc" => {
            let reason = data
                .as_ref()
                .and_then(Value::as_array)
                .and_then(|d| d.iter().find_map(|x| x.get("reason").cloned()))
                .unwrap_or(Value::Null);
            stated(&e["error"], &json!({"code": code, "reason": reason}), "error")
        }
        ("error_reply", Outcome::Failed(ClientError::Status { http_status, status, reason, .. }))
            if case.binding == "rest" =>
        {
            if let Some(s) = e.get("http_status") {
                if s != &json!(http_status) {
                    return Err(format!("HTTP status {http_status:?}, expected {s}"));
                }
            }
            stated(&e["error"], &json!({"status": status, "reason": reason}), "error")
        }
        (want, Outcome::Value(bytes)) => {
            Err(format!("expected {want}, but the call returned {}", String::from_utf8_lossy(&bytes)))
        }
        (want, Outcome::Failed(err)) => Err(format!("expected {want}, but the call failed: {err:?}")),
    }
}
