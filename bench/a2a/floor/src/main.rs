//! The raw-socket floor of the A2A benchmark (seed 004's floor target): a thread per
//! connection, HTTP/1.1 keep-alive, each request read whole (headers, then
//! `Content-Length` bytes of body) and answered with one canned `200 OK`, `Content-Type:
//! application/json`, body `{"jsonrpc":"2.0","id":1,"result":{}}` padded with spaces to 259
//! bytes. It parses nothing else and runs no agent: it bounds sequential latency only.
//! Listens on `127.0.0.1:0` and prints `LISTENING <port>`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

const BODY_LEN: usize = 259;

fn response() -> Vec<u8> {
    let mut body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
    body.resize(BODY_LEN, b' ');
    let mut out =
        format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {BODY_LEN}\r\n\r\n").into_bytes();
    out.extend_from_slice(&body);
    out
}

fn content_length(head: &[u8]) -> usize {
    let text = String::from_utf8_lossy(head);
    text.split("\r\n")
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

fn serve(mut stream: TcpStream, answer: &[u8]) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        // One request: the head, then its body.
        let end = loop {
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let need = at + 4 + content_length(&buf[..at]);
                if buf.len() >= need {
                    break need;
                }
            }
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        buf.drain(..end);
        stream.write_all(answer)?;
    }
}

fn main() -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let mut out = std::io::stdout();
    writeln!(out, "LISTENING {}", listener.local_addr()?.port())?;
    out.flush()?;
    let answer: &'static [u8] = response().leak();
    for stream in listener.incoming() {
        let stream = stream?;
        std::thread::spawn(move || serve(stream, answer));
    }
    Ok(())
}
