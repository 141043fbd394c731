"""The A2A client: JSON-RPC or HTTP+JSON, SSE streams resumed with `Last-Event-ID`,
retries with backoff for idempotent calls, timeouts, and agent card resolution.

```python
async with await A2aClient.connect("http://127.0.0.1:8080") as client:
    answer = await client.send_message(SendMessageRequest(message=message))
    async for item in client.send_streaming_message(SendMessageRequest(message=message)):
        print(item.event)
```

A call returns its typed result, or raises `PeerError` (the server's error answer) or
`ClientError` (a local failure: transport, timeout, an answer that does not decode).
Requests are checked against the schema before they are sent; answers decode through
`agentproto.a2a.jsonrpc.read_answer` / `agentproto.a2a.rest.read_answer`.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Self

import msgspec

from agentproto.a2a import codec, jsonrpc, rest
from agentproto.a2a.answers import Answer, AnswerValue, CallFailed
from agentproto.a2a.client.http import HttpClient, HttpError, HttpResponse
from agentproto.a2a.client.wire import jsonrpc_body, read_sse, rest_request
from agentproto.a2a.generated.v1 import (
    OPERATIONS,
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    Empty,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Operation,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from agentproto.codec.errors import DecodeError
from agentproto.errors import AgentprotoError

__all__ = ["CARD_PATH", "A2aClient", "ClientError", "StreamItem", "fetch_card"]

CARD_PATH = "/.well-known/agent-card.json"
IDEMPOTENT = frozenset(
    {
        Operation.GET_TASK,
        Operation.LIST_TASKS,
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        Operation.GET_EXTENDED_AGENT_CARD,
    }
)
"""Calls retried after a transport failure or a 502/503/504 (nothing else is repeated)."""
_RETRY_STATUSES = frozenset({502, 503, 504})
BINDINGS = ("JSONRPC", "HTTP+JSON")


class ClientError(AgentprotoError):
    """A call failed locally: the transport failed, it timed out, or the answer is unusable."""

    def __init__(self, message: str, *, error: DecodeError | None = None, timeout: bool = False) -> None:
        super().__init__(message)
        self.error = error
        """The decode failure, when the answer was well framed but its value does not decode."""
        self.timeout = timeout


@dataclass(frozen=True, slots=True)
class StreamItem:
    """One event of a streamed answer and its SSE id (what `Last-Event-ID` resumes from)."""

    event: StreamResponse
    id: str | None


def _checked(type_name: str, value: Any) -> bytes:
    """The request's JSON, once the schema accepts it (nothing invalid goes out)."""
    data = codec.encode(value)
    try:
        codec.decode(type_name, data)
    except DecodeError as e:
        raise ClientError(f"the {type_name} to send is not valid: {e}", error=e) from None
    return data


def _result(answer: Answer) -> Any:
    if isinstance(answer, AnswerValue):
        return answer.value
    if isinstance(answer, CallFailed):
        raise ClientError(str(answer), error=answer.error)
    raise answer.error


async def fetch_card(base_url: str, *, http: HttpClient | None = None, timeout: float = 30.0) -> AgentCard:
    """The agent card at `base_url` + `/.well-known/agent-card.json` (or at `base_url`
    itself when it names a `.json` file).

    Raises:
        ClientError: it could not be fetched, or is no valid card.
    """
    own = http is None
    client = http or HttpClient()
    url = base_url if base_url.endswith(".json") else base_url.rstrip("/") + CARD_PATH
    try:
        async with asyncio.timeout(timeout):
            answer = await client.request("GET", url, {"Accept": "application/json"})
            body = await answer.read()
    except TimeoutError:
        raise ClientError(f"the agent card at {url} did not arrive in time", timeout=True) from None
    except HttpError as e:
        raise ClientError(f"cannot fetch the agent card at {url}: {e}") from None
    finally:
        if own:
            await client.close()
    if answer.status != 200:
        raise ClientError(f"the agent card at {url} answered HTTP {answer.status}")
    try:
        card: AgentCard = codec.decode("AgentCard", body)
    except DecodeError as e:
        raise ClientError(f"the agent card at {url} does not decode: {e}", error=e) from None
    return card


class A2aClient:
    """A client of one A2A interface (see the module documentation).

    Args:
        url: the interface URL (JSON-RPC endpoint or HTTP+JSON base).
        binding: `JSONRPC` or `HTTP+JSON`.
        timeout: seconds a unary call (each attempt) may take; a stream's wait for each event.
        retries: how many times an idempotent call is repeated after a transport failure,
            and a stream resumed after it broke off.
        backoff: the first retry's delay in seconds, doubled each time (with jitter).
        headers: sent with every request (credentials, `A2A-Extensions`).
    """

    def __init__(
        self,
        url: str,
        binding: str = "JSONRPC",
        *,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.2,
        headers: Mapping[str, str] | None = None,
        http: HttpClient | None = None,
    ) -> None:
        if binding not in BINDINGS:
            raise ValueError(f"binding must be one of {BINDINGS}, not {binding!r}")
        self.url = url if binding == "JSONRPC" else url.rstrip("/")
        self.binding = binding
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.headers = {"A2A-Version": "1.0", "Content-Type": "application/json", **(headers or {})}
        self._http = http or HttpClient()
        self._ids = itertools.count(1)

    @classmethod
    async def connect(cls, base_url: str, *, binding: str | None = None, **options: Any) -> A2aClient:
        """A client for the agent whose card is at `base_url`: the card's first A2A 1.0
        interface of `binding` (any of JSON-RPC and HTTP+JSON when not given; `GRPC`, with
        the `grpc` extra installed, gives an `A2aGrpcClient`)."""
        card = await fetch_card(base_url, timeout=options.get("timeout", 30.0))
        for interface in card.supported_interfaces:
            wanted = binding is None or interface.protocol_binding == binding
            if wanted and interface.protocol_binding in BINDINGS and interface.protocol_version.startswith("1."):
                return cls(interface.url, interface.protocol_binding, **options)
            if binding == "GRPC" and wanted and interface.protocol_version.startswith("1."):
                # Only when asked for: gRPC needs the `grpc` extra.
                from agentproto.a2a.client.grpc_client import A2aGrpcClient

                return A2aGrpcClient(interface.url, **{k: v for k, v in options.items() if k != "http"})
        raise ClientError(f"the agent card at {base_url} offers no A2A 1.0 interface this client speaks")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.close()

    # --- typed calls -----------------------------------------------------------------

    async def send_message(self, request: SendMessageRequest) -> SendMessageResponse:
        result: SendMessageResponse = await self.call(Operation.SEND_MESSAGE, request)
        return result

    async def get_task(self, request: GetTaskRequest) -> Task:
        result: Task = await self.call(Operation.GET_TASK, request)
        return result

    async def list_tasks(self, request: ListTasksRequest) -> ListTasksResponse:
        result: ListTasksResponse = await self.call(Operation.LIST_TASKS, request)
        return result

    async def cancel_task(self, request: CancelTaskRequest) -> Task:
        result: Task = await self.call(Operation.CANCEL_TASK, request)
        return result

    async def create_task_push_notification_config(
        self, request: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        result: TaskPushNotificationConfig = await self.call(Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, request)
        return result

    async def get_task_push_notification_config(
        self, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        result: TaskPushNotificationConfig = await self.call(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, request)
        return result

    async def list_task_push_notification_configs(
        self, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        result: ListTaskPushNotificationConfigsResponse = await self.call(
            Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, request
        )
        return result

    async def delete_task_push_notification_config(self, request: DeleteTaskPushNotificationConfigRequest) -> Empty:
        result: Empty = await self.call(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, request)
        return result

    async def get_extended_agent_card(self, request: GetExtendedAgentCardRequest | None = None) -> AgentCard:
        result: AgentCard = await self.call(Operation.GET_EXTENDED_AGENT_CARD, request or GetExtendedAgentCardRequest())
        return result

    def send_streaming_message(self, request: SendMessageRequest) -> AsyncIterator[StreamItem]:
        return self.stream(Operation.SEND_STREAMING_MESSAGE, request)

    def subscribe_to_task(
        self, request: SubscribeToTaskRequest, *, last_event_id: str | None = None
    ) -> AsyncIterator[StreamItem]:
        return self.stream(Operation.SUBSCRIBE_TO_TASK, request, last_event_id=last_event_id)

    # --- the machinery -----------------------------------------------------------------

    async def _send(
        self, operation: Operation, request: Any, extra: Mapping[str, str] | None = None
    ) -> tuple[HttpResponse, int]:
        info = OPERATIONS[operation]
        params = _checked(info.request, request)
        headers = dict(self.headers)
        if extra:
            headers.update(extra)
        if self.binding == "JSONRPC":
            request_id = next(self._ids)
            body: bytes | None = jsonrpc_body(operation, request_id, params)
            method, url = "POST", self.url
        else:
            request_id = 0
            method, target, body = rest_request(operation, msgspec.json.decode(params))
            url = self.url + target
            if body is None:
                del headers["Content-Type"]
        return await self._http.request(method, url, headers, body), request_id

    def _read(self, operation: Operation, status: int, body: bytes, request_id: int) -> Any:
        if self.binding == "JSONRPC":
            return _result(jsonrpc.read_answer(operation, body, request_id))
        return _result(rest.read_answer(operation, status, body))

    async def call(self, operation: Operation, request: Any) -> Any:
        """Calls a unary operation with its typed request; its typed result.

        Raises:
            PeerError: the server answered with an error.
            ClientError: the call failed locally (see the class documentation).
        """
        attempts = 1 + (self.retries if operation in IDEMPOTENT else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                async with asyncio.timeout(self.timeout):
                    answer, request_id = await self._send(operation, request)
                    body = await answer.read()
            except TimeoutError:
                if last:
                    raise ClientError(
                        f"{operation.value} did not answer within {self.timeout} s", timeout=True
                    ) from None
            except HttpError as e:
                if last:
                    raise ClientError(f"{operation.value} failed: {e}") from None
            else:
                if answer.status not in _RETRY_STATUSES or last:
                    return self._read(operation, answer.status, body, request_id)
            await asyncio.sleep(self.backoff * (2**attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    async def stream(
        self, operation: Operation, request: Any, *, last_event_id: str | None = None
    ) -> AsyncIterator[StreamItem]:
        """Calls a streaming operation; its events, until the server ends the stream. A
        stream that breaks off is resumed (`SubscribeToTask` with `Last-Event-ID`) up to
        `retries` times once a task and an event id are known.

        Raises:
            PeerError: the server refused the call or sent an error event.
            ClientError: the call failed locally.
        """
        task_id: str | None = None
        tenant: str = getattr(request, "tenant", "")
        resumes = 0
        while True:
            extra = {"Accept": "text/event-stream"}
            if last_event_id is not None:
                extra["Last-Event-ID"] = last_event_id
            answer: HttpResponse | None = None
            try:
                async with asyncio.timeout(self.timeout):
                    answer, request_id = await self._send(operation, request, extra)
                content_type = answer.header("content-type") or ""
                if not content_type.startswith("text/event-stream"):
                    async with asyncio.timeout(self.timeout):
                        body = await answer.read()
                    yield StreamItem(self._read(operation, answer.status, body, request_id), None)
                    return
                events = read_sse(answer.chunks()).__aiter__()
                while True:
                    async with asyncio.timeout(self.timeout):
                        sse = await anext(events, None)
                    if sse is None:
                        return
                    if sse.event not in (None, "message", "error"):
                        continue  # `gap` (events the server no longer holds) and what may come
                    status = 200
                    if sse.event == "error":
                        code = _error_code(sse.data)
                        status = code if code is not None else 500
                    value: StreamResponse = self._read(operation, status, sse.data, request_id)
                    if sse.id is not None:
                        last_event_id = sse.id
                    found = _task_id(value)
                    if found:
                        task_id = found
                    yield StreamItem(value, sse.id)
            except TimeoutError:
                raise ClientError(f"{operation.value}: no event within {self.timeout} s", timeout=True) from None
            except (HttpError, ValueError) as e:
                if task_id is None or last_event_id is None or resumes >= self.retries:
                    raise ClientError(f"{operation.value}: the stream broke off: {e}") from None
            finally:
                if answer is not None:
                    answer.close()
            resumes += 1
            await asyncio.sleep(self.backoff * (2 ** (resumes - 1)))
            operation = Operation.SUBSCRIBE_TO_TASK
            request = SubscribeToTaskRequest(tenant=tenant, id=task_id)


def _error_code(data: bytes) -> int | None:
    try:
        parsed = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if type(code) is int else None


def _task_id(event: StreamResponse) -> str | None:
    if event.task is not msgspec.UNSET:
        return event.task.id
    if event.status_update is not msgspec.UNSET:
        return event.status_update.task_id
    if event.artifact_update is not msgspec.UNSET:
        return event.artifact_update.task_id
    return None
