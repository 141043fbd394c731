"""The A2A gRPC binding on `grpc.aio`: `lf.a2a.v1.A2AService`, served from the same
`Core` as the ASGI application (so a task sent over gRPC is read over JSON-RPC, and the
other way round).

```python
app = create_app(MyAgent(), card)
server, port = await start_grpc(app.core, "127.0.0.1:50051")
...
await server.stop(grace=1.0)
```

Messages cross as protobuf bytes, read and written by the table-driven codec
(`agentproto.a2a.grpc_wire`, tables generated from the model); requests are then checked
by the decoders the JSON bindings use. Metadata stands for headers: the auth hook sees
it, `a2a-version` is checked (missing: 1.0, as gRPC clients send none), `last-event-id`
resumes `SubscribeToTask`. An error is the error table's gRPC status with its message
and a `google.rpc.Status` carrying an `ErrorInfo` (`grpc-status-details-bin`). Streamed
events carry no ids; where the log no longer holds the events after a resume point the
stream ends with `DATA_LOSS` (as the Rust server's does), and the caller subscribes again.
Streams share the SSE streams' budget (`agentproto.a2a.server.stream_budget`): an event's
message counts from its encoding until `grpc.aio` asks for the next one (it has written
the message out, as far as the peer's flow-control window let it); a message that does not
fit cancels the call of the stream holding the most (which frees what gRPC holds for it),
or ends its own with `ABORTED` (the caller subscribes again).

Needs the `grpc` extra (`pip install agentproto[grpc]`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import grpc.aio

from agentproto.a2a import grpc_wire
from agentproto.a2a.errors import A2aError, ErrorKind, ErrorTable
from agentproto.a2a.generated.errors import ROWS
from agentproto.a2a.generated.v1 import OPERATIONS, Operation
from agentproto.a2a.generated.v1_proto import METHODS, SERVICE
from agentproto.a2a.server.core import CallContext, authenticate, call_context
from agentproto.a2a.server.stream_budget import Holder
from agentproto.a2a.server.turns import Core
from agentproto.a2a.tasks import Gap
from agentproto.a2a.version import MissingVersion, check_version
from agentproto.codec.errors import DecodeError

__all__ = ["grpc_handler", "grpc_status", "listen_grpc", "start_grpc"]


def grpc_status(error: A2aError, table: ErrorTable = ErrorTable.V1_0_1) -> grpc.StatusCode:
    """The gRPC status of an error, from the error table."""
    name = ROWS[error.kind].grpc[table.value]
    return grpc.StatusCode[name] if name in grpc.StatusCode.__members__ else grpc.StatusCode.UNKNOWN


async def _abort(context: grpc.aio.ServicerContext[Any, Any], error: A2aError) -> None:
    code = grpc_status(error)
    details = grpc_wire.status_details(code.value[0], error)
    await context.abort(code, error.message, trailing_metadata=(("grpc-status-details-bin", details),))


class _Service:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.options = core.options

    async def _prepare(
        self, operation: Operation, data: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tuple[CallContext, Any]:
        headers: dict[str, str] = {}
        for key, value in context.invocation_metadata() or ():
            if isinstance(value, bytes):
                continue  # `-bin` metadata: nothing here reads it
            headers[key.lower()] = f"{headers[key.lower()]}, {value}" if key.lower() in headers else value
        principal = await authenticate(self.options, headers)
        refused = check_version(headers, "", "gRPC", MissingVersion.V1_0)
        if refused is not None:
            raise refused
        try:
            request = grpc_wire.decode(OPERATIONS[operation].request, data, "$")
        except DecodeError as e:
            raise A2aError.invalid_params(e) from None
        return call_context(request, principal, headers), request

    def unary(self, name: str) -> Callable[[bytes, grpc.aio.ServicerContext[Any, Any]], Awaitable[bytes]]:
        operation = Operation(name)
        answer_type = METHODS[name][1]

        async def handle(data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            try:
                cx, request = await self._prepare(operation, data, context)
                async with self.core.deadlines.limit(self.options.request_timeout):
                    answer = await self.core.handle(cx, operation, request)
                return grpc_wire.encode(answer_type, answer)
            except TimeoutError:
                error = A2aError(ErrorKind.REQUEST_TIMEOUT, "the operation did not finish in time")
            except A2aError as e:
                error = e
            await _abort(context, error)
            raise AssertionError("unreachable: abort raises")

        return handle

    def streaming(self, name: str) -> Callable[[bytes, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[bytes]]:
        operation = Operation(name)

        async def handle(data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[bytes]:
            error: A2aError | None = None
            gap: tuple[int, int] | None = None
            events: Any = None
            lagged = False
            budget = self.core.stream_budget
            running = asyncio.current_task()
            holder = Holder(None if running is None else running.cancel)
            try:
                cx, request = await self._prepare(operation, data, context)
                events = await self.core.handle(cx, operation, request)
                async for item in events:
                    if isinstance(item, Gap):
                        # gRPC events carry no ids and there is no gap event: the stream
                        # ends, and the caller subscribes again for the task as it is now.
                        gap = (item.after, item.resumed_at)
                        break
                    message = grpc_wire.encode("StreamResponse", item.event)
                    size = len(message)
                    if not budget.charge(holder, size):
                        lagged = True
                        break
                    try:
                        yield message
                    finally:
                        budget.release(holder, size)
            except A2aError as e:
                error = e
            finally:
                if events is not None:
                    await events.aclose()
            if error is not None:
                await _abort(context, error)
            if lagged:
                await context.abort(
                    grpc.StatusCode.ABORTED, "this reader fell behind the task's events; subscribe again to resume"
                )
            if gap is not None:
                await context.abort(
                    grpc.StatusCode.DATA_LOSS,
                    f"events after {gap[0]} up to {gap[1]} are no longer held; "
                    "subscribe again for the task as it is now",
                )

        return handle


def grpc_handler(core: Core) -> grpc.GenericRpcHandler:
    """The generic handler of `lf.a2a.v1.A2AService` on `core` (to add to a server of
    one's own with `add_generic_rpc_handlers`)."""
    service = _Service(core)
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for name, (_, _, streaming) in METHODS.items():
        if streaming:
            handlers[name] = grpc.unary_stream_rpc_method_handler(service.streaming(name))
        else:
            handlers[name] = grpc.unary_unary_rpc_method_handler(service.unary(name))
    return grpc.method_handlers_generic_handler(SERVICE, handlers)


def listen_grpc(address: str, *, max_message_bytes: int = 4 << 20) -> tuple[grpc.aio.Server, int]:
    """A `grpc.aio` server listening (without TLS) on `address` (`HOST:PORT`, port 0 for
    any), not started, and its port: add `grpc_handler(core)` and start it (the port is
    known before the agent card that names it is made)."""
    server = grpc.aio.server(
        options=[("grpc.max_receive_message_length", max_message_bytes), ("grpc.max_send_message_length", 64 << 20)]
    )
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen for gRPC on {address}")
    return server, port


async def start_grpc(core: Core, address: str, *, start_core: bool = False) -> tuple[grpc.aio.Server, int]:
    """Starts a `grpc.aio` server for `core` on `address` (see `listen_grpc`); the server
    and its port. `start_core`: also start the core's background work (when no ASGI
    server's lifespan does it)."""
    server, port = listen_grpc(address, max_message_bytes=core.options.max_body_bytes)
    server.add_generic_rpc_handlers((grpc_handler(core),))
    if start_core:
        core.start()
    await server.start()
    return server, port
