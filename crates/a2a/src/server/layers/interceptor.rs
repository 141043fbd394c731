//! [`Interceptor`]: a check on each call once its operation and its caller are known.
//!
//! The tower layers see HTTP requests; which A2A operation a request is, and on which
//! task, is only known once its body is decoded (JSON-RPC names the method inside it).
//! Policies that depend on the operation (read-only principals, a quota on
//! `SendMessage`, an audit log of cancels) are interceptors instead: the server calls
//! each one, in the order they were added, after authentication and decoding and
//! before the operation runs, on every binding. An error is the call's answer, in the
//! binding's error shape.

use crate::errors::A2aError;
use crate::server::core::CallContext;
use crate::v1::Request;

/// A check the server runs before every operation (see the [module documentation](self)).
///
/// It runs on the request's task, so it must not block; anything slow belongs in the
/// executor or behind a cache.
pub trait Interceptor: Send + Sync + 'static {
    /// Called with the caller (tenant, principal, headers the server read) and the
    /// decoded request; `Err` refuses the call with that error.
    fn before(&self, call: &CallContext, request: &Request) -> Result<(), A2aError>;
}

impl<F> Interceptor for F
where
    F: Fn(&CallContext, &Request) -> Result<(), A2aError> + Send + Sync + 'static,
{
    fn before(&self, call: &CallContext, request: &Request) -> Result<(), A2aError> {
        self(call, request)
    }
}
