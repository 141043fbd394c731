//! A test peer: agentproto's sync-channel server on stdin/stdout with a few
//! methods that exercise every path of the protocol. Not a product binary.
//!
//! - `echo`: answers its payload.
//! - `callback`: the payload is `name NUL arg [NUL name NUL arg …]`; calls the
//!   client's callback `name` with `arg` for each pair in turn and answers the
//!   answers joined with NUL. A `CallError` from the client fails the request
//!   with `client error: TEXT`.
//! - `fail`: fails with its payload as the error text.
//! - `panic`: panics (the server answers an `Error` and goes on).
//! - `repeat`: the payload is `COUNT` in decimal; answers COUNT bytes `0..=250` repeating.
//! - `exit`: exits the process with status 3 without answering.

use agentproto_sync::{HandlerError, Server};

fn main() {
    let mut server = Server::new();
    server.handle("echo", |_, payload, out| {
        out.extend_from_slice(payload);
        Ok(())
    });
    server.handle("callback", |peer, payload, out| {
        let parts: Vec<&[u8]> = payload.split(|&byte| byte == 0).collect();
        if parts.len() % 2 != 0 {
            return Err(HandlerError::new("expected name/argument pairs separated by NUL"));
        }
        for (position, pair) in parts.chunks(2).enumerate() {
            let name = std::str::from_utf8(pair[0]).map_err(|_| HandlerError::new("callback name is not UTF-8"))?;
            let answer = peer.call(name, pair[1])?;
            if position > 0 {
                out.push(0);
            }
            out.extend_from_slice(answer);
        }
        Ok(())
    });
    server.handle("fail", |_, payload, _| Err(HandlerError::new(String::from_utf8_lossy(payload))));
    server.handle("panic", |_, _, _| panic!("the fixture was asked to panic"));
    server.handle("repeat", |_, payload, out| {
        let count: usize = std::str::from_utf8(payload)
            .ok()
            .and_then(|text| text.parse().ok())
            .ok_or_else(|| HandlerError::new("expected a decimal count"))?;
        out.extend((0..count).map(|index| (index % 251) as u8));
        Ok(())
    });
    server.handle("exit", |_, _, _| std::process::exit(3));
    if let Err(error) = server.serve_stdio() {
        eprintln!("agentproto-sync-fixture: {error}");
        std::process::exit(1);
    }
}
