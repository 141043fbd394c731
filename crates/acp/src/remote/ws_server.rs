//! The WebSocket side of a served connection: one text message per line both ways,
//! binary messages ignored, messages over the body limit refused (close 1009).

use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use super::limits::ServerLimits;
use super::served::{Served, StreamKey};

/// Runs the socket of `served` until either side ends.
pub(crate) async fn run(served: Arc<Served>, upgraded: hyper::upgrade::Upgraded, limits: &ServerLimits) {
    let io = TokioIo::new(upgraded);
    let socket =
        WebSocketStream::from_raw_socket(io, Role::Server, Some(super::ws_config(limits.max_body_bytes))).await;
    let (mut write, mut read) = socket.split();
    served.attach(&StreamKey::Main);
    let reader = served.clone();
    let reading = async move {
        while let Some(message) = read.next().await {
            match message {
                Ok(Message::Text(text)) => {
                    reader.touch();
                    if !reader.feed.put(text.as_bytes()).await {
                        return None;
                    }
                }
                Ok(Message::Close(_)) => return None,
                Ok(_) => {} // binary, ping, pong: tungstenite answers pings itself
                Err(WsError::Capacity(_)) => return Some(CloseCode::Size),
                Err(_) => return None,
            }
        }
        None
    };
    let writer = served.clone();
    let (close_send, close_receive) = tokio::sync::oneshot::channel::<CloseCode>();
    let writing = async move {
        loop {
            let lines = writer.next(&StreamKey::Main, None).await;
            if lines.is_empty() && writer.is_ended() {
                break;
            }
            for line in lines {
                let text = String::from_utf8_lossy(&line).into_owned();
                if write.feed(Message::text(text)).await.is_err() {
                    return;
                }
            }
            if write.flush().await.is_err() {
                return;
            }
        }
        let code = close_receive.await.unwrap_or(CloseCode::Normal);
        let _ = write.send(Message::Close(Some(CloseFrame { code, reason: "".into() }))).await;
    };
    tokio::pin!(reading);
    tokio::pin!(writing);
    tokio::select! {
        code = &mut reading => {
            // The peer is gone, or sent too much: the connection ends; what is left to
            // write is written if the socket takes it (bounded by the keepalive interval).
            served.close();
            let _ = close_send.send(code.unwrap_or(CloseCode::Normal));
            let _ = tokio::time::timeout(limits.keepalive_interval, &mut writing).await;
        }
        () = &mut writing => {
            // The connection ended by itself and its last lines and the close are written.
        }
    }
    served.close();
}
