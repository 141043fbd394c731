//! The writer task: drains the outgoing queues into a [`FrameWriter`], flushing
//! whenever the queues are empty (so messages are batched under load).

use std::io;

use tokio::io::AsyncWrite;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::peer::Outgoing;
use crate::frame::FrameWriter;

pub(super) type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// Runs until `stop` fires, then writes what is still queued, flushes and shuts
/// the output down. Returns the first write error.
pub(super) async fn run(
    mut frames: FrameWriter<Output>,
    mut queue: mpsc::Receiver<Outgoing>,
    mut overflow: mpsc::UnboundedReceiver<Outgoing>,
    stop: CancellationToken,
) -> io::Result<()> {
    loop {
        let item = tokio::select! {
            biased;
            Some(item) = overflow.recv() => item,
            Some(item) = queue.recv() => item,
            () = stop.cancelled() => break,
        };
        write(&mut frames, item).await?;
        while let Some(item) = next_queued(&mut queue, &mut overflow) {
            write(&mut frames, item).await?;
        }
        frames.flush().await?;
    }
    while let Some(item) = next_queued(&mut queue, &mut overflow) {
        write(&mut frames, item).await?;
    }
    frames.shutdown().await
}

fn next_queued(
    queue: &mut mpsc::Receiver<Outgoing>,
    overflow: &mut mpsc::UnboundedReceiver<Outgoing>,
) -> Option<Outgoing> {
    overflow.try_recv().ok().or_else(|| queue.try_recv().ok())
}

async fn write(frames: &mut FrameWriter<Output>, item: Outgoing) -> io::Result<()> {
    match item {
        Outgoing::Message(message) => frames.send(&message).await,
        Outgoing::Flush(done) => {
            frames.flush().await?;
            let _ = done.send(());
            Ok(())
        }
    }
}
