//! Protocol findings with stable codes, for traffic seen from outside a
//! connection: the engine behind `agentproto inspect` (a live proxy between an
//! editor and an agent) and `agentproto replay` (a recorded trace).
//!
//! - [`rules`]: the table of rules; each has a stable code such as
//!   `ACP.SESSION.UNKNOWN_SESSION`, a lane and a severity.
//! - [`engine`]: the protocol-neutral [`Engine`] and the [`Monitor`] trait one
//!   protocol implements; [`acp`] is the ACP v1 monitor.
//! - [`trace`]: the JSON Lines trace format.
//! - [`proxy`]: the live proxy.

#![warn(missing_docs)]

pub mod acp;
pub mod engine;
pub mod finding;
pub mod proxy;
pub mod rules;
pub mod trace;

pub use engine::{Answer, Engine, Monitor, Verdict};
pub use finding::{Direction, Finding};
pub use rules::{Lane, Rule, Severity, RULES};
