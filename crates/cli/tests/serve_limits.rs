//! `agentproto serve` under a low open-files limit, flooded with connections that never
//! send a byte on both its listeners: its connection cap comes from the limit, the
//! connections over it are refused at once (503 on HTTP/1.1, closed on gRPC), the HTTP
//! listener keeps answering while the gRPC one is full, and the silent connections are
//! closed after the header timeout.
//! See: issue 35, item 3.

mod support;

use std::process::Stdio;

use support::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

/// The open-files limit the server runs under (soft and hard).
const NOFILE: u64 = 512;

/// The cap that limit leaves each of two listeners: 128 descriptors reserved, 64 per
/// listener for refusals in progress (`agentproto_a2a::server::descriptors`).
const CAP: usize = ((NOFILE as usize) - 128) / 2 - 64;

const CARD_GET: &[u8] = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n";

/// `agentproto serve` (in memory, gRPC too) under `ulimit -n NOFILE`; its HTTP and gRPC
/// addresses and its announced cap.
async fn spawn_limited(header_timeout: &str) -> (Child, String, String, usize) {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -n {NOFILE} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_agentproto"))
        .args(["serve", "--memory", "--addr", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"])
        .args(["--header-timeout", header_timeout, "--idle-timeout", "600"]);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit()).kill_on_drop(true);
    agentproto_process::die_with_parent(command.as_std_mut());
    let mut child = command.spawn().expect("sh and the agentproto binary start");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = within("the listening line", lines.next_line()).await.unwrap().expect("serve printed nothing");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let after = |marker: &str| -> String {
        let rest = &line[line.find(marker).unwrap_or_else(|| panic!("{marker:?} in {line}")) + marker.len()..];
        rest.split(|c: char| c.is_whitespace() || c == ',' || c == ')').next().unwrap().to_owned()
    };
    let http = after("listening on http://");
    let grpc = after("gRPC on ");
    let cap = after("at most ").parse().unwrap();
    (child, http, grpc, cap)
}

/// Whether the server has closed `conn` (EOF or reset) within the bounded wait.
async fn closed(conn: &mut TcpStream) -> bool {
    let mut buf = [0u8; 256];
    within("the server to close a connection", async {
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => {}
            }
        }
    })
    .await
}

/// Whether the server has not closed `conn` (what it sent, such as an HTTP/2 server's
/// SETTINGS, is read and dropped).
fn still_open(conn: &TcpStream) -> bool {
    let mut buf = [0u8; 256];
    loop {
        match conn.try_read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(e) => return e.kind() == std::io::ErrorKind::WouldBlock,
        }
    }
}

async fn card_status(addr: &str) -> String {
    let mut conn = within("connect", TcpStream::connect(addr)).await.unwrap();
    conn.write_all(CARD_GET).await.unwrap();
    let mut buf = [0u8; 12];
    within("an answer", conn.read_exact(&mut buf)).await.unwrap();
    String::from_utf8_lossy(&buf).into_owned()
}

async fn flood(addr: &str, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        held.push(within("connect", TcpStream::connect(addr)).await.unwrap());
    }
    held
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_listeners_are_capped_under_the_open_files_limit_and_silent_connections_closed() {
    // Long enough for the flood below; the silent connections are closed after it.
    let (_child, http, grpc, cap) = spawn_limited("8").await;
    assert_eq!(cap, CAP, "the cap (default 1024) is what {NOFILE} descriptors allow for two listeners");

    // gRPC: the cap's worth of silent connections is admitted and held; more are
    // closed at once (the held ones, accepted earlier, are still open, so it was not
    // the header timeout), and HTTP keeps answering meanwhile.
    let grpc_held = flood(&grpc, cap).await;
    assert!(card_status(&http).await.starts_with("HTTP/1.1 200"), "HTTP answers while gRPC is full");
    for _ in 0..20 {
        let mut extra = within("connect", TcpStream::connect(&grpc)).await.unwrap();
        assert!(closed(&mut extra).await);
    }
    assert!(grpc_held.iter().all(still_open), "the admitted gRPC connections are held");

    // HTTP: the same cap; one more gets 503 with Retry-After.
    let http_held = flood(&http, cap).await;
    for _ in 0..20 {
        let mut extra = within("connect", TcpStream::connect(&http)).await.unwrap();
        let _ = extra.write_all(CARD_GET).await;
        let mut raw = Vec::new();
        within("the 503", extra.read_to_end(&mut raw)).await.unwrap_or_default();
        let text = String::from_utf8_lossy(&raw).to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 503"), "{text}");
        assert!(text.contains("retry-after: 1"), "{text}");
    }
    assert!(http_held.iter().all(still_open), "the admitted HTTP connections are held");

    // Connections that never send a byte are closed after the header timeout, on both
    // listeners; then both serve again.
    for mut conn in grpc_held.into_iter().chain(http_held) {
        assert!(closed(&mut conn).await);
    }
    assert!(card_status(&http).await.starts_with("HTTP/1.1 200"));
    let mut fresh = within("connect", TcpStream::connect(&grpc)).await.unwrap();
    fresh.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.unwrap();
    // The server's SETTINGS frame answers the preface.
    let mut frame = [0u8; 9];
    within("the server's SETTINGS", fresh.read_exact(&mut frame)).await.unwrap();
    assert_eq!(frame[3], 0x4, "a SETTINGS frame: {frame:?}");
}
