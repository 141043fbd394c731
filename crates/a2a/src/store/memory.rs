//! The in-memory store.
