//! The HTTP floor of the A2A benchmark: what "an HTTP JSON server in Rust" costs on this
//! machine, with nothing of A2A in it. A bare hyper 1 HTTP/1.1 server on a multi-thread
//! tokio runtime (as agentproto's server runs): each request's body is read whole,
//! parsed into a `serde_json::Value` (a request that is not JSON gets a 400), and
//! answered with the canned 259-byte JSON-RPC body of the raw-socket floor. No routing,
//! no envelope check, no executor, no store. Listens on `127.0.0.1:0` and prints
//! `LISTENING <port>`.

use std::convert::Infallible;
use std::io::Write;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

const BODY_LEN: usize = 259;

fn canned() -> Bytes {
    let mut body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
    body.resize(BODY_LEN, b' ');
    Bytes::from(body)
}

async fn answer(request: Request<Incoming>, body: Bytes) -> Result<Response<Full<Bytes>>, Infallible> {
    let read = request.into_body().collect().await.map(|collected| collected.to_bytes());
    let parsed = read.ok().and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    let (status, body) = match parsed {
        Some(_) => (StatusCode::OK, body),
        None => (StatusCode::BAD_REQUEST, Bytes::from_static(b"{}")),
    };
    let response = Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(body))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())));
    Ok(response)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut out = std::io::stdout();
    writeln!(out, "LISTENING {}", listener.local_addr()?.port())?;
    out.flush()?;
    let body = canned();
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let body = body.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| answer(request, body.clone()));
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
