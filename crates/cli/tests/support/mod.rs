//! What the tests of `agentproto serve` share: the built binary as a child process
//! (killed with the test, whichever way the test ends), and HTTP/1.1 spoken by hand over
//! loopback, so the bytes a test compares are exactly the server's.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

/// Every wait is bounded by this.
pub const WAIT: Duration = Duration::from_secs(30);

pub async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(WAIT, f).await.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// A memory figure of process `pid` in bytes: `field` (`"VmRSS:"`, `"VmHWM:"`, …) of
/// `/proc/<pid>/status`.
pub fn proc_bytes(pid: u32, field: &str) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field} in {status}"));
    line[field.len()..].trim().trim_end_matches("kB").trim().parse::<usize>().unwrap() * 1024
}

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("agentproto-serve-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `agentproto serve`.
pub struct Agent {
    pub child: Child,
    pub addr: String,
}

pub async fn spawn(db: &Path) -> Agent {
    spawn_with(db, &[]).await
}

/// `agentproto serve` with `extra` arguments.
pub async fn spawn_with(db: &Path, extra: &[&str]) -> Agent {
    let delay: &[&str] = if extra.contains(&"--delay") { &[] } else { &["--delay", "0.2"] };
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentproto"));
    command.args(["serve", "--addr", "127.0.0.1:0"]).args(delay).args(extra);
    if !extra.contains(&"--memory") {
        command.arg("--db").arg(db);
    }
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit()).kill_on_drop(true);
    // Killed when dropped, and by the kernel if the test process dies first.
    agentproto_process::die_with_parent(command.as_std_mut());
    let mut child = command.spawn().expect("the agentproto binary starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = within("the listening line", lines.next_line()).await.unwrap().expect("serve printed nothing");
    let rest = line.strip_prefix("agentproto serve: listening on http://").unwrap_or_else(|| panic!("{line}"));
    let addr = rest.split_whitespace().next().unwrap().to_owned();
    // Keep draining stdout so the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Agent { child, addr }
}

/// One HTTP/1.1 exchange; the answer's body is read as it arrives (chunked or not).
pub struct Exchange {
    pub conn: TcpStream,
    pub status: u16,
    /// The response head (status line and headers), lowercased.
    pub head: String,
    chunked: bool,
    raw: Vec<u8>,
    body: Vec<u8>,
    pub done: bool,
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub async fn open(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Exchange {
    let mut conn = within("connect", TcpStream::connect(addr)).await.unwrap();
    let body = body.map(|b| serde_json::to_vec(b).unwrap()).unwrap_or_default();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/a2a+json\r\n");
    }
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.write_all(&body).await.unwrap();
    let mut raw = Vec::new();
    let end = loop {
        if let Some(p) = find(&raw, b"\r\n\r\n") {
            break p;
        }
        let mut buf = [0u8; 8192];
        let n = within("the response head", conn.read(&mut buf)).await.unwrap();
        assert!(n > 0, "closed before the response head");
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let status = head[9..12].parse().unwrap();
    let chunked = head.contains("transfer-encoding: chunked");
    raw.drain(..end + 4);
    Exchange { conn, status, head, chunked, raw, body: Vec::new(), done: false }
}

impl Exchange {
    /// Moves more of the body into `body`; false at its end.
    pub async fn more(&mut self) -> bool {
        loop {
            if self.done {
                return false;
            }
            if self.chunked {
                if let Some(pos) = find(&self.raw, b"\r\n") {
                    let size =
                        usize::from_str_radix(std::str::from_utf8(&self.raw[..pos]).unwrap().trim(), 16).unwrap();
                    if size == 0 {
                        self.done = true;
                        return false;
                    }
                    if self.raw.len() >= pos + size + 4 {
                        self.body.extend_from_slice(&self.raw[pos + 2..pos + 2 + size]);
                        self.raw.drain(..pos + size + 4);
                        return true;
                    }
                }
            } else if !self.raw.is_empty() {
                self.body.append(&mut self.raw);
                return true;
            }
            let mut buf = [0u8; 8192];
            let n = within("body bytes", self.conn.read(&mut buf)).await.unwrap();
            if n == 0 {
                self.done = true;
                return false;
            }
            self.raw.extend_from_slice(&buf[..n]);
        }
    }

    pub async fn finish(mut self) -> (u16, Vec<u8>) {
        while self.more().await {}
        (self.status, self.body)
    }

    /// SSE events `(id, data)` read until `stop` says so or the stream ends.
    pub async fn events_until(&mut self, stop: impl Fn(&Value) -> bool) -> Vec<(Option<u64>, String)> {
        let mut out = Vec::new();
        loop {
            while let Some(pos) = find(&self.body, b"\n\n") {
                let block = String::from_utf8(self.body[..pos].to_vec()).unwrap();
                self.body.drain(..pos + 2);
                let (mut id, mut data) = (None, None);
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = Some(v.parse().unwrap());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = Some(v.to_owned());
                    }
                }
                if let Some(data) = data {
                    let end = stop(&serde_json::from_str(&data).unwrap());
                    out.push((id, data));
                    if end {
                        return out;
                    }
                }
            }
            if !self.more().await {
                return out;
            }
        }
    }
}

pub async fn call(addr: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value, Vec<u8>) {
    let (status, bytes) = open(addr, method, path, &[], body).await.finish().await;
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, v, bytes)
}

pub fn send(message_id: &str) -> Value {
    json!({"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
}

pub fn state_of(ev: &Value) -> Option<&str> {
    ev["statusUpdate"]["status"]["state"].as_str().or_else(|| ev["task"]["status"]["state"].as_str())
}

/// The task's whole log, replayed from the start (up to `until`).
pub async fn log(addr: &str, id: &str, until: &'static str) -> Vec<(Option<u64>, String)> {
    let mut ex = open(addr, "GET", &format!("/a2a/rest/tasks/{id}:subscribe"), &[("Last-Event-ID", "0")], None).await;
    assert_eq!(ex.status, 200);
    // A resume starts with the Task as it is now, outside the log (no `id:`).
    let snapshot = within("the task", ex.events_until(|_| true)).await;
    assert!(snapshot[0].0.is_none() && snapshot[0].1.starts_with("{\"task\""), "{snapshot:?}");
    within("the replayed log", ex.events_until(|ev| state_of(ev) == Some(until))).await
}
