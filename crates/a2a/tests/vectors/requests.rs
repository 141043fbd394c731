//! Request cases (`direction: client_to_server`): the case's HTTP request, as bytes on a
//! socket, to a real `A2aServer` (memory store). An interceptor — the server's own hook
//! that runs once a call is decoded, on every binding — records the decoded request and
//! refuses the call, so nothing runs and the server stays stateless between cases.

use std::sync::{Arc, Mutex};

use agentproto_a2a::errors::{A2aError, ErrorKind};
use agentproto_a2a::server::{A2aServer, CallContext};
use agentproto_a2a::v1::Request;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::case::{check_golden, json_eq, Case};
use super::wire::{exchange, request_bytes};

/// The message of the refusal that ends every recorded call.
const RECORDED: &str = "recorded by the vector runner";
/// Where the HTTP+JSON binding is mounted (the cases' paths are relative to it).
pub(crate) const REST_PREFIX: &str = "/a2a/rest";

/// A decoded request as the interceptor saw it: the operation and our encoding of it.
type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

pub(crate) struct Server {
    pub(crate) addr: std::net::SocketAddr,
    seen: Seen,
    token: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

/// Our encoding of a decoded request. The tenant a path names (`/{tenant}/…`) is a field
/// of the request message (its `google.api.http` rule binds it); the server keeps it in
/// the call context, so it is put back here when the body left the field empty.
fn encode(cx: &CallContext, req: &Request) -> Vec<u8> {
    macro_rules! enc {
        ($r:expr) => {{
            let mut r = $r.clone();
            if r.tenant.is_empty() {
                r.tenant = cx.tenant.clone();
            }
            serde_json::to_vec(&r).expect("a decoded request encodes")
        }};
    }
    match req {
        Request::SendMessage(r) | Request::SendStreamingMessage(r) => enc!(r),
        Request::GetTask(r) => enc!(r),
        Request::ListTasks(r) => enc!(r),
        Request::CancelTask(r) => enc!(r),
        Request::SubscribeToTask(r) => enc!(r),
        Request::CreateTaskPushNotificationConfig(r) => enc!(r),
        Request::GetTaskPushNotificationConfig(r) => enc!(r),
        Request::ListTaskPushNotificationConfigs(r) => enc!(r),
        Request::GetExtendedAgentCard(r) => enc!(r),
        Request::DeleteTaskPushNotificationConfig(r) => enc!(r),
    }
}

impl Server {
    pub(crate) async fn start() -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let base = format!("http://{addr}");
        let seen: Seen = Arc::default();
        let record = seen.clone();
        let interceptor = move |cx: &CallContext, req: &Request| -> Result<(), A2aError> {
            let bytes = encode(cx, req);
            record.lock().unwrap().push((req.operation().name().to_owned(), bytes));
            Err(A2aError::new(ErrorKind::Internal).with_message(RECORDED))
        };
        let server = A2aServer::builder(agentproto_a2a::demo::DemoAgent::default(), agentproto_a2a::demo::card(&base))
            .interceptor(interceptor)
            .build();
        let token = server.shutdown_token();
        tokio::spawn(server.serve(listener));
        Server { addr, seen, token }
    }
}

/// The ErrorInfo of an error's details (`data` on JSON-RPC, `details` on HTTP+JSON).
fn error_info(details: &Value) -> Value {
    details
        .as_array()
        .and_then(|d| d.iter().find(|x| x["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The members of a refusal the cases state, from an error body.
fn refusal(binding: &str, body: &Value) -> Value {
    let (err, info) = if binding == "jsonrpc" {
        (&body["error"], error_info(&body["error"]["data"]))
    } else {
        (&body["error"], error_info(&body["error"]["details"]))
    };
    let meta = &info["metadata"];
    let mut out = serde_json::Map::new();
    out.insert("reason".into(), info["reason"].clone());
    out.insert("path".into(), meta["path"].clone());
    out.insert("kind".into(), meta["kind"].clone());
    out.insert("expected".into(), meta["expected"].clone());
    out.insert("found".into(), meta["found"].clone());
    if binding == "jsonrpc" {
        out.insert("code".into(), err["code"].clone());
    } else {
        out.insert("status".into(), err["status"].clone());
    }
    Value::Object(out)
}

pub(crate) async fn run(server: &Server, case: &Case) -> Result<(), String> {
    server.seen.lock().unwrap().clear();
    let method = case.http.method.as_deref().unwrap_or("POST");
    let path = case.http.path.as_deref().unwrap_or("");
    let target = match case.binding.as_str() {
        "jsonrpc" => format!("/{path}"),
        "rest" => format!("{REST_PREFIX}{path}"),
        other => return Err(format!("unknown binding {other}")),
    };
    let headers: Vec<(String, String)> = case.http.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let body = case.body();
    let resp = exchange(server.addr, &request_bytes(method, &target, &headers, body.as_deref())).await?;
    let seen = std::mem::take(&mut *server.seen.lock().unwrap());
    let answer: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    let e = &case.expect;
    if let Some(status) = e.get("http_status") {
        if status != &Value::from(resp.status) {
            return Err(format!(
                "HTTP status {}, expected {status}: {}",
                resp.status,
                String::from_utf8_lossy(&resp.body)
            ));
        }
    }
    match case.outcome() {
        "dispatched" => {
            let [(op, bytes)] = seen.as_slice() else {
                return Err(format!(
                    "expected a dispatch of {}, got none; the server answered {} {}",
                    e["operation"],
                    resp.status,
                    String::from_utf8_lossy(&resp.body)
                ));
            };
            if e["operation"] != op.as_str() {
                return Err(format!("dispatched as {op}, expected {}", e["operation"]));
            }
            let params: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
            if !json_eq(&params, &e["params"]) {
                return Err(format!("decoded params differ:\n  expected {}\n  found    {params}", e["params"]));
            }
            check_golden(case, bytes)
        }
        "refused" => {
            let ct = resp.header("content-type").unwrap_or("");
            if !(ct.starts_with("application/") && ct.contains("json")) {
                return Err(format!("an error answer of media type {ct:?}"));
            }
            if let Some((op, bytes)) = seen.first() {
                return Err(format!(
                    "expected a refusal, but {op} was dispatched with {}",
                    String::from_utf8_lossy(bytes)
                ));
            }
            if case.binding == "jsonrpc" {
                if answer["jsonrpc"] != "2.0" || answer.get("result").is_some() {
                    return Err(format!("not a JSON-RPC error response: {}", String::from_utf8_lossy(&resp.body)));
                }
                if let Some(id) = e.get("id") {
                    if !json_eq(id, &answer["id"]) {
                        return Err(format!("error response id {}, expected {id}", answer["id"]));
                    }
                }
            }
            let got = refusal(&case.binding, &answer);
            super::case::stated(&e["error"], &got, "error")
                .map_err(|why| format!("{why} (answer: {})", String::from_utf8_lossy(&resp.body)))
        }
        other => Err(format!("unknown request outcome {other:?}")),
    }
}
