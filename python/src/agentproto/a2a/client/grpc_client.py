"""The A2A client over gRPC (`grpc.aio`): the typed calls of `A2aClient`, on
`lf.a2a.v1.A2AService`. Requests are checked against the schema, then written and their
answers read by the table-driven protobuf codec (`agentproto.a2a.grpc_wire`); answers
decode through the same checks as on the JSON bindings.

```python
async with A2aGrpcClient("127.0.0.1:50051") as client:
    answer = await client.send_message(SendMessageRequest(message=message))
```

An error status becomes a `PeerError`: `status` is the gRPC code's name, `reason` and
`metadata` come from the `ErrorInfo` of `grpc-status-details-bin` (without one, `code`
is the JSON-RPC code the status stands for). Idempotent calls are retried after
`UNAVAILABLE`. Streamed events carry no ids (`StreamItem.id` is `None`): a stream that
ends with `UNAVAILABLE`, `DATA_LOSS` or `ABORTED` once its task is known resumes with
`SubscribeToTask`, which starts with the task as it is now (a `last_event_id` the caller
gives is sent as `last-event-id` metadata on the first call only). Needs the `grpc` extra.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Mapping
from typing import Any

import grpc
import grpc.aio
import msgspec

from agentproto.a2a import grpc_wire
from agentproto.a2a.client.client import IDEMPOTENT, A2aClient, ClientError, StreamItem, _checked, _task_id
from agentproto.a2a.errors import PeerError
from agentproto.a2a.generated.errors import ROWS, ErrorKind
from agentproto.a2a.generated.v1 import OPERATIONS, Operation, StreamResponse, SubscribeToTaskRequest
from agentproto.a2a.generated.v1_proto import METHODS, SERVICE
from agentproto.codec.errors import DecodeError

__all__ = ["A2aGrpcClient"]

_KIND_OF_STATUS = {
    grpc.StatusCode.NOT_FOUND: ErrorKind.TASK_NOT_FOUND,
    grpc.StatusCode.INVALID_ARGUMENT: ErrorKind.INVALID_PARAMS,
    grpc.StatusCode.UNIMPLEMENTED: ErrorKind.METHOD_NOT_FOUND,
    grpc.StatusCode.UNAUTHENTICATED: ErrorKind.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED: ErrorKind.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ErrorKind.RATE_LIMITED,
    grpc.StatusCode.DEADLINE_EXCEEDED: ErrorKind.REQUEST_TIMEOUT,
}


_RESUMABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DATA_LOSS, grpc.StatusCode.ABORTED})
"""Statuses that end a stream the caller resumes: the connection broke, the events after
the resume point are gone (`DATA_LOSS`), the reader fell behind (`ABORTED`)."""


def _peer_error(e: grpc.aio.AioRpcError) -> PeerError:
    details = next((v for k, v in e.trailing_metadata() or () if k == "grpc-status-details-bin"), None)
    reason, _domain, metadata = grpc_wire.error_of_details(details) if isinstance(details, bytes) else (None, None, {})
    code = None if reason is not None else ROWS[_KIND_OF_STATUS.get(e.code(), ErrorKind.INTERNAL)].code
    return PeerError(code=code, message=e.details() or "", status=e.code().name, reason=reason, metadata=metadata)


class A2aGrpcClient(A2aClient):
    """A client of one A2A gRPC interface (`HOST:PORT`, without TLS unless `credentials`
    are given). Options as `A2aClient`; `headers` are sent as metadata."""

    def __init__(
        self,
        target: str,
        *,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.2,
        headers: Mapping[str, str] | None = None,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self.url = target
        self.binding = "GRPC"
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.headers = {"a2a-version": "1.0", **{k.lower(): v for k, v in (headers or {}).items()}}
        options = [("grpc.max_receive_message_length", 64 << 20)]
        if credentials is None:
            self._channel = grpc.aio.insecure_channel(target, options=options)
        else:
            self._channel = grpc.aio.secure_channel(target, credentials, options=options)

    async def close(self) -> None:
        await self._channel.close()

    def _metadata(self, extra: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
        return tuple({**self.headers, **(extra or {})}.items())

    def _answer(self, operation: Operation, data: bytes) -> Any:
        answer_type = METHODS[operation.value][1]
        try:
            return grpc_wire.decode(answer_type, data, "$")
        except DecodeError as e:
            raise ClientError(f"{operation.value}: the answer does not decode: {e}", error=e) from None

    async def call(self, operation: Operation, request: Any) -> Any:
        """Calls a unary operation with its typed request; its typed result.

        Raises:
            PeerError: the server answered with an error status.
            ClientError: the call failed locally (transport, timeout, an undecodable answer).
        """
        info = OPERATIONS[operation]
        data = grpc_wire.from_json(info.request, _json(_checked(info.request, request)))
        method = self._channel.unary_unary(f"/{SERVICE}/{operation.value}")
        attempts = 1 + (self.retries if operation in IDEMPOTENT else 0)
        for attempt in range(attempts):
            try:
                answer = await method(data, timeout=self.timeout, metadata=self._metadata())
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.UNAVAILABLE and attempt < attempts - 1:
                    await asyncio.sleep(self.backoff * (2**attempt) * (0.5 + random.random()))
                    continue
                raise self._failure(operation, e) from None
            return self._answer(operation, answer)
        raise AssertionError("unreachable")

    def _failure(self, operation: Operation, e: grpc.aio.AioRpcError) -> Exception:
        if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED and not e.trailing_metadata():
            return ClientError(f"{operation.value} did not answer within {self.timeout} s", timeout=True)
        if e.code() == grpc.StatusCode.UNAVAILABLE:
            return ClientError(f"{operation.value} failed: {e.details()}")
        return _peer_error(e)

    async def stream(
        self, operation: Operation, request: Any, *, last_event_id: str | None = None
    ) -> AsyncIterator[StreamItem]:
        """Calls a streaming operation; its events until the server ends the stream. A
        stream that breaks off (see the module documentation) is resumed with
        `SubscribeToTask` up to `retries` times once its task is known.

        Raises:
            PeerError: the server refused the call or ended the stream with an error.
            ClientError: the call failed locally.
        """
        task_id: str | None = None
        tenant: str = getattr(request, "tenant", "")
        resumes = 0
        while True:
            info = OPERATIONS[operation]
            data = grpc_wire.from_json(info.request, _json(_checked(info.request, request)))
            extra = {} if last_event_id is None else {"last-event-id": last_event_id}
            call = self._channel.unary_stream(f"/{SERVICE}/{operation.value}")(data, metadata=self._metadata(extra))
            try:
                while True:
                    try:
                        async with asyncio.timeout(self.timeout):
                            item = await call.read()
                    except TimeoutError:
                        raise ClientError(
                            f"{operation.value}: no event within {self.timeout} s", timeout=True
                        ) from None
                    if item is grpc.aio.EOF:
                        return
                    value: StreamResponse = self._answer(operation, item)
                    found = _task_id(value)
                    if found:
                        task_id = found
                    yield StreamItem(value, None)
            except grpc.aio.AioRpcError as e:
                if e.code() not in _RESUMABLE or task_id is None or resumes >= self.retries:
                    raise self._failure(operation, e) from None
            finally:
                call.cancel()
            resumes += 1
            last_event_id = None  # events carry no ids: the task comes again as it is now
            await asyncio.sleep(self.backoff * (2 ** (resumes - 1)))
            operation = Operation.SUBSCRIBE_TO_TASK
            request = SubscribeToTaskRequest(tenant=tenant, id=task_id)


def _json(data: bytes) -> dict[str, Any]:
    tree = msgspec.json.decode(data)
    return tree if isinstance(tree, dict) else {}
