//! How methods change the set of sessions a connection knows: the one table both
//! roles and the inspector follow (no I/O).

/// How a successful request changes the set of known sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEffect {
    /// The result names a new session (`sessionId`): `session/new`, `session/fork`.
    CreatedByResult,
    /// The params name a session that is now open: `session/load`, `session/resume`.
    OpenedByParams,
    /// The params name a session that is gone: `session/close`, `session/delete`.
    Removed,
}

impl SessionEffect {
    /// The session concerned: from the result for a created one, else from the params.
    pub fn session(
        self,
        params_session: Option<String>,
        result_session: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        match self {
            SessionEffect::CreatedByResult => result_session(),
            SessionEffect::OpenedByParams | SessionEffect::Removed => params_session,
        }
    }
}

/// The session effect of `method`, if it has one.
pub fn session_effect(method: &str) -> Option<SessionEffect> {
    match method {
        "session/new" | "session/fork" => Some(SessionEffect::CreatedByResult),
        "session/load" | "session/resume" => Some(SessionEffect::OpenedByParams),
        "session/close" | "session/delete" => Some(SessionEffect::Removed),
        _ => None,
    }
}

/// Whether `method` may name a session this connection has not seen: it loads,
/// resumes, forks or deletes one that may come from another connection.
pub fn may_name_unseen_session(method: &str) -> bool {
    matches!(method, "session/load" | "session/resume" | "session/delete" | "session/fork")
}
