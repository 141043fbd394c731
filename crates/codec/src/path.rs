//! The per-thread decode state: where we are, what was salvaged, what failed first.

use std::cell::{Cell, RefCell};
use std::fmt::Write;

/// One step of a JSON path.
#[derive(Debug, Clone)]
pub(crate) enum Seg {
    Key(&'static str),
    OwnedKey(Box<str>),
    Index(usize),
    /// A pre-rendered prefix such as `$.params`.
    Root(&'static str),
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) path: Vec<Seg>,
    pub(crate) warnings: Vec<crate::Warning>,
    pub(crate) error: Option<crate::DecodeError>,
}

thread_local! {
    pub(crate) static STATE: RefCell<State> = RefCell::new(State::default());
}

thread_local! {
    /// Whether the decode running on this thread is the optimistic attempt (see
    /// [`Attempt`]).
    static OPTIMISTIC: Cell<bool> = const { Cell::new(false) };
}

thread_local! {
    /// Whether the decode running on this thread is the careful attempt. Outside any
    /// attempt (a generated type read by serde_json directly) neither flag is set:
    /// members are read straight, and lenient ones as the careful attempt reads them.
    static CAREFUL: Cell<bool> = const { Cell::new(false) };
}

thread_local! {
    /// Set by tests that compare the optimistic path with the careful one.
    static CAREFUL_ONLY: Cell<bool> = const { Cell::new(false) };
}

/// Whether lenient members may decode straight from the input (the optimistic attempt).
pub(crate) fn optimistic() -> bool {
    OPTIMISTIC.with(Cell::get)
}

/// Whether the careful attempt of [`crate::decode`] is running (members are then read
/// raw first, so that every failure is named where it happens).
pub(crate) fn careful() -> bool {
    CAREFUL.with(Cell::get)
}

/// Whether optimistic attempts are turned off on this thread.
pub(crate) fn careful_only() -> bool {
    CAREFUL_ONLY.with(Cell::get)
}

/// Turns optimistic attempts off (or back on) for decodes on this thread: every decode
/// then takes the careful attempt only, and one-pass decoding ([`crate::decode_in`])
/// fails at once so that its callers take their two-pass route. For differential tests,
/// which check that both ways give the same answers.
#[doc(hidden)]
pub fn set_careful_only(on: bool) {
    CAREFUL_ONLY.with(|cell| cell.set(on));
}

/// One decode attempt, optimistic or careful, for as long as it lives.
///
/// Lenient members (`x-deserialize-default-on-error`, `x-deserialize-skip-invalid-items`)
/// must be able to drop a bad value and go on, so the careful attempt first captures
/// each one as raw JSON and then decodes that text — every such value read twice, and
/// again for each lenient member nested inside it. Almost every message is valid, so
/// decoding first tries the optimistic attempt, in which lenient members decode straight
/// from the input and any bad value fails the attempt; only then does the careful
/// attempt run, and it alone produces errors and salvage warnings. What the optimistic
/// attempt accepts, the careful one accepts with the same value and the same warnings
/// (the same deserializers over the same bytes, along the same paths).
pub(crate) struct Attempt {
    previous: bool,
    previous_careful: bool,
}

impl Attempt {
    pub(crate) fn new(optimistic: bool) -> Attempt {
        Attempt {
            previous: OPTIMISTIC.with(|cell| cell.replace(optimistic)),
            previous_careful: CAREFUL.with(|cell| cell.replace(!optimistic)),
        }
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        OPTIMISTIC.with(|cell| cell.set(self.previous));
        CAREFUL.with(|cell| cell.set(self.previous_careful));
    }
}

pub(crate) fn push(seg: Seg) {
    STATE.with(|s| s.borrow_mut().path.push(seg));
}

pub(crate) fn pop() {
    STATE.with(|s| {
        s.borrow_mut().path.pop();
    });
}

/// A point to roll the state back to after a failed attempt.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    path: usize,
    warnings: usize,
    had_error: bool,
}

pub(crate) fn mark() -> Mark {
    STATE.with(|s| {
        let s = s.borrow();
        Mark { path: s.path.len(), warnings: s.warnings.len(), had_error: s.error.is_some() }
    })
}

pub(crate) fn rollback(m: Mark) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.path.truncate(m.path);
        s.warnings.truncate(m.warnings);
        if !m.had_error {
            s.error = None;
        }
    });
}

/// The current path rendered as `$.a.b[0]["odd key"]`.
pub(crate) fn current() -> String {
    STATE.with(|s| render(&s.borrow().path))
}

pub(crate) fn render(path: &[Seg]) -> String {
    let mut out = String::new();
    if !matches!(path.first(), Some(Seg::Root(_))) {
        out.push('$');
    }
    for seg in path {
        match seg {
            Seg::Root(r) => out.push_str(r),
            Seg::Key(k) => push_key(&mut out, k),
            Seg::OwnedKey(k) => push_key(&mut out, k),
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Appends member `key` to a JSON path: `.key` for an identifier-like key, `["key"]` (a JSON
/// string literal) otherwise. Every path this crate and its users write spells keys so.
pub fn push_key(out: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        out.push('.');
        out.push_str(key);
    } else {
        out.push('[');
        // A JSON string literal is a valid, unambiguous bracket key.
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
        out.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_keys_indices_and_odd_keys() {
        let p = [Seg::Root("$.params"), Seg::Key("prompt"), Seg::Index(2), Seg::OwnedKey("zed.dev".into())];
        assert_eq!(render(&p), r#"$.params.prompt[2]["zed.dev"]"#);
        assert_eq!(render(&[]), "$");
        assert_eq!(render(&[Seg::Key("_meta"), Seg::Key("9x")]), r#"$._meta["9x"]"#);
    }
}
