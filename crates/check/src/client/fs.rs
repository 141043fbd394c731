//! File reads and writes through the client, and their judging.

use serde_json::{json, Value};

use super::{describe, Purpose, Reply, Shared};
use crate::wire::excerpt;

/// Judges an fs answer: the result (valid, and what it should be) or an error.
fn judge_fs(shared: &Shared, what: &str, reply: Reply, content: impl FnOnce(&Value) -> Result<(), String>) {
    match reply {
        Reply::Answer(Ok(raw)) => {
            shared.pass("ACP-CLIENT-FS-001");
            let value: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            match content(&value) {
                Ok(()) => shared.pass("ACP-CLIENT-FS-002"),
                Err(text) => shared.fail("ACP-CLIENT-FS-002", format!("{what}: {text}")),
            }
        }
        Reply::Answer(Err(error)) => {
            shared.pass("ACP-CLIENT-FS-001");
            shared.skip("ACP-CLIENT-FS-002", &format!("the client refused {what} with {}", describe(&error)));
        }
        Reply::Timeout => shared.fail("ACP-CLIENT-FS-001", format!("{what}: no answer within {:?}", shared.timeout)),
        Reply::Closed => shared.fail("ACP-CLIENT-FS-001", format!("{what}: the client closed the connection")),
    }
}

/// Reads `path` through the client and compares with the file on disk; then,
/// if `write` is given, writes it through the client and checks the file.
pub(super) async fn fs_round(
    shared: &Shared,
    session: &str,
    read: Option<&str>,
    write: Option<(&str, &str)>,
) -> Option<String> {
    let (can_read, can_write) = shared.capabilities();
    if !can_read && !can_write {
        let reason = "the client advertised no file-system capability";
        shared.skip("ACP-CLIENT-FS-001", reason);
        shared.skip("ACP-CLIENT-FS-002", reason);
    }
    let mut text = None;
    if let (true, Some(path)) = (can_read, read) {
        let expected = std::fs::read_to_string(path).ok();
        let reply = shared.call("fs/read_text_file", json!({"sessionId": session, "path": path}), Purpose::Plain).await;
        if let Reply::Answer(Ok(raw)) = &reply {
            let value: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            text = value["content"].as_str().map(str::to_owned);
        }
        judge_fs(shared, &format!("reading {path}"), reply, |value| match (&expected, value["content"].as_str()) {
            (Some(expected), Some(got)) if got == expected => Ok(()),
            (Some(_), Some(got)) => {
                Err(format!("returned {:?}, which is not the file's text", excerpt(got.as_bytes())))
            }
            (None, _) => Ok(()),
            (_, None) => Err("no content".to_owned()),
        });
    }
    if let (true, Some((path, content))) = (can_write, write) {
        let params = json!({"sessionId": session, "path": path, "content": content});
        let reply = shared.call("fs/write_text_file", params, Purpose::Plain).await;
        judge_fs(shared, &format!("writing {path}"), reply, |_| match std::fs::read_to_string(path) {
            Ok(stored) if stored == content => Ok(()),
            Ok(stored) => Err(format!("the file holds {:?}, not what was sent", excerpt(stored.as_bytes()))),
            Err(e) => Err(format!("the file cannot be read back ({e})")),
        });
    }
    text
}

/// The interop scenario's `fs <path>` turn.
pub(super) async fn scenario_fs(shared: &Shared, session: &str, path: &str) {
    let (can_read, _) = shared.capabilities();
    if !can_read {
        fs_round(shared, session, None, None).await;
        return;
    }
    let Some(text) = fs_round(shared, session, Some(path), None).await else { return };
    let out = format!("{path}.out");
    fs_round(shared, session, None, Some((&out, &text.to_uppercase()))).await;
    shared.chunk(session, &format!("read:{}", text.encode_utf16().count())).await;
}
