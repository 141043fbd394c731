"""The A2A 0.3 JSON-RPC binding, on the same endpoint as 1.0: a request that asks for 0.3
(or names no version, as the specification reads it) is answered through the 0.3
conversions (`agentproto.a2a.compat_v03`). Its params are converted to 1.0 and decoded by
the generated decoders as any 1.0 request, the core runs it, and its answer is converted
back: unary results in the 0.3 shape, each stream event as a JSON-RPC response carrying a
0.3 event, errors in the 0.3 form (the 0.3 code, `data` a plain object of the error's
metadata). Gap events (agentproto's resumption extension) are left out of 0.3 streams.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from agentproto.a2a import codec, jsonrpc
from agentproto.a2a.compat_v03 import Method, method_named, params_to_v1, result_to_v03
from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.executor import Principal
from agentproto.a2a.generated.errors import ROWS
from agentproto.a2a.generated.v1 import OPERATIONS, Operation
from agentproto.a2a.server.core import StreamEvent, call_context
from agentproto.a2a.tasks import Gap
from agentproto.codec.errors import DecodeError

if TYPE_CHECKING:
    from agentproto.a2a.server.app import A2aApp, Receive, Send

__all__ = ["answer_v03", "v03_error_body", "v03_request"]


def v03_error_body(rpc_id: jsonrpc.RpcId | None, error: A2aError) -> bytes:
    """A JSON-RPC error response of A2A 0.3: the 0.3 code, and `data` a plain object of
    the error's metadata (left out when it has none)."""
    body: dict[str, Any] = {"code": ROWS[error.kind].code_v03, "message": error.message}
    if error.metadata:
        body["data"] = dict(error.metadata)
    head = b'{"jsonrpc":"2.0","id":' + (rpc_id.json if rpc_id is not None else b"null") + b',"error":'
    return head + msgspec.json.encode(body) + b"}"


def _refused_method(name: str) -> A2aError:
    error = A2aError(
        ErrorKind.VERSION_NOT_SUPPORTED,
        f"a request without an A2A-Version header is A2A 0.3, and {name!r} is not a 0.3 method; this "
        "interface serves 0.3 under its own method names (message/send, message/stream, tasks/get, "
        "tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/*, "
        "agent/getAuthenticatedExtendedCard) and 1.0 with A2A-Version: 1.0",
    )
    return error.with_metadata("version", "0.3").with_metadata("supportedVersions", "1.0, 0.3")


def v03_request(method: Method, params: bytes | None) -> Any:
    """The typed 1.0 request of a 0.3 call (`params` the raw params, `None` when absent).

    Raises:
        A2aError: `PARSE` (not JSON), `INVALID_PARAMS` (with the path of the fault).
    """
    try:
        value = None if params is None else msgspec.json.decode(params)
    except msgspec.DecodeError as e:
        raise A2aError(ErrorKind.PARSE, f"the params are not JSON: {e}") from None
    converted = msgspec.json.encode(params_to_v1(method, value))
    try:
        return codec.decode(OPERATIONS[Operation(method[1])].request, converted, "$.params")
    except DecodeError as e:
        raise A2aError.invalid_params(e) from None


def _result(method: Method, value: Any) -> bytes:
    """The 0.3 result of a 1.0 answer (or stream event); a failure is the server's."""
    try:
        tree = msgspec.json.decode(codec.encode(value)) if value is not None else {}
        return msgspec.json.encode(result_to_v03(method, tree))
    except A2aError as e:
        raise A2aError(ErrorKind.INTERNAL, f"could not express the answer in A2A 0.3: {e.message}") from None


async def answer_v03(
    app: A2aApp, body: bytes, headers: Mapping[str, str], principal: Principal | None, receive: Receive, send: Send
) -> None:
    """Answers one 0.3 JSON-RPC request."""
    from agentproto.a2a.server.app import _answer, _frame

    json_type = [(b"content-type", b"application/json")]
    read = jsonrpc._envelope(body, app.options.check_duplicate_keys, True)
    if isinstance(read, jsonrpc.RpcRefusal):
        await _answer(send, read.http_status, b"" if read.notification else read.body(), json_type)
        return
    message, rpc_id = read

    async def refuse(error: A2aError) -> None:
        if rpc_id is None:
            await _answer(send, 204, b"", [])
        else:
            status = jsonrpc.RpcRefusal(rpc_id, error).http_status
            await _answer(send, status, v03_error_body(rpc_id, error), json_type)

    # The Content-Type and a method 0.3 does not have are refused as 1.0 refuses them (the
    # caller may not speak 0.3 at all: it may be a 1.0 client that sent no version).
    error: A2aError | None = None
    method = method_named(message.method)
    if not jsonrpc.content_type_ok(headers):
        error = A2aError(ErrorKind.INVALID_REQUEST, "Content-Type must be application/json or application/a2a+json")
    elif method is None:
        error = _refused_method(message.method)
    if error is not None or method is None:
        refusal = jsonrpc.RpcRefusal(rpc_id, error or _refused_method(message.method), rpc_id is None)
        await _answer(send, refusal.http_status, b"" if refusal.notification else refusal.body(), json_type)
        return
    operation = Operation(method[1])
    try:
        request = v03_request(method, None if message.params is None else bytes(message.params))
        cx = call_context(request, principal, headers)
        answer = await app._run(cx, operation, request)
        if not OPERATIONS[operation].streaming:
            result = _result(method, answer)
    except A2aError as e:
        await refuse(e)
        return
    if rpc_id is None:
        if hasattr(answer, "aclose"):
            await answer.aclose()
        await _answer(send, 204, b"", [])
        return
    head = b'{"jsonrpc":"2.0","id":' + rpc_id.json
    if not OPERATIONS[operation].streaming:
        await _answer(send, 200, head + b',"result":' + result + b"}", json_type)
        return
    # The first event is awaited here, so that a refusal at once is a 0.3 error answer.
    try:
        first: Any = await anext(answer)
    except StopAsyncIteration:
        first = None
    except A2aError as e:
        await answer.aclose()
        await refuse(e)
        return

    async def events() -> AsyncIterator[Any]:
        try:
            if first is not None:
                yield first
            async for item in answer:
                if not isinstance(item, Gap):
                    yield item
        finally:
            await answer.aclose()

    def frame(item: StreamEvent | Gap | A2aError) -> bytes:
        if isinstance(item, StreamEvent):
            try:
                return _frame(item.seq, None, head + b',"result":' + _result(method, item.event) + b"}")
            except A2aError as e:
                item = e
        if isinstance(item, A2aError):
            return _frame(None, None, v03_error_body(rpc_id, item))
        return b""

    await app._sse(events(), frame, receive, send, "jsonrpc", rpc_id)
