//! Running an executor's turn on the task of the request that started it.
//!
//! A turn outlives its request (a client may hang up, or ask to be answered at once), so
//! it cannot simply be awaited by the request. Spawning it on a task of its own costs a
//! hand-off per request: the spawn wakes an idle worker thread that finds nothing to do,
//! and the request then waits for another task to answer it. A [`Turn`] is polled by the
//! request while the request waits for it, and handed to the runtime as a task of its own
//! only when the request stops waiting (it was answered, or dropped) before the turn
//! finished. Either way the turn runs to its end exactly once.
//!
//! A panic in the executor is caught here, where the turn is polled, and reported as the
//! executor failing: it neither tears down the connection that happened to poll it nor
//! leaves a task without an end.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::FutureExt;
use tokio::sync::oneshot;

use crate::errors::{A2aError, ErrorKind};

type Boxed = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A turn that runs where it is polled until it is dropped, then on a task of its own.
pub(crate) struct Turn {
    future: Option<Boxed>,
    runtime: Option<tokio::runtime::Handle>,
}

impl Turn {
    /// A turn running `future`; it runs nowhere until polled or dropped.
    pub(crate) fn new(future: impl Future<Output = ()> + Send + 'static) -> Self {
        Turn { future: Some(Box::pin(future)), runtime: tokio::runtime::Handle::try_current().ok() }
    }

    /// Whether the turn ran to its end.
    #[cfg(test)]
    fn finished(&self) -> bool {
        self.future.is_none()
    }

    /// Runs the turn a step; `Ready` once it has finished.
    fn step(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(future) = self.future.as_mut() else { return Poll::Ready(()) };
        let ready = future.as_mut().poll(cx).is_ready();
        if ready {
            self.future = None;
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Waits for `rx`, running the turn meanwhile. The turn is stepped first, so an
    /// answer it gives in this step is seen at once; `Err` when the sender is gone
    /// without sending.
    pub(crate) async fn until<T>(&mut self, rx: &mut oneshot::Receiver<T>) -> Result<T, oneshot::error::RecvError> {
        std::future::poll_fn(|cx| {
            let _ = self.step(cx);
            Pin::new(&mut *rx).poll(cx)
        })
        .await
    }

    /// Waits for `rx` or for the turn to finish without sending on it (`None`).
    pub(crate) async fn until_or_end<T>(&mut self, rx: &mut oneshot::Receiver<T>) -> Option<T> {
        std::future::poll_fn(|cx| {
            let ended = self.step(cx).is_ready();
            match Pin::new(&mut *rx).poll(cx) {
                Poll::Ready(r) => Poll::Ready(r.ok()),
                Poll::Pending if ended => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }

    /// Hands the rest of the turn, if any, to the runtime as a task of its own.
    pub(crate) fn detach(&mut self) {
        if let (Some(future), Some(runtime)) = (self.future.take(), self.runtime.as_ref()) {
            // On a runtime that is shutting down the turn is dropped with it, as a
            // spawned task would be.
            drop(runtime.spawn(future));
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.detach();
    }
}

/// The executor's outcome with a panic turned into an error naming it.
pub(crate) async fn unwinding(future: impl Future<Output = Result<(), A2aError>> + Send) -> Result<(), A2aError> {
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => Err(A2aError::new(ErrorKind::Internal)
            .with_message(format!("the agent panicked: {}", agentproto_jsonrpc::panic_message(&*panic)))),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn a_turn_answers_the_request_that_polls_it() {
        let (tx, mut rx) = oneshot::channel();
        let mut turn = Turn::new(async move {
            tokio::task::yield_now().await;
            let _ = tx.send(7);
        });
        assert_eq!(turn.until(&mut rx).await, Ok(7));
        assert!(turn.finished());
    }

    #[tokio::test]
    async fn a_turn_dropped_unfinished_runs_to_its_end_on_its_own() {
        let (go_tx, go_rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = oneshot::channel();
        let (first_tx, mut first_rx) = oneshot::channel();
        let steps = Arc::new(AtomicUsize::new(0));
        let counted = steps.clone();
        let mut turn = Turn::new(async move {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = first_tx.send(());
            let _ = go_rx.await;
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = done_tx.send(());
        });
        turn.until(&mut first_rx).await.unwrap();
        assert!(!turn.finished());
        drop(turn);
        go_tx.send(()).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(10), done_rx).await.unwrap().unwrap();
        assert_eq!(steps.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn the_end_of_a_turn_that_never_answers_is_seen() {
        // The sender outlives the turn, as the updater's clones may.
        let (_tx, mut rx) = oneshot::channel::<u8>();
        let mut turn = Turn::new(tokio::task::yield_now());
        assert_eq!(turn.until_or_end(&mut rx).await, None);
        assert!(turn.finished());
    }

    #[tokio::test]
    async fn a_panicking_executor_is_an_error() {
        let e = unwinding(async { panic!("boom") }).await.unwrap_err();
        assert_eq!(e.message, "the agent panicked: boom");
        let e = unwinding(async { panic!("{}", String::from("owned")) }).await.unwrap_err();
        assert_eq!(e.message, "the agent panicked: owned");
        assert!(unwinding(async { Ok(()) }).await.is_ok());
    }
}
