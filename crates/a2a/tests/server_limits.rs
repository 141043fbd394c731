//! Slow and abusive clients against `A2aServer::serve`: idle connections, heads and
//! bodies sent a byte at a time, too many connections, a shutdown with half-sent
//! requests, bodies declared too large, broken chunked framing, deep JSON. Timeouts
//! are short here; every wait is bounded by [`WAIT`].
#![cfg(feature = "server")]
mod common;

use std::time::Duration;

use agentproto_a2a::server::{A2aServer, HttpOptions};
use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// HTTP options with every connection limit long, so that a test shortens only the
/// one it is about.
fn relaxed() -> HttpOptions {
    HttpOptions {
        header_timeout: Duration::from_secs(60),
        body_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        shutdown_timeout: Duration::from_secs(60),
        ..HttpOptions::default()
    }
}

async fn limited(http: HttpOptions) -> Server {
    start(move |base| A2aServer::builder(demo(300), agentproto_a2a::demo::card(base)).http(http)).await
}

async fn connect(srv: &Server) -> TcpStream {
    within("connect", TcpStream::connect(srv.addr)).await.unwrap()
}

/// Reads until the server closes the connection (EOF or reset); returns what came.
async fn until_closed(conn: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    within("the server to close the connection", async {
        let mut buf = [0u8; 4096];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    got
}

/// Reads one response (head and `Content-Length` body) without waiting for a close.
async fn one_response(conn: &mut TcpStream) -> (String, Vec<u8>) {
    within("a response", async {
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if raw.len() >= end + 4 + len {
                    return (head, raw[end + 4..end + 4 + len].to_vec());
                }
            }
            let n = conn.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed before a whole response: {}", String::from_utf8_lossy(&raw));
            raw.extend_from_slice(&buf[..n]);
        }
    })
    .await
}

fn status_line(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).lines().next().unwrap_or_default().to_owned()
}

const CARD_GET: &[u8] = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed() {
    let idle = Duration::from_millis(300);
    let srv = limited(HttpOptions { idle_timeout: idle, ..relaxed() }).await;
    // A keep-alive connection after its answer.
    let mut kept = connect(&srv).await;
    // The server's idle clock starts when it has written the answer, which is after this
    // instant and may be before the client has read it: measure from the send.
    let sent = Instant::now();
    kept.write_all(CARD_GET).await.unwrap();
    let (head, _) = one_response(&mut kept).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(until_closed(&mut kept).await.is_empty());
    assert!(sent.elapsed() >= idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_speaks_is_closed_after_the_header_timeout() {
    // See: issue 35, item 4 (it was held for the idle timeout).
    let header = Duration::from_millis(300);
    let srv = limited(HttpOptions { header_timeout: header, ..relaxed() }).await;
    let opened = Instant::now();
    let mut silent = connect(&srv).await;
    assert!(until_closed(&mut silent).await.is_empty());
    let took = opened.elapsed();
    assert!(took >= header, "closed before the header timeout: {took:?}");
    assert!(took < Duration::from_secs(30), "the idle timeout (60 s) did it: {took:?}");
    // A first head sent slowly gets no more than the header timeout from the accept.
    let opened = Instant::now();
    let mut slow = connect(&srv).await;
    slow.write_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\n").await.unwrap();
    assert!(until_closed(&mut slow).await.is_empty());
    assert!(opened.elapsed() < Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_sent_a_byte_at_a_time_is_cut_off() {
    let header = Duration::from_millis(400);
    let srv = limited(HttpOptions { header_timeout: header, ..relaxed() }).await;
    let mut conn = connect(&srv).await;
    let started = Instant::now();
    conn.write_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\n").await.unwrap();
    // A header line every 50 ms: the connection is never quiet, but the head never ends.
    let mut trickle = tokio::time::interval(Duration::from_millis(50));
    let mut buf = [0u8; 1024];
    let got = within("the server to cut the head off", async {
        loop {
            tokio::select! {
                _ = trickle.tick() => {
                    if conn.write_all(b"X-Slow: 1\r\n").await.is_err() {
                        return 0;
                    }
                }
                read = conn.read(&mut buf) => return read.unwrap_or(0),
            }
        }
    })
    .await;
    assert_eq!(got, 0, "no answer, a close: {}", String::from_utf8_lossy(&buf));
    let took = started.elapsed();
    assert!(took >= header, "{took:?}");
    assert!(took < Duration::from_secs(30), "the idle timeout (60 s) did not do it: {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_sent_a_byte_at_a_time_gets_408() {
    let body = Duration::from_millis(400);
    let srv = limited(HttpOptions { body_timeout: body, ..relaxed() }).await;
    for path in ["/", "/a2a/rest/message:send"] {
        let mut conn = connect(&srv).await;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
             Content-Length: 1000\r\n\r\n{{\"jsonrpc\""
        );
        conn.write_all(head.as_bytes()).await.unwrap();
        let started = Instant::now();
        let mut trickle = tokio::time::interval(Duration::from_millis(50));
        let mut raw = Vec::new();
        within("the server to give up on the body", async {
            let mut buf = [0u8; 4096];
            loop {
                tokio::select! {
                    _ = trickle.tick() => {
                        if conn.write_all(b" ").await.is_err() {
                            break;
                        }
                    }
                    read = conn.read(&mut buf) => match read {
                        Ok(0) | Err(_) => break,
                        Ok(n) => raw.extend_from_slice(&buf[..n]),
                    },
                }
            }
        })
        .await;
        let text = String::from_utf8_lossy(&raw).to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 408"), "{path}: {text}");
        assert!(text.contains("connection: close"), "{path}: {text}");
        assert!(text.contains("request_timeout"), "{path}: {text}");
        assert!(started.elapsed() >= body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_limit_get_503() {
    let srv = limited(HttpOptions { max_connections: 3, ..relaxed() }).await;
    // Three connections, each shown to be served (an answer on it).
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut conn = connect(&srv).await;
        conn.write_all(CARD_GET).await.unwrap();
        let (head, _) = one_response(&mut conn).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        held.push(conn);
    }
    let mut extra = connect(&srv).await;
    let _ = extra.write_all(CARD_GET).await;
    let raw = until_closed(&mut extra).await;
    assert_eq!(status_line(&raw), "HTTP/1.1 503 Service Unavailable", "{}", String::from_utf8_lossy(&raw));
    assert!(String::from_utf8_lossy(&raw).to_ascii_lowercase().contains("retry-after: 1"));
    // A slot comes back when a connection ends: a new one is served once the server
    // has noticed the close (bounded wait, one attempt per tick).
    drop(held.pop());
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    within("a freed slot", async {
        loop {
            tick.tick().await;
            let mut conn = connect(&srv).await;
            let _ = conn.write_all(CARD_GET).await;
            let mut buf = [0u8; 16];
            if conn.read_exact(&mut buf).await.is_ok() && buf.starts_with(b"HTTP/1.1 200") {
                return;
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_within_its_deadline_despite_half_sent_requests() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let http = HttpOptions { shutdown_timeout: Duration::from_millis(500), ..relaxed() };
    let server =
        A2aServer::builder(demo(300), agentproto_a2a::demo::card(&format!("http://{addr}"))).http(http).build();
    let token = server.shutdown_token();
    let serving = tokio::spawn(server.serve(listener));
    let connect = || async { within("connect", TcpStream::connect(addr)).await.unwrap() };

    let mut idle = connect().await;
    let mut half_head = connect().await;
    half_head.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-").await.unwrap();
    // A body the handler is waiting for: `100 Continue` says it has started reading.
    let mut half_body = connect().await;
    half_body
        .write_all(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n\
              Content-Length: 1000\r\n\r\n",
        )
        .await
        .unwrap();
    let mut buf = [0u8; 25];
    within("100 Continue", half_body.read_exact(&mut buf)).await.unwrap();
    assert!(buf.starts_with(b"HTTP/1.1 100 Continue"), "{}", String::from_utf8_lossy(&buf));
    half_body.write_all(b"{\"jsonrpc\":").await.unwrap();

    let stopped = Instant::now();
    token.cancel();
    within("serve to return", serving).await.unwrap().unwrap();
    let took = stopped.elapsed();
    assert!(took < Duration::from_secs(30), "bounded by the shutdown timeout, not the 60 s ones: {took:?}");
    for conn in [&mut idle, &mut half_head, &mut half_body] {
        until_closed(conn).await;
    }
    assert!(TcpStream::connect(addr).await.is_err(), "the listener is closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_body_does_not_hold_the_shutdown() {
    // See: issue 35, item 7 (it held the shutdown for its whole timeout).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // A shutdown timeout far beyond the bounded wait: only closing the half-sent
    // request at once lets serve return within it.
    let http = HttpOptions { shutdown_timeout: Duration::from_secs(600), ..relaxed() };
    let server =
        A2aServer::builder(demo(300), agentproto_a2a::demo::card(&format!("http://{addr}"))).http(http).build();
    let token = server.shutdown_token();
    let serving = tokio::spawn(server.serve(listener));
    let mut half_body = within("connect", TcpStream::connect(addr)).await.unwrap();
    half_body
        .write_all(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n\
              Content-Length: 1000\r\n\r\n",
        )
        .await
        .unwrap();
    let mut buf = [0u8; 25];
    within("100 Continue", half_body.read_exact(&mut buf)).await.unwrap();
    half_body.write_all(b"{\"jsonrpc\":").await.unwrap();
    // A whole request in progress on another connection still gets its answer.
    let mut whole = within("connect", TcpStream::connect(addr)).await.unwrap();
    whole.write_all(CARD_GET).await.unwrap();
    let (head, _) = one_response(&mut whole).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    token.cancel();
    within("serve to return", serving).await.unwrap().unwrap();
    until_closed(&mut half_body).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_length_over_the_limit_is_refused_before_the_body() {
    let srv = limited(HttpOptions { max_body_bytes: 1024, ..relaxed() }).await;
    for path in ["/", "/a2a/rest/message:send"] {
        let mut conn = connect(&srv).await;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
             Expect: 100-continue\r\nContent-Length: 10000000\r\n\r\n"
        );
        conn.write_all(head.as_bytes()).await.unwrap();
        // The answer comes without a byte of the body sent, and it is not `100 Continue`.
        let (head, body) = one_response(&mut conn).await;
        assert!(head.starts_with("http/1.1 413"), "{path}: {head}");
        assert!(String::from_utf8_lossy(&body).contains("PAYLOAD_TOO_LARGE"), "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_chunked_framing_is_400() {
    let srv = limited(relaxed()).await;
    for path in ["/", "/a2a/rest/message:send"] {
        let mut conn = connect(&srv).await;
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
             Transfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n"
        );
        conn.write_all(req.as_bytes()).await.unwrap();
        let raw = until_closed(&mut conn).await;
        let text = String::from_utf8_lossy(&raw);
        assert!(text.starts_with("HTTP/1.1 400"), "{path}: {text}");
        assert!(text.contains("MALFORMED_BODY"), "{path}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codings_the_server_does_not_decode_are_refused() {
    // See: issue 35, item 5 (both were answered 200, the body read as plain JSON).
    let srv = limited(relaxed()).await;
    for path in ["/", "/a2a/rest/message:send"] {
        let params =
            format!(r#"{{"message":{{"messageId":"{}","role":"ROLE_USER","parts":[{{"text":"hi"}}]}}}}"#, mid("plain"));
        let body = if path == "/" {
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{params}}}"#)
        } else {
            params
        };
        let mut conn = connect(&srv).await;
        let chunked = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
             Transfer-Encoding: gzip, chunked\r\n\r\n{chunked}"
        );
        conn.write_all(req.as_bytes()).await.unwrap();
        let raw = until_closed(&mut conn).await;
        assert_eq!(status_line(&raw), "HTTP/1.1 501 Not Implemented", "{path}: {}", String::from_utf8_lossy(&raw));

        let mut conn = connect(&srv).await;
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
             Content-Encoding: gzip\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        conn.write_all(req.as_bytes()).await.unwrap();
        let (head, _) = one_response(&mut conn).await;
        assert!(head.starts_with("http/1.1 415"), "{path}: {head}");
        assert!(head.contains("\r\naccept-encoding: identity"), "{path}: {head}");
        // `identity` is no coding at all, and the same connection goes on.
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
             Content-Encoding: identity\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        conn.write_all(req.as_bytes()).await.unwrap();
        let (head, _) = one_response(&mut conn).await;
        assert!(head.starts_with("http/1.1 200"), "{path}: {head}");
    }
}

/// `SendMessage` params (as text: serde_json's own `Value` stops at 128 levels) whose
/// one data part nests `depth` arrays; no history in the answer, which would nest it.
fn nested(depth: usize) -> String {
    format!(
        r#"{{"message":{{"messageId":"{}","role":"ROLE_USER","parts":[{{"data":{}{}}}]}},"configuration":{{"historyLength":0}}}}"#,
        mid("tck-complete-task"),
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

async fn send_raw(srv: &Server, b: B, params: &str) -> Reply {
    let (url, body) = match b {
        B::Rpc => (
            format!("{}/", srv.base),
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{params}}}"#),
        ),
        B::Rest => (format!("{}/a2a/rest/message:send", srv.base), params.to_owned()),
    };
    let send = srv.http.post(url).header("A2A-Version", "1.0").header("Content-Type", "application/json").body(body);
    Reply::read(b, within("SendMessage", send.send()).await.unwrap()).await
}

/// A raw call on either binding (`GET` on HTTP+JSON for the reads), answered as text.
async fn call_raw(srv: &Server, b: B, method: &str, params: &str, rest_path: &str) -> String {
    let request = match b {
        B::Rpc => srv
            .http
            .post(format!("{}/", srv.base))
            .header("Content-Type", "application/json")
            .body(format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{params}}}"#)),
        B::Rest => srv.http.get(format!("{}/a2a/rest{rest_path}", srv.base)),
    };
    let answer = within(method, request.header("A2A-Version", "1.0").send()).await.unwrap();
    assert_eq!(answer.status(), 200, "{b:?} {method}");
    within(method, answer.text()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_nesting_limit_on_both_bindings_leaves_room_for_every_answer() {
    use agentproto_jsonrpc::message::MAX_NESTING_DEPTH;
    let srv = limited(relaxed()).await;
    // The request object is level 1 and the part's data starts at level 5: 120 arrays
    // reach level 124, the limit; one more is over it.
    let limit = 120;
    for b in BOTH {
        let r = send_raw(&srv, b, &nested(limit)).await;
        assert_eq!(r.ok()["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{b:?}");
        let task_id = r.ok()["task"]["id"].as_str().unwrap().to_owned();
        send_raw(&srv, b, &nested(limit + 1)).await.err(PARSE);
        // Far deeper: refused before it is parsed.
        send_raw(&srv, b, &nested(100_000)).await.err(PARSE);
        // See: issue 35, item 6. The answers that carry the part back, the deepest
        // (JSON-RPC ListTasks) included, stay within the limit every reader here
        // applies to a whole message, the client's included.
        let get = format!(r#"{{"id":"{task_id}","historyLength":10}}"#);
        let answers = [
            call_raw(&srv, b, "GetTask", &get, &format!("/tasks/{task_id}?historyLength=10")).await,
            call_raw(&srv, b, "ListTasks", r#"{"historyLength":10}"#, "/tasks?historyLength=10").await,
        ];
        for (answer, name) in answers.iter().zip(["GetTask", "ListTasks"]) {
            assert!(answer.contains(&"[".repeat(limit)), "{b:?} {name} carries the part back: {answer:.300}");
            assert!(!agentproto_jsonrpc::nesting_exceeds(answer.as_bytes(), MAX_NESTING_DEPTH), "{b:?} {name}");
        }
        if let B::Rpc = b {
            // The limit is exact: the deepest answer reaches the readers' limit.
            assert!(agentproto_jsonrpc::nesting_exceeds(answers[1].as_bytes(), MAX_NESTING_DEPTH - 1));
        }
    }
}
