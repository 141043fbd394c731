//! A scripted HTTP/1.1 server on loopback for the client tests: it records every
//! request exactly as received and answers with whatever the test's script returns
//! (canned bytes, an SSE stream that ends cleanly, is cut off, or goes silent).
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// A request as the server read it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    /// Header names in lower case, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    pub fn query(&self) -> Option<&str> {
        self.target.split_once('?').map(|(_, q)| q)
    }
}

/// How an SSE answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The last chunk, then the connection closes.
    Close,
    /// The socket closes without the last chunk (a dropped connection).
    Drop,
    /// Nothing more is sent; the connection stays open.
    Hang,
}

/// What the script answers.
#[derive(Debug, Clone)]
pub enum Reply {
    Full { status: u16, headers: Vec<(String, String)>, body: Vec<u8> },
    Sse { chunks: Vec<Vec<u8>>, end: End },
}

impl Reply {
    pub fn json(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::Full { status, headers: vec![("content-type".into(), content_type.into())], body: body.into() }
    }

    pub fn status(status: u16) -> Reply {
        Reply::Full { status, headers: Vec::new(), body: Vec::new() }
    }

    pub fn sse(chunks: &[&str], end: End) -> Reply {
        Reply::Sse { chunks: chunks.iter().map(|c| c.as_bytes().to_vec()).collect(), end }
    }
}

type Script = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

pub struct Server {
    pub base: String,
    requests: mpsc::UnboundedReceiver<Recorded>,
}

/// Every wait in these tests is bounded by this.
pub const BOUND: Duration = Duration::from_secs(10);

impl Server {
    pub async fn start(script: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let (tx, rx) = mpsc::unbounded_channel();
        let script: Script = Arc::new(script);
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(serve(sock, script.clone(), tx.clone()));
            }
        });
        Server { base, requests: rx }
    }

    /// The next request the server received.
    pub async fn next(&mut self) -> Recorded {
        tokio::time::timeout(BOUND, self.requests.recv())
            .await
            .expect("a request within the bound")
            .expect("server alive")
    }

    /// Every request received so far (none is awaited).
    pub fn drain(&mut self) -> Vec<Recorded> {
        let mut out = Vec::new();
        while let Ok(r) = self.requests.try_recv() {
            out.push(r);
        }
        out
    }
}

async fn read_request(sock: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Recorded> {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 4096];
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    buf.drain(..head_end + 4);
    while buf.len() < len {
        let mut chunk = [0u8; 4096];
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body: Vec<u8> = buf.drain(..len).collect();
    Some(Recorded { method, target, headers, body })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        304 => "Not Modified",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Whatever",
    }
}

async fn serve(mut sock: TcpStream, script: Script, tx: mpsc::UnboundedSender<Recorded>) {
    let mut buf = Vec::new();
    while let Some(req) = read_request(&mut sock, &mut buf).await {
        let reply = script(&req);
        let _ = tx.send(req);
        match reply {
            Reply::Full { status, headers, body } => {
                let mut out = format!("HTTP/1.1 {status} {}\r\ncontent-length: {}\r\n", reason(status), body.len());
                for (n, v) in headers {
                    out.push_str(&format!("{n}: {v}\r\n"));
                }
                out.push_str("\r\n");
                let mut bytes = out.into_bytes();
                bytes.extend_from_slice(&body);
                if sock.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Reply::Sse { chunks, end } => {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n";
                if sock.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for c in chunks {
                    let mut frame = format!("{:x}\r\n", c.len()).into_bytes();
                    frame.extend_from_slice(&c);
                    frame.extend_from_slice(b"\r\n");
                    if sock.write_all(&frame).await.is_err() || sock.flush().await.is_err() {
                        return;
                    }
                }
                match end {
                    End::Close => {
                        let _ = sock.write_all(b"0\r\n\r\n").await;
                        let _ = sock.shutdown().await;
                    }
                    End::Drop => {}
                    End::Hang => {
                        // Keep the socket open until the client gives up on it.
                        let mut sink = [0u8; 64];
                        while matches!(sock.read(&mut sink).await, Ok(n) if n > 0) {}
                    }
                }
                return;
            }
        }
    }
}

/// A card with one interface.
pub fn card(interfaces: &[(&str, &str, &str)]) -> String {
    let ifaces: Vec<serde_json::Value> = interfaces
        .iter()
        .map(|(url, binding, tenant)| {
            let mut v = serde_json::json!({"url": url, "protocolBinding": binding, "protocolVersion": "1.0"});
            if !tenant.is_empty() {
                v["tenant"] = serde_json::json!(tenant);
            }
            v
        })
        .collect();
    serde_json::json!({
        "name": "scripted",
        "description": "a scripted agent",
        "supportedInterfaces": ifaces,
        "version": "1.0.0",
        "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}]
    })
    .to_string()
}

pub fn task_json(id: &str, state: &str) -> serde_json::Value {
    serde_json::json!({"id": id, "contextId": "ctx-1", "status": {"state": state}})
}

pub fn rpc_ok(id: &serde_json::Value, result: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap()
}

/// Runs a test body with the global bound.
pub async fn bounded<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(Duration::from_secs(30), f).await.expect("test finished within its bound");
}
