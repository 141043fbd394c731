//! The router: reads the client's messages and hands each to its judge.

use std::sync::Arc;

use agentproto_jsonrpc::Message;
use tokio::time::Instant;

use super::messages::{on_notification, on_request, on_response};
use super::{lock, Shared};
use crate::wire::{Inbox, Wire};

/// Reads the client's messages until it closes the connection or stays silent
/// for the timeout with no turn running.
pub(super) async fn route(shared: Arc<Shared>, mut inbox: Inbox, turns: &mut Vec<tokio::task::JoinHandle<()>>) {
    loop {
        let deadline = Instant::now() + shared.timeout;
        let Some(wire) = inbox.next_until(deadline).await else {
            if lock(&shared.state).turns.is_empty() {
                (shared.progress)("the client has been silent for the timeout; ending the run");
                return;
            }
            continue;
        };
        let message = match wire {
            Wire::Message(message) => message,
            Wire::Invalid { excerpt, error } => {
                shared.fail(
                    "ACP-CLIENT-WIRE-001",
                    format!("wrote a line that is not a JSON-RPC message ({error}): {excerpt:?}"),
                );
                continue;
            }
            Wire::Oversize(len) => {
                shared.fail("ACP-CLIENT-WIRE-001", format!("wrote a line of {len} bytes, over the bound"));
                continue;
            }
            Wire::Closed => return,
            Wire::Failed(e) => {
                shared.note(format!("reading from the client failed: {e}"));
                return;
            }
        };
        shared.pass("ACP-CLIENT-WIRE-001");
        let first = {
            let mut state = lock(&shared.state);
            state.seen += 1;
            state.seen == 1
        };
        if first {
            let is_initialize = matches!(&message, Message::Request { method, .. } if method == "initialize");
            shared.check("ACP-CLIENT-INIT-001", is_initialize, || match &message {
                Message::Request { method, .. } | Message::Notification { method, .. } => {
                    format!("the first message was {method:?}")
                }
                Message::Response { id, .. } => format!("the first message was a response (id {id})"),
            });
        }
        match message {
            Message::Request { id, method, params } => {
                if let Some(turn) = on_request(&shared, id, &method, params.as_deref()).await {
                    turns.push(turn);
                }
            }
            Message::Notification { method, params } => on_notification(&shared, &method, params.as_deref()).await,
            Message::Response { id, result } => on_response(&shared, id, result),
        }
    }
}
