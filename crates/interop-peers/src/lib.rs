//! Shared pieces of the Rust side of the interop scenario (see `interop/SCENARIO.md`).

/// Prints one step result line in the format of the scenario client.
pub fn step_line(step: &str, ok: bool, detail: &str) -> String {
    serde_json::json!({ "step": step, "ok": ok, "detail": detail }).to_string()
}
