//! The client side's handle on one session: [`Session`].

use std::fmt;

use crate::{AgentConnection, Protocol};

/// One session of an agent, seen from the client: the connection and the session's
/// id, so a turn is `session.prompt("text").await`. Made by
/// `AgentConnection::open_session` (wire version 1 surfaces), or by
/// [`Session::new`] from the id of any `session/new`, `session/load` or
/// `session/resume` answer.
///
/// The session's updates still arrive at the client's `session_update` handler; a
/// `Session` only sends. Clones share the connection.
pub struct Session<S: Protocol> {
    agent: AgentConnection<S>,
    id: String,
}

impl<S: Protocol> Session<S> {
    /// A handle on the session `id` of `agent`.
    pub fn new(agent: AgentConnection<S>, id: impl Into<String>) -> Session<S> {
        Session { agent, id: id.into() }
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The connection to the agent, for any other call about this session.
    pub fn agent(&self) -> &AgentConnection<S> {
        &self.agent
    }
}

impl<S: Protocol> Clone for Session<S> {
    fn clone(&self) -> Self {
        Session { agent: self.agent.clone(), id: self.id.clone() }
    }
}

impl<S: Protocol> fmt::Debug for Session<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("id", &self.id).finish_non_exhaustive()
    }
}
