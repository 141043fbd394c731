//! Server-sent events for the streaming operations of both HTTP bindings: one frame per
//! event, keep-alives while idle, and the first event awaited before the headers.
//!
//! An event's charge against the stream budget (see [`crate::stream::Charge`]) moves to
//! its frame: resized to the frame's length, it rides in the frame's bytes and is
//! released when hyper drops them, once written (or with the connection). The
//! connection's closer is bound to it, so a subscriber cut off to make room has its
//! connection closed, the one way to free a frame a client does not read.

use super::*;
use crate::server::listen::ConnectionCloser;
use crate::stream::{ride, Charge};

/// One SSE event: an optional `id:` and `event:` line, then the data (one JSON text, so
/// one `data:` line), then a blank line.
pub(crate) fn frame(seq: Option<u64>, event: Option<&str>, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 32);
    if let Some(seq) = seq {
        out.extend(format!("id: {seq}\n").as_bytes());
    }
    if let Some(ev) = event {
        out.extend(format!("event: {ev}\n").as_bytes());
    }
    out.extend(b"data: ");
    out.extend(data);
    out.extend(b"\n\n");
    Bytes::from(out)
}

/// Answers with an SSE stream. The first item is awaited before the headers are sent,
/// so a failure that happens at once is an ordinary HTTP error, not a stream.
pub(crate) async fn sse<E, F>(
    app: &App<E>,
    parts: &http::request::Parts,
    events: EventStream,
    render: F,
) -> Result<Response, A2aError>
where
    F: Fn(StreamOut) -> Option<Bytes> + Send + 'static,
{
    // Fused: an empty stream (a resume after the last event) must not be polled again.
    let mut events = events.fuse();
    let first = match events.next().await {
        Some(StreamOut::Error(e)) => return Err(e),
        other => other,
    };
    let keep_alive = app.options.keep_alive;
    let shutdown = app.core.shutdown.clone();
    let closer = parts.extensions.get::<ConnectionCloser>().cloned();
    let head = futures::stream::iter(first);
    let body = keep_alive_stream(head.chain(events), keep_alive)
        .take_until(async move { shutdown.cancelled().await })
        .filter_map(move |item| {
            let out = match item {
                Tick::Event(mut ev) => {
                    let charge = ev.take_charge();
                    render(ev).map(|frame| held(frame, charge, closer.as_ref()))
                }
                Tick::KeepAlive => Some(Bytes::from_static(b": keep-alive\n\n")),
            };
            futures::future::ready(out.map(Ok::<_, Infallible>))
        });
    let mut resp = Response::new(Body::from_stream(body));
    let h = resp.headers_mut();
    h.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(resp)
}

/// A frame's bytes that keep `charge` counted until hyper drops them.
fn held(frame: Bytes, mut charge: Charge, closer: Option<&ConnectionCloser>) -> Bytes {
    if charge.bytes() == 0 {
        return frame; // a charge of nothing (not an event of a subscription)
    }
    charge.resize(frame.len());
    if let Some(closer) = closer {
        charge.bind(&closer.0);
    }
    ride(frame, vec![charge])
}

pub(super) enum Tick {
    Event(StreamOut),
    KeepAlive,
}

/// Interleaves keep-alive ticks into an event stream while it waits; ends with it.
pub(super) fn keep_alive_stream(
    events: impl Stream<Item = StreamOut> + Send + 'static,
    every: Duration,
) -> impl Stream<Item = Tick> + Send {
    let events = Box::pin(events);
    futures::stream::unfold(Some(events), move |state| async move {
        let mut events = state?;
        tokio::select! {
            item = events.next() => item.map(|ev| (Tick::Event(ev), Some(events))),
            _ = tokio::time::sleep(every) => Some((Tick::KeepAlive, Some(events))),
        }
    })
}
