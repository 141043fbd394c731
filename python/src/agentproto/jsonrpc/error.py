"""Wire errors: JSON-RPC error codes and the error object of a response.

Wire errors are values that cross the wire; local failures (decode, framing, transport)
are exceptions (`agentproto.AgentprotoError`). The two never mix: a handler that answers
with an error raises `RequestError`, which carries the `ErrorObject` to send.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, Raw, UnsetType

from agentproto.codec.errors import DecodeError
from agentproto.jsonrpc.codes import ErrorCode

__all__ = ["ErrorCode", "ErrorObject", "RequestError"]


_encode = msgspec.json.Encoder().encode


class ErrorObject(msgspec.Struct, kw_only=True):
    """The `error` member of a JSON-RPC response."""

    code: int
    """The error code (see `ErrorCode`)."""
    message: str
    """A short, lowercase description."""
    data: Raw | UnsetType = UNSET
    """Structured detail, kept as raw JSON."""

    @classmethod
    def method_not_found(cls, method: str) -> ErrorObject:
        """A -32601 error naming the method in `data`."""
        data = b'{"method":' + _encode(method) + b"}"
        return cls(code=ErrorCode.METHOD_NOT_FOUND, message=f"method not found: `{method}`", data=Raw(data))

    @classmethod
    def internal_error(cls, message: str) -> ErrorObject:
        return cls(code=ErrorCode.INTERNAL_ERROR, message=message)

    @classmethod
    def request_cancelled(cls) -> ErrorObject:
        return cls(code=ErrorCode.REQUEST_CANCELLED, message="request cancelled")

    @classmethod
    def invalid_params(cls, path: str, expected: str, found: str) -> ErrorObject:
        """A -32602 error: ``invalid params: expected X, found Y at $.params.z`` with
        `{"path", "expected", "found"}` as data."""
        return cls.validation(ErrorCode.INVALID_PARAMS, "invalid params", path, expected, found)

    @classmethod
    def invalid_params_decoded(cls, e: DecodeError) -> ErrorObject:
        """The -32602 error of a decode failure: ``invalid params: expected X, found Y at
        $.params.z`` with `{"path", "kind", "expected", "found"}` as data, in that order
        (`kind` is the failure's `DecodeErrorKind` value). Other -32602 replies (a rule's
        refusal, an fs or terminal check) use `invalid_params`, without a kind."""
        data = (
            b'{"path":'
            + _encode(e.path)
            + b',"kind":'
            + _encode(e.kind.value)
            + b',"expected":'
            + _encode(e.expected)
            + b',"found":'
            + _encode(e.found)
            + b"}"
        )
        return cls(code=ErrorCode.INVALID_PARAMS, message=f"invalid params: {e}", data=Raw(data))

    @classmethod
    def validation(cls, code: int, prefix: str, path: str, expected: str, found: str) -> ErrorObject:
        """A validation error with any code and message prefix (see `invalid_params`)."""
        data = b'{"path":' + _encode(path) + b',"expected":' + _encode(expected) + b',"found":' + _encode(found) + b"}"
        message = f"{prefix}: expected {expected}, found {found} at {path}"
        return cls(code=code, message=message, data=Raw(data))

    def with_position(self, path: str, line: int, column: int) -> ErrorObject:
        """A copy whose data is `{"path", "line", "column"}` (parse errors)."""
        data = b'{"path":' + _encode(path) + b',"line":%d,"column":%d}' % (line, column)
        return ErrorObject(code=self.code, message=self.message, data=Raw(data))

    def with_path(self, path: str) -> ErrorObject:
        """A copy whose data is `{"path": path}` (envelope errors)."""
        return ErrorObject(code=self.code, message=self.message, data=Raw(b'{"path":' + _encode(path) + b"}"))

    def __str__(self) -> str:
        return f"error {self.code}: {self.message}"


class RequestError(Exception):
    """Raised by a request handler to answer with this error object.

    Not a local failure: it is how a handler says what goes on the wire
    (`RequestError(-32002, "unknown thing")`, `RequestError.from_object(error)`).
    """

    def __init__(self, code: int, message: str, data: Raw | bytes | None = None) -> None:
        super().__init__(f"error {code}: {message}")
        raw = UNSET if data is None else data if isinstance(data, Raw) else Raw(data)
        self.error = ErrorObject(code=code, message=message, data=raw)

    @classmethod
    def from_object(cls, error: ErrorObject) -> RequestError:
        """The exception that answers with `error` as it is."""
        exc = cls.__new__(cls)
        Exception.__init__(exc, str(error))
        exc.error = error
        return exc

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        """-32601, naming the method in `data`."""
        return cls.from_object(ErrorObject.method_not_found(method))

    @classmethod
    def invalid_params(cls, path: str, expected: str, found: str) -> RequestError:
        """-32602 with `{path, expected, found}` as data."""
        return cls.from_object(ErrorObject.invalid_params(path, expected, found))

    @classmethod
    def internal_error(cls, message: str) -> RequestError:
        """-32603."""
        return cls.from_object(ErrorObject.internal_error(message))
