//! HTTP/1.1 as bytes on a 127.0.0.1 socket: the requests the cases send to the server,
//! and a one-answer server that plays the agent for the answer cases. Every read is
//! bounded by [`WAIT`].

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The bound on every wait of the runner.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// A response as read from the socket.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// The request head and body bytes.
pub(crate) fn request_bytes(method: &str, target: &str, headers: &[(String, String)], body: Option<&[u8]>) -> Vec<u8> {
    let mut out = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        out.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    bytes
}

/// Sends one request on a new connection and reads the whole response (the server closes
/// the connection: `Connection: close`).
pub(crate) async fn exchange(addr: SocketAddr, request: &[u8]) -> Result<Response, String> {
    let io = async {
        let mut s = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
        s.write_all(request).await.map_err(|e| format!("write: {e}"))?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.map_err(|e| format!("read: {e}"))?;
        Ok::<_, String>(buf)
    };
    let raw = tokio::time::timeout(WAIT, io).await.map_err(|_| "no complete response in time".to_owned())??;
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> Result<Response, String> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no end of the response head")?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| "response head is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or("bad status line")?;
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked =
        headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked"));
    if chunked {
        body = dechunk(&body)?;
    }
    Ok(Response { status, headers, body })
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = data.windows(2).position(|w| w == b"\r\n").ok_or("broken chunk size line")?;
        let size_text = std::str::from_utf8(&data[..eol]).map_err(|_| "chunk size is not text")?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        data = &data[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if data.len() < size + 2 {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

/// A request as the answer server reads it: its body (the head is only read past).
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) body: Vec<u8>,
}

async fn read_request(s: &mut TcpStream) -> Result<Received, String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = s.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the client closed before a whole request head".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let length = head
        .split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf[end + 4..].to_vec();
    while body.len() < length {
        let n = s.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the client closed before the whole body".into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Received { body })
}

/// A server on 127.0.0.1 that answers each connection's one request with the bytes
/// `answer` makes of it, then closes; it stops when dropped.
pub(crate) struct AnswerServer {
    pub(crate) addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AnswerServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl AnswerServer {
    pub(crate) async fn start(answer: impl Fn(&Received) -> Vec<u8> + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let answer = std::sync::Arc::new(answer);
        let task = tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let answer = answer.clone();
                tokio::spawn(async move {
                    if let Ok(Ok(req)) = tokio::time::timeout(WAIT, read_request(&mut s)).await {
                        let bytes = answer(&req);
                        let _ = tokio::time::timeout(WAIT, s.write_all(&bytes)).await;
                        let _ = s.shutdown().await;
                    }
                });
            }
        });
        AnswerServer { addr, task }
    }
}

/// A whole HTTP/1.1 response with a `Content-Length`.
pub(crate) fn response_bytes(status: u16, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} Vector\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}
