//! The stdio corpus of bad lines (`vectors/jsonrpc`, every case the receiver answers
//! with an error: bad JSON, bad envelopes, bad ids and versions, scalars, batches),
//! replayed over the network against a served agent: each as one POST body and as one
//! WebSocket text frame, after `initialize`. The answers are the stdio ones (the same
//! error code and id), and the connection goes on. What only differs by design: a batch
//! POSTed is refused with 501 (the RFD), not answered with -32600. Cases given as
//! base64 (invalid UTF-8) are not replayed: a WebSocket text frame cannot carry them,
//! and a body of them is the framing case already covered on stdio.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agentproto_acp::remote::{RemoteServer, ServerLimits, CONNECTION_ID_HEADER};
use agentproto_acp::v1::*;
use futures::{SinkExt, StreamExt};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(10);

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future).await.expect("timed out")
}

#[derive(Default)]
struct Quiet;

impl Agent for Quiet {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, _: AgentContext, _: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// One case: its id, the message (without its line end), the expected code and id.
struct Case {
    id: String,
    message: String,
    code: i64,
    reply_id: Value,
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

fn corpus() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/jsonrpc");
    let mut paths = Vec::new();
    files(&root, &mut paths);
    paths.sort();
    let mut cases = Vec::new();
    for path in paths {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let expect = &case["expect"];
        if expect["outcome"] != "reply_error" {
            continue;
        }
        let message = match (&case["input_text"], &case["input"]) {
            (Value::String(text), _) => text.strip_suffix('\n').unwrap_or(text).to_owned(),
            (_, Value::Null) => continue, // base64: see the module documentation
            (_, value) => value.to_string(),
        };
        cases.push(Case {
            id: case["id"].as_str().unwrap().to_owned(),
            message,
            code: expect["error"]["code"].as_i64().unwrap(),
            reply_id: expect["id"].clone(),
        });
    }
    assert!(cases.len() > 40, "the corpus was not found: {}", cases.len());
    cases
}

fn is_batch(message: &str) -> bool {
    message.trim_start().starts_with('[')
}

/// Whether `answer` is the error the case expects; the mismatch otherwise.
fn check(case: &Case, answer: &str) -> Result<(), String> {
    let answer: Value = serde_json::from_str(answer).map_err(|e| format!("{}: not JSON: {e}", case.id))?;
    if answer["error"]["code"].as_i64() != Some(case.code) || answer["id"] != case.reply_id {
        return Err(format!("{}: expected {} with id {}, got {answer}", case.id, case.code, case.reply_id));
    }
    Ok(())
}

async fn serve() -> (String, tokio_util::sync::CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/acp", listener.local_addr().unwrap());
    let server = RemoteServer::agent::<V1, _, _>(Quiet::default, AcpOptions::default(), ServerLimits::default());
    let stop = tokio_util::sync::CancellationToken::new();
    let until = stop.clone();
    tokio::spawn(async move { server.serve(listener, until).await });
    (url, stop)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":"alive","method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bad_line_corpus_over_http_posts() {
    let (url, stop) = serve().await;
    let client = reqwest::Client::new();
    let post = |body: String| client.post(&url).header("content-type", "application/json").body(body);
    let initialized = within(post(INITIALIZE.to_owned()).send()).await.unwrap();
    assert_eq!(initialized.status(), 200);
    let connection = initialized.headers()[CONNECTION_ID_HEADER].to_str().unwrap().to_owned();
    let stream = client.get(&url).header("accept", "text/event-stream").header(CONNECTION_ID_HEADER, &connection);
    let mut events = within(stream.send()).await.unwrap().bytes_stream();
    let mut buffer = String::new();
    let mut failures = Vec::new();
    for case in corpus() {
        let sent = within(post(case.message.clone()).header(CONNECTION_ID_HEADER, &connection).send()).await.unwrap();
        let status = sent.status().as_u16();
        if is_batch(&case.message) {
            if status != 501 {
                failures.push(format!("{}: a batch POSTed got {status}, not 501", case.id));
            }
            continue;
        }
        assert_eq!(status, 202, "{}", case.id);
        let answer = within(next_event(&mut events, &mut buffer)).await;
        if let Err(failure) = check(&case, &answer) {
            failures.push(failure);
        }
    }
    // The connection is still there.
    let alive = within(post(PING.to_owned()).header(CONNECTION_ID_HEADER, &connection).send()).await.unwrap();
    assert_eq!(alive.status(), 202);
    assert!(within(next_event(&mut events, &mut buffer)).await.contains(r#""sessionId":"s1""#));
    stop.cancel();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

async fn next_event(
    stream: &mut (impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    buffer: &mut String,
) -> String {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            if let Some(data) = event.strip_prefix("data: ") {
                return data.trim_end().to_owned();
            }
            continue;
        }
        let chunk = stream.next().await.expect("the stream ended").unwrap();
        buffer.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bad_line_corpus_over_websocket_frames() {
    use tokio_tungstenite::tungstenite::Message;
    let (url, stop) = serve().await;
    let address = url.trim_start_matches("http://").trim_end_matches("/acp").to_owned();
    let stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let (mut socket, _) = within(tokio_tungstenite::client_async(format!("ws://{address}/acp"), stream)).await.unwrap();
    let next = async |socket: &mut tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>| loop {
        match within(socket.next()).await {
            Some(Ok(Message::Text(text))) => return text.to_string(),
            Some(Ok(_)) => continue,
            other => panic!("the socket ended: {other:?}"),
        }
    };
    within(socket.send(Message::text(INITIALIZE))).await.unwrap();
    assert!(next(&mut socket).await.contains("protocolVersion"));
    let mut failures = Vec::new();
    for case in corpus() {
        within(socket.send(Message::text(case.message.clone()))).await.unwrap();
        let answer = next(&mut socket).await;
        if let Err(failure) = check(&case, &answer) {
            failures.push(failure);
        }
    }
    within(socket.send(Message::text(PING))).await.unwrap();
    assert!(next(&mut socket).await.contains(r#""sessionId":"s1""#));
    stop.cancel();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
