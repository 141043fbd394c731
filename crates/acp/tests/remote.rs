//! ACP over the network, ours against ours, on real sockets on 127.0.0.1: two prompt
//! turns with streamed updates over Streamable HTTP and WebSocket (updates before the
//! answer they precede), the status codes for bad, forged and oversize requests, a bad
//! message answered with the connection kept, a bearer-token layer, and a WebSocket
//! peer that never reads.

use std::time::Duration;

use agentproto_acp::remote::{
    connect, BearerAuth, RemoteOptions, RemoteServer, ServerLimits, CONNECTION_ID_HEADER, SESSION_ID_HEADER,
};
use agentproto_acp::v1::*;
use futures::{SinkExt, StreamExt};
use tokio_util::sync::CancellationToken;

mod remote_peers;
use remote_peers::{within, Collect, Words};

struct Running {
    server: RemoteServer,
    url: String,
    stop: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn start(limits: ServerLimits, token: Option<&str>) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/acp", listener.local_addr().unwrap());
    let server = RemoteServer::agent::<V1, _, _>(Words::default, AcpOptions::default(), limits);
    let stop = CancellationToken::new();
    let serving = server.clone();
    let token = token.map(str::to_owned);
    let until = stop.clone();
    tokio::spawn(async move {
        match token {
            Some(token) => serving.serve_with(listener, BearerAuth::new(token), until).await,
            None => serving.serve(listener, until).await,
        }
    });
    Running { server, url, stop }
}

async fn two_turns(websocket: bool) {
    let running = start(ServerLimits::default(), None).await;
    let collect = Collect::default();
    let remote = RemoteOptions::new().websocket(websocket);
    let (agent, transport) =
        within(connect::<V1, _>(&running.url, collect.clone(), AcpOptions::default(), remote)).await.unwrap();
    within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.unwrap();
    assert!(transport.connection_id().is_some());
    let session = within(agent.open_session("/")).await.unwrap();
    for turn in ["one two three", "four five six seven"] {
        collect.text.lock().unwrap().clear();
        let answer = within(session.prompt(turn)).await.unwrap();
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        // Every update of the turn arrived before its answer.
        assert_eq!(collect.text.lock().unwrap().as_str(), turn);
    }
    assert_eq!(running.server.connection_count(), 1);
    within(transport.close()).await;
    within(async {
        while running.server.connection_count() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_prompt_turns_over_streamable_http() {
    two_turns(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_prompt_turns_over_websocket() {
    two_turns(true).await;
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;

fn post(client: &reqwest::Client, url: &str, body: impl Into<reqwest::Body>) -> reqwest::RequestBuilder {
    client.post(url).header("content-type", "application/json").body(body)
}

/// Initializes a connection over raw HTTP: its id.
async fn raw_connection(client: &reqwest::Client, url: &str) -> String {
    let response = within(post(client, url, INITIALIZE).send()).await.unwrap();
    assert_eq!(response.status(), 200);
    let id = response.headers()[CONNECTION_ID_HEADER].to_str().unwrap().to_owned();
    let body = within(response.text()).await.unwrap();
    assert!(body.contains("\"protocolVersion\":1"), "{body}");
    id
}

/// The next `data:` event of an SSE response.
async fn next_event(stream: &mut (impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin)) -> String {
    let mut buffer = String::new();
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            if let Some(data) = event.strip_prefix("data: ") {
                return data.trim_end().to_owned();
            }
            continue;
        }
        let chunk = within(stream.next()).await.expect("the stream ended").unwrap();
        buffer.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statuses_for_bad_forged_and_oversize_requests() {
    let limits = ServerLimits::default().max_body_bytes(64 * 1024);
    let running = start(limits, None).await;
    let url = &running.url;
    let client = reqwest::Client::new();
    let status = |r: reqwest::Response| r.status().as_u16();

    // Not initialize, without a connection id.
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
    assert_eq!(status(within(post(&client, url, ping).send()).await.unwrap()), 400);
    // A batch.
    assert_eq!(status(within(post(&client, url, format!("[{INITIALIZE}]")).send()).await.unwrap()), 501);
    // Oversize, declared and chunked.
    let big = "x".repeat(100 * 1024);
    assert_eq!(status(within(post(&client, url, big.clone()).send()).await.unwrap()), 413);
    let chunks = futures::stream::iter([big.clone(), big.clone()].map(Ok::<_, std::io::Error>));
    let chunked = post(&client, url, reqwest::Body::wrap_stream(chunks));
    assert_eq!(status(within(chunked.send()).await.unwrap()), 413);
    // Wrong content type, wrong path, wrong method.
    let text = client.post(url).header("content-type", "text/plain").body(INITIALIZE);
    assert_eq!(status(within(text.send()).await.unwrap()), 415);
    let elsewhere = url.replace("/acp", "/other");
    assert_eq!(status(within(post(&client, &elsewhere, INITIALIZE).send()).await.unwrap()), 404);
    assert_eq!(status(within(client.put(url).send()).await.unwrap()), 405);

    let first = raw_connection(&client, url).await;
    let second = raw_connection(&client, url).await;
    // A forged connection id; a missing one on GET and DELETE.
    let forged = post(&client, url, ping).header(CONNECTION_ID_HEADER, "0123456789abcdef");
    assert_eq!(status(within(forged.send()).await.unwrap()), 404);
    let get = client.get(url).header("accept", "text/event-stream");
    assert_eq!(status(within(get.send()).await.unwrap()), 400);
    assert_eq!(status(within(client.delete(url).send()).await.unwrap()), 400);

    // The second connection gets a session; the first may not name it.
    let sse = |id: &str| client.get(url).header("accept", "text/event-stream").header(CONNECTION_ID_HEADER, id);
    let mut events = within(sse(&second).send()).await.unwrap().bytes_stream();
    let new = post(&client, url, ping).header(CONNECTION_ID_HEADER, &second);
    assert_eq!(status(within(new.send()).await.unwrap()), 202);
    let answer = next_event(&mut events).await;
    assert!(answer.contains(r#""sessionId":"s1""#), "{answer}");
    let theirs = sse(&first).header(SESSION_ID_HEADER, "s1");
    assert_eq!(status(within(theirs.send()).await.unwrap()), 404);
    let ours = sse(&second).header(SESSION_ID_HEADER, "s1");
    let ours = within(ours.send()).await.unwrap();
    assert_eq!(ours.status(), 200);
    // A second reader of an open stream.
    assert_eq!(status(within(sse(&second).send()).await.unwrap()), 409);

    // Bad input is answered on the connection stream, and the connection goes on.
    let bad = post(&client, url, "{\"jsonrpc\":\"2.0\",\"id\":").header(CONNECTION_ID_HEADER, &second);
    assert_eq!(status(within(bad.send()).await.unwrap()), 202);
    let error = next_event(&mut events).await;
    assert!(error.contains("-32700"), "{error}");
    let neither = post(&client, url, r#"{"jsonrpc":"2.0","id":17}"#).header(CONNECTION_ID_HEADER, &second);
    assert_eq!(status(within(neither.send()).await.unwrap()), 202);
    let error = next_event(&mut events).await;
    assert!(error.contains("-32600") && error.contains("17"), "{error}");
    let again = post(&client, url, ping.replace("\"id\":1", "\"id\":2")).header(CONNECTION_ID_HEADER, &second);
    assert_eq!(status(within(again.send()).await.unwrap()), 202);
    assert!(next_event(&mut events).await.contains(r#""sessionId":"s1""#));

    // DELETE ends it; its id is then unknown.
    let delete = client.delete(url).header(CONNECTION_ID_HEADER, &second);
    assert_eq!(status(within(delete.send()).await.unwrap()), 202);
    let after = post(&client, url, ping).header(CONNECTION_ID_HEADER, &second);
    assert_eq!(status(within(after.send()).await.unwrap()), 404);
    // The streams end with the connection.
    within(async { while let Some(Ok(_)) = events.next().await {} }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_layer_guards_every_request() {
    let running = start(ServerLimits::default(), Some("sesame")).await;
    let client = reqwest::Client::new();
    let refused = within(post(&client, &running.url, INITIALIZE).send()).await.unwrap();
    assert_eq!(refused.status(), 401);
    let admitted = post(&client, &running.url, INITIALIZE).bearer_auth("sesame");
    assert_eq!(within(admitted.send()).await.unwrap().status(), 200);
    let remote = RemoteOptions::new().websocket(true).header("authorization", "Bearer sesame");
    let (agent, transport) =
        within(connect::<V1, _>(&running.url, Collect::default(), AcpOptions::default(), remote)).await.unwrap();
    within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.unwrap();
    within(transport.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_streamable_http_connections_are_reaped() {
    let limits = ServerLimits::default().idle_timeout(Duration::from_millis(200));
    let running = start(limits, None).await;
    let client = reqwest::Client::new();
    raw_connection(&client, &running.url).await;
    assert_eq!(running.server.connection_count(), 1);
    within(async {
        while running.server.connection_count() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_peer_that_never_reads_is_ended_after_the_stall_timeout() {
    use tokio_tungstenite::tungstenite::Message;
    let limits = ServerLimits::default().max_queued_bytes(64 * 1024).stall_timeout(Duration::from_millis(300));
    let running = start(limits, None).await;
    let address = running.url.trim_start_matches("http://").trim_end_matches("/acp").to_owned();
    let stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let (mut socket, _) = within(tokio_tungstenite::client_async(format!("ws://{address}/acp"), stream)).await.unwrap();
    for message in [
        INITIALIZE.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"flood"}]}}"#.to_owned(),
    ] {
        within(socket.send(Message::text(message))).await.unwrap();
    }
    // Never read: the server's output stalls, and the connection is ended.
    assert_eq!(running.server.connection_count(), 1);
    within(async {
        while running.server.connection_count() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    drop(socket);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_websocket_message_closes_the_socket() {
    use tokio_tungstenite::tungstenite::Message;
    let limits = ServerLimits::default().max_body_bytes(1024);
    let running = start(limits, None).await;
    let address = running.url.trim_start_matches("http://").trim_end_matches("/acp").to_owned();
    let stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let (mut socket, _) = within(tokio_tungstenite::client_async(format!("ws://{address}/acp"), stream)).await.unwrap();
    within(socket.send(Message::text("x".repeat(4096)))).await.unwrap();
    let close = within(async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
                Some(Ok(_)) => continue,
                _ => return None,
            }
        }
    })
    .await;
    assert_eq!(close, Some(1009));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_connections_are_capped_and_reaped() {
    let limits = ServerLimits::default().max_connections(50).idle_timeout(Duration::from_millis(300));
    let running = start(limits, None).await;
    let client = reqwest::Client::new();
    let (mut opened, mut refused) = (0, 0);
    for _ in 0..200 {
        let response = within(post(&client, &running.url, INITIALIZE).send()).await.unwrap();
        match response.status().as_u16() {
            200 => opened += 1,
            503 => {
                assert_eq!(response.headers()["retry-after"], "1");
                refused += 1;
            }
            other => panic!("unexpected status {other}"),
        }
        assert!(running.server.connection_count() <= 50);
    }
    assert_eq!((opened, refused), (50, 150));
    // Nobody comes back: every one is ended after the idle timeout, and room is made.
    within(async {
        while running.server.connection_count() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    raw_connection(&client, &running.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_request_head_is_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let limits = ServerLimits::default().header_timeout(Duration::from_millis(200));
    let running = start(limits, None).await;
    let address = running.url.trim_start_matches("http://").trim_end_matches("/acp").to_owned();
    let mut idle = Vec::new();
    for _ in 0..100 {
        idle.push(tokio::net::TcpStream::connect(&address).await.unwrap());
    }
    let mut slow = tokio::net::TcpStream::connect(&address).await.unwrap();
    slow.write_all(b"POST /acp HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    // The server closes it (perhaps after a 408), however long we wait to finish the head.
    let mut rest = Vec::new();
    within(slow.read_to_end(&mut rest)).await.unwrap();
    for mut socket in idle {
        let mut buffer = Vec::new();
        within(socket.read_to_end(&mut buffer)).await.unwrap();
    }
    // The server still serves.
    raw_connection(&reqwest::Client::new(), &running.url).await;
}

async fn cancelled_turn(websocket: bool) {
    let running = start(ServerLimits::default(), None).await;
    let collect = Collect::default();
    let remote = RemoteOptions::new().websocket(websocket);
    let (agent, transport) =
        within(connect::<V1, _>(&running.url, collect.clone(), AcpOptions::default(), remote)).await.unwrap();
    within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.unwrap();
    let session = within(agent.open_session("/")).await.unwrap();
    let turn = session.prompt("wait");
    tokio::pin!(turn);
    // The turn is under way once its first update arrived.
    within(async {
        loop {
            tokio::select! {
                biased;
                answer = &mut turn => panic!("the turn ended before it was cancelled: {answer:?}"),
                () = tokio::time::sleep(Duration::from_millis(5)) => {}
            }
            if collect.text.lock().unwrap().as_str() == "waiting" {
                break;
            }
        }
    })
    .await;
    within(session.cancel()).await.unwrap();
    let answer = within(turn).await.unwrap();
    assert_eq!(answer.stop_reason, StopReason::Cancelled);
    // The connection goes on.
    let answer = within(session.prompt("after")).await.unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    within(transport.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_is_cancelled_over_streamable_http() {
    cancelled_turn(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_is_cancelled_over_websocket() {
    cancelled_turn(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_stream_gets_keepalive_comments() {
    let limits = ServerLimits::default().keepalive_interval(Duration::from_millis(50));
    let running = start(limits, None).await;
    let client = reqwest::Client::new();
    let id = raw_connection(&client, &running.url).await;
    let stream = client.get(&running.url).header("accept", "text/event-stream").header(CONNECTION_ID_HEADER, &id);
    let response = within(stream.send()).await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.bytes_stream();
    let mut seen = Vec::new();
    while seen.len() < 2 * b": keepalive\n\n".len() {
        seen.extend_from_slice(&within(body.next()).await.unwrap().unwrap());
    }
    assert!(seen.starts_with(b": keepalive\n\n: keepalive\n\n"), "{}", String::from_utf8_lossy(&seen));
    // While the stream is open the connection is not idle: it is still there.
    assert_eq!(running.server.connection_count(), 1);
}
