//! SIGINT, SIGTERM and SIGHUP for the verbs that run child processes. The
//! children run in process groups of their own (`agentproto-process`), so a
//! terminal's Ctrl-C reaches only this process: it must pass the news on.

use std::io;

use agentproto_process::Signal;
use tokio::signal::unix::{signal, SignalKind};

/// Calls `on_signal` on a thread of its own for every SIGINT, SIGTERM or
/// SIGHUP from now on: the handlers are in place when this returns.
pub(crate) fn watch(on_signal: impl Fn(Signal) + Send + 'static) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    let (mut interrupt, mut terminate, mut hangup) = {
        let _context = runtime.enter();
        (signal(SignalKind::interrupt())?, signal(SignalKind::terminate())?, signal(SignalKind::hangup())?)
    };
    std::thread::Builder::new().name("signals".to_owned()).spawn(move || {
        runtime.block_on(async move {
            loop {
                let received = tokio::select! {
                    Some(()) = interrupt.recv() => Signal::Interrupt,
                    Some(()) = terminate.recv() => Signal::Terminate,
                    Some(()) = hangup.recv() => Signal::Hangup,
                    else => return,
                };
                on_signal(received);
            }
        });
    })?;
    Ok(())
}

/// The exit status a shell reports for a process ended by `signal`: 128 + its number.
pub(crate) fn exit_status(signal: Signal) -> u8 {
    128 + match signal {
        Signal::Hangup => 1,
        Signal::Interrupt => 2,
        Signal::Kill => 9,
        Signal::Terminate => 15,
    }
}
