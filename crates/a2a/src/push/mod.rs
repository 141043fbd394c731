//! Push notifications: the outbox worker, its retry policy and the SSRF guard.
