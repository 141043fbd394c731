//! The gRPC binding's shared part: the protobuf codec and errors as gRPC statuses.
//!
//! Messages cross the binding in the protobuf wire form, encoded from and decoded
//! into the generated [`crate::v1`] types by the generated codec
//! ([`crate::generated::v1_proto`], written by `codegen/` from the pinned
//! `spec/a2a/v1.0/a2a.proto` like the types themselves; runtime in [`wire`]). There is
//! no JSON tree and no ProtoJSON text on the way: the server decodes a request message
//! straight into its typed request and encodes the core's typed answers; a failure
//! names its JSON path and kind as the JSON decoders do. The tests check the codec
//! against `prost-reflect` reading the proto's descriptors (`reflect.rs`, test-only).
//!
//! Errors are `google.rpc.Status` with a `google.rpc.ErrorInfo` detail (reason,
//! domain `a2a-protocol.org`, metadata), the status code from the error table
//! ([`crate::errors`], switchable to A2A 1.0.0's codes).

#[cfg(feature = "client")]
pub(crate) mod client;
#[cfg(feature = "server")]
pub(crate) mod listen;
#[cfg(feature = "server")]
pub(crate) mod server;
pub mod wire;

mod codec;

#[cfg(feature = "server")]
pub use server::GrpcService;

use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

#[cfg(any(feature = "client", test))]
use crate::errors::ErrorKind;
use crate::errors::{A2aError, ErrorTable, DOMAIN};
use crate::v1::Operation;

/// The fully qualified name of the A2A service.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// The HTTP/2 path of `op`: `/lf.a2a.v1.A2AService/SendMessage`.
#[cfg(any(feature = "client", test))]
pub(crate) fn path(op: Operation) -> String {
    format!("/{SERVICE}/{}", op.name())
}

/// The operation an HTTP/2 path names, if it is one of the service's.
#[cfg(any(feature = "server", test))]
pub(crate) fn operation_at(path: &str) -> Option<Operation> {
    let name = path.strip_prefix('/')?.strip_prefix(SERVICE)?.strip_prefix('/')?;
    Operation::from_name(name)
}

/// Every gRPC code with its canonical name, both ways (the error table names codes;
/// the client reports them by name).
const CODES: [(Code, &str); 17] = [
    (Code::Ok, "OK"),
    (Code::Cancelled, "CANCELLED"),
    (Code::Unknown, "UNKNOWN"),
    (Code::InvalidArgument, "INVALID_ARGUMENT"),
    (Code::DeadlineExceeded, "DEADLINE_EXCEEDED"),
    (Code::NotFound, "NOT_FOUND"),
    (Code::AlreadyExists, "ALREADY_EXISTS"),
    (Code::PermissionDenied, "PERMISSION_DENIED"),
    (Code::ResourceExhausted, "RESOURCE_EXHAUSTED"),
    (Code::FailedPrecondition, "FAILED_PRECONDITION"),
    (Code::Aborted, "ABORTED"),
    (Code::OutOfRange, "OUT_OF_RANGE"),
    (Code::Unimplemented, "UNIMPLEMENTED"),
    (Code::Internal, "INTERNAL"),
    (Code::Unavailable, "UNAVAILABLE"),
    (Code::DataLoss, "DATA_LOSS"),
    (Code::Unauthenticated, "UNAUTHENTICATED"),
];

/// The gRPC code a status name of the error table denotes.
fn code_named(name: &str) -> Code {
    CODES.iter().find(|(_, n)| *n == name).map_or(Code::Unknown, |(c, _)| *c)
}

/// The canonical name of a gRPC code (`NOT_FOUND`, …).
#[cfg(feature = "client")]
pub(crate) fn code_name(code: Code) -> &'static str {
    CODES.iter().find(|(c, _)| *c == code).map_or("UNKNOWN", |(_, n)| n)
}

/// An A2A error as a gRPC status: the table's code, the message, and an `ErrorInfo`
/// detail with the reason, the A2A domain and the error's metadata.
pub(crate) fn status(e: &A2aError, table: ErrorTable) -> Status {
    let metadata: HashMap<String, String> = e.metadata.iter().cloned().collect();
    let details = ErrorDetails::with_error_info(e.reason(), DOMAIN, metadata);
    Status::with_error_details(code_named(e.grpc_status_in(table)), e.message.clone(), details)
}

/// The A2A error a status from a server carries: its `ErrorInfo` reason when it has
/// one in the A2A domain, otherwise the kind its code stands for; and whether it had
/// such an `ErrorInfo`.
#[cfg(feature = "client")]
pub(crate) fn error_of(status: &Status) -> (A2aError, bool) {
    let details = status.get_error_details();
    let info = details.error_info().filter(|i| i.domain == DOMAIN);
    let kind = info.and_then(|i| ErrorKind::from_reason(&i.reason)).unwrap_or(match status.code() {
        Code::NotFound => ErrorKind::TaskNotFound,
        Code::InvalidArgument => ErrorKind::InvalidParams,
        Code::Unimplemented => ErrorKind::MethodNotFound,
        Code::Unauthenticated => ErrorKind::Unauthenticated,
        Code::PermissionDenied => ErrorKind::PermissionDenied,
        Code::ResourceExhausted => ErrorKind::RateLimited,
        Code::DeadlineExceeded => ErrorKind::RequestTimeout,
        _ => ErrorKind::Internal,
    });
    let mut e = A2aError::new(kind).with_message(status.message());
    if let Some(info) = info {
        let mut pairs: Vec<_> = info.metadata.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        pairs.sort();
        e.metadata = pairs;
    }
    (e, info.is_some())
}

#[cfg(test)]
mod codec_tests;

#[cfg(test)]
mod reflect;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_their_code_and_error_info() {
        let e = A2aError::task_not_found("t-9");
        let s = status(&e, ErrorTable::V1_0_1);
        assert_eq!(s.code(), Code::NotFound);
        let info = s.get_error_details().error_info().cloned().unwrap();
        assert_eq!(info.reason, "TASK_NOT_FOUND");
        assert_eq!(info.domain, DOMAIN);
        assert_eq!(info.metadata.get("taskId").map(String::as_str), Some("t-9"));
        for (code, name) in CODES {
            assert_eq!(code_named(name), code);
        }
        let unsupported = A2aError::new(ErrorKind::UnsupportedOperation);
        assert_eq!(status(&unsupported, ErrorTable::V1_0_1).code(), Code::FailedPrecondition);
        assert_eq!(status(&unsupported, ErrorTable::V1_0_0).code(), Code::Unimplemented);
    }
}
