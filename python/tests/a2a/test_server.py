"""The A2A server's behaviour beyond the vectors, through real HTTP on 127.0.0.1: the card's
caching headers, body limits, the auth hook and tenant scoping, the task lifecycle rules,
executor failures, the cancel hook, one turn per task, timeouts."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from typing import Any

import pytest

from agentproto.a2a.client import A2aClient, ClientError, PeerError
from agentproto.a2a.demo import DemoAgent, card
from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.executor import Principal, RequestContext, TaskUpdater
from agentproto.a2a.generated.v1 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from agentproto.a2a.memory_store import MemoryStore
from agentproto.a2a.server import ServerOptions, create_app
from agentproto.a2a.store import TaskKey
from tests.a2a.servers import BOUND, ServerThread, exchange, request_bytes

HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def send(text: str, task_id: str = "", **config: Any) -> SendMessageRequest:
    message = Message(message_id="m", role=Role.USER, parts=[Part(text=text)], task_id=task_id)
    configuration = SendMessageConfiguration(**config) if config else SendMessageConfiguration()
    return SendMessageRequest(message=message, configuration=configuration)


def serve(executor: Any, **options: Any) -> ServerThread:
    return ServerThread(lambda base: create_app(executor, card(base), options=ServerOptions(**options)))


def with_client(
    server: ServerThread, body: Callable[[A2aClient], Awaitable[None]], binding: str = "JSONRPC", **kw: Any
) -> None:
    async def main() -> None:
        url = server.base + ("/" if binding == "JSONRPC" else "/a2a/rest")
        async with A2aClient(url, binding, timeout=BOUND, **kw) as client, asyncio.timeout(BOUND):
            await body(client)

    asyncio.run(main())


@pytest.fixture
def demo() -> Iterator[ServerThread]:
    with serve(DemoAgent(0.05)) as server:
        yield server


def test_the_card_has_an_etag_and_answers_304_when_it_matches(demo: ServerThread) -> None:
    first = exchange(demo.port, request_bytes("GET", "/.well-known/agent-card.json", {}, None, demo.port))
    assert first.status == 200 and json.loads(first.body)["name"] == "agentproto demo agent"
    assert first.headers["cache-control"] == "public, max-age=300"
    etag = first.headers["etag"]
    again = exchange(
        demo.port, request_bytes("GET", "/.well-known/agent-card.json", {"If-None-Match": etag}, None, demo.port)
    )
    assert again.status == 304 and again.body == b"" and again.headers["etag"] == etag


def test_the_card_has_a_last_modified_and_answers_304_to_if_modified_since(demo: ServerThread) -> None:
    first = exchange(demo.port, request_bytes("GET", "/.well-known/agent-card.json", {}, None, demo.port))
    modified = first.headers["last-modified"]
    assert modified.endswith(" GMT")
    path = "/.well-known/agent-card.json"
    same = exchange(demo.port, request_bytes("GET", path, {"If-Modified-Since": modified}, None, demo.port))
    assert same.status == 304 and same.body == b"" and same.headers["last-modified"] == modified
    old = {"If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}
    assert exchange(demo.port, request_bytes("GET", path, old, None, demo.port)).status == 200
    # If-None-Match decides when both are sent: a stale tag is a full answer whatever the date.
    both = {"If-None-Match": '"stale"', "If-Modified-Since": modified}
    assert exchange(demo.port, request_bytes("GET", path, both, None, demo.port)).status == 200
    garbled = {"If-Modified-Since": "not a date"}
    assert exchange(demo.port, request_bytes("GET", path, garbled, None, demo.port)).status == 200


def test_http_json_successes_are_a2a_json_and_json_rpc_answers_plain_json(demo: ServerThread) -> None:
    # As the Rust server: A2A 1.0.1's SHOULD on HTTP+JSON; errors and JSON-RPC stay application/json.
    body = b'{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}'
    rest = exchange(demo.port, request_bytes("POST", "/a2a/rest/message:send", HEADERS, body, demo.port))
    assert rest.status == 200 and rest.headers["content-type"] == "application/a2a+json"
    missing = exchange(demo.port, request_bytes("GET", "/a2a/rest/tasks/nope", HEADERS, None, demo.port))
    assert missing.status == 404 and missing.headers["content-type"] == "application/json"
    rpc = b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":' + body + b"}"
    answer = exchange(demo.port, request_bytes("POST", "/", HEADERS, rpc, demo.port))
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"


def test_a_body_over_the_limit_is_refused_with_413_on_both_bindings() -> None:
    with serve(DemoAgent(), max_body_bytes=100) as server:
        body = b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' + b"x" * 200 + b'"}}'
        answer = exchange(server.port, request_bytes("POST", "/", HEADERS, body, server.port))
        assert answer.status == 413 and "error" in json.loads(answer.body)
        rest = exchange(server.port, request_bytes("POST", "/a2a/rest/message:send", HEADERS, body, server.port))
        assert rest.status == 413 and json.loads(rest.body)["error"]["code"] == 413
        # Without Content-Length (chunked), the limit holds while reading.
        chunked = (
            b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n"
            b"A2A-Version: 1.0\r\nContent-Type: application/json\r\n\r\n"
            + b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + 50]), body[i : i + 50]) for i in range(0, len(body), 50))
            + b"0\r\n\r\n"
        )
        assert exchange(server.port, chunked).status == 413


def test_the_auth_hook_refuses_and_its_principal_scopes_tasks_to_its_tenant() -> None:
    def authenticate(headers: Mapping[str, str]) -> Principal | None:
        token = headers.get("authorization", "")
        if token == "Bearer a":
            return Principal("alice", tenant="a")
        if token == "Bearer b":
            return Principal("bob", tenant="b")
        raise A2aError(ErrorKind.UNAUTHENTICATED, "a bearer token is required")

    with serve(DemoAgent(), authenticate=authenticate) as server:

        async def anonymous(client: A2aClient) -> None:
            with pytest.raises(PeerError) as refused:
                await client.get_task(GetTaskRequest(id="t"))
            assert refused.value.kind is ErrorKind.UNAUTHENTICATED and refused.value.http_status == 401

        with_client(server, anonymous, "HTTP+JSON")
        created: list[str] = []

        async def alice(client: A2aClient) -> None:
            answer = await client.send_message(send("hello"))
            assert isinstance(answer.task, Task)
            created.append(answer.task.id)
            assert (await client.list_tasks(ListTasksRequest())).total_size == 1

        async def bob(client: A2aClient) -> None:
            with pytest.raises(PeerError) as missing:
                await client.get_task(GetTaskRequest(id=created[0]))
            assert missing.value.kind is ErrorKind.TASK_NOT_FOUND
            assert (await client.list_tasks(ListTasksRequest())).total_size == 0
            with pytest.raises(PeerError) as other:
                await client.get_task(GetTaskRequest(id=created[0], tenant="a"))
            assert other.value.kind is ErrorKind.PERMISSION_DENIED

        with_client(server, alice, headers={"Authorization": "Bearer a"})
        with_client(server, bob, headers={"Authorization": "Bearer b"})


class Misbehaving:
    """`late`: updates after COMPLETED; `boom`: raises before any update; `crash`: raises
    after WORKING; `hold`: WORKING, then waits to be canceled (its own cancel hook)."""

    def __init__(self) -> None:
        self.late_error: A2aError | None = None
        self.cancelled: list[str] = []

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        word = context.text()
        if word == "late":
            await updater.complete()
            try:
                await updater.working()
            except A2aError as e:
                self.late_error = e
        elif word == "boom":
            raise A2aError(ErrorKind.INVALID_PARAMS, "the agent refuses this")
        elif word == "crash":
            await updater.working()
            raise RuntimeError("the agent broke")
        elif word == "hold":
            await updater.working()
            await context.cancelled.wait()

    async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.cancelled.append(context.task_id)
        await updater.cancel()


def test_lifecycle_rules_failures_and_the_cancel_hook() -> None:
    agent = Misbehaving()
    with serve(agent) as server:

        async def body(client: A2aClient) -> None:
            done = await client.send_message(send("late"))
            assert isinstance(done.task, Task) and done.task.status.state is TaskState.COMPLETED
            assert agent.late_error is not None and agent.late_error.kind is ErrorKind.UNSUPPORTED_OPERATION
            with pytest.raises(PeerError) as refused:
                await client.send_message(send("boom"))
            assert refused.value.kind is ErrorKind.INVALID_PARAMS
            failed = await client.send_message(send("crash"))
            assert isinstance(failed.task, Task) and failed.task.status.state is TaskState.FAILED
            held = await client.send_message(send("hold", return_immediately=True))
            assert isinstance(held.task, Task)
            # A follow-up while the turn runs is taken, as the Rust server takes it: a turn of its
            # own beside the running one; the cancel below ends both.
            beside = await client.send_message(send("hold", task_id=held.task.id, return_immediately=True))
            assert isinstance(beside.task, Task) and beside.task.status.state is TaskState.WORKING
            canceled = await client.cancel_task(CancelTaskRequest(id=held.task.id))
            assert canceled.status.state is TaskState.CANCELED and agent.cancelled == [held.task.id]
            with pytest.raises(PeerError) as again:
                await client.cancel_task(CancelTaskRequest(id=held.task.id))
            assert again.value.kind is ErrorKind.TASK_NOT_CANCELABLE

        with_client(server, body)


def test_a_unary_call_past_the_request_timeout_answers_408() -> None:
    with serve(Misbehaving(), request_timeout=0.2) as server:

        async def body(client: A2aClient) -> None:
            with pytest.raises(PeerError) as late:
                await client.send_message(send("hold"))
            assert late.value.kind is ErrorKind.REQUEST_TIMEOUT and late.value.http_status == 408

        with_client(server, body, "HTTP+JSON")


def test_a_body_that_does_not_arrive_within_the_body_timeout_answers_408() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}).encode()
    with serve(Misbehaving(), body_timeout=0.2) as server:
        head = request_bytes("POST", "/", HEADERS, body, server.port)
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", server.port), timeout=BOUND) as s:
            s.sendall(head[: len(head) - len(body) + 10])  # the head and 10 bytes of the body
            data = b""
            while b"\r\n\r\n" not in data or not data.endswith(b"}"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        took = time.monotonic() - started
    assert data.startswith(b"HTTP/1.1 408 "), data[:200]
    assert b"did not arrive in time" in data
    assert 0.2 <= took < 0.2 + BOUND / 2


def test_unary_calls_in_time_leave_no_time_limit_behind() -> None:
    app = create_app(Misbehaving(), card("http://127.0.0.1/"))

    async def main() -> None:
        async def call(text: str) -> bytes:
            payload = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}}}  # fmt: skip
            raw = json.dumps(payload).encode()
            scope = {"type": "http", "method": "POST", "path": "/", "raw_path": b"/", "query_string": b"",
                     "headers": [(b"a2a-version", b"1.0"), (b"content-type", b"application/json")]}  # fmt: skip
            sent: list[MutableMapping[str, Any]] = []

            async def receive() -> dict[str, Any]:
                return {"type": "http.request", "body": raw, "more_body": False}

            async def send(message: MutableMapping[str, Any]) -> None:
                sent.append(message)

            await app(scope, receive, send)
            return bytes(sent[-1]["body"])

        answers = await asyncio.gather(*(call("late") for _ in range(50)))
        assert all(b"TASK_STATE_COMPLETED" in a for a in answers)
        assert app.core.deadlines.active == 0

    asyncio.run(main())


def test_a_header_field_given_twice_is_read_as_its_values_joined() -> None:
    app = create_app(Misbehaving(), card("http://127.0.0.1/"))

    async def status(fields: list[tuple[bytes, bytes]]) -> int:
        scope = {"type": "http", "method": "POST", "path": "/", "raw_path": b"/", "query_string": b"",
                 "headers": [(b"a2a-version", b"1.0"), *fields]}  # fmt: skip
        sent: list[MutableMapping[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"{}", "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)
        code: int = sent[0]["status"]
        return code

    async def main() -> None:
        # The second Content-Encoding names a coding the server does not decode: refused.
        assert await status([(b"Content-Encoding", b"identity"), (b"content-encoding", b"gzip")]) == 415
        assert await status([(b"content-encoding", b"identity"), (b"Content-Encoding", b"identity")]) == 200

    asyncio.run(main())


def test_ids_are_random_version_4_uuids() -> None:
    import uuid

    from agentproto.a2a.server.core import new_id

    ids = {new_id() for _ in range(1000)}
    assert len(ids) == 1000
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_the_client_times_out_on_a_silent_server() -> None:
    with serve(Misbehaving()) as server:

        async def body(client: A2aClient) -> None:
            with pytest.raises(ClientError) as late:
                await client.send_message(send("hold"))
            assert late.value.timeout

        async def main() -> None:
            async with A2aClient(server.base + "/", timeout=0.2) as client, asyncio.timeout(BOUND):
                await body(client)

        asyncio.run(main())


def _open_stream(server: ServerThread, body: bytes) -> socket.socket:
    raw = request_bytes("POST", "/a2a/rest/tasks/" + body.decode() + ":subscribe", HEADERS, b"", server.port)
    stream = socket.create_connection(("127.0.0.1", server.port), timeout=BOUND)
    stream.sendall(raw)
    return stream


def _read_until(stream: socket.socket, wanted: bytes) -> bytes:
    seen = b""
    while wanted not in seen:
        chunk = stream.recv(65536)
        assert chunk, f"the stream ended before {wanted!r}: {seen!r}"
        seen += chunk
    return seen


def _within_bound(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold within the bound"
        time.sleep(0.01)


def test_an_idle_stream_gets_keep_alives_and_a_dropped_one_releases_its_reader() -> None:
    with serve(Misbehaving(), keep_alive=0.05) as server:
        held: list[str] = []

        async def start(client: A2aClient) -> None:
            answer = await client.send_message(send("hold", return_immediately=True))
            assert isinstance(answer.task, Task)
            held.append(answer.task.id)

        with_client(server, start)
        stream = _open_stream(server, held[0].encode())
        try:
            seen = _read_until(stream, b": keep-alive\n\n")
            assert b"text/event-stream" in seen and b'"task"' in seen
            hub = server.app.core.hub
            assert hub.waiting == 1
        finally:
            stream.close()
        _within_bound(lambda: hub.waiting == 0)


def test_the_extended_card_needs_a_principal() -> None:
    def authenticate(headers: Mapping[str, str]) -> Principal | None:
        return Principal("alice") if headers.get("authorization") == "Bearer a" else None

    def make(base: str) -> Any:
        public = card(base)
        public.capabilities.extended_agent_card = True
        extended = card(base)
        extended.name = "the extended card"
        options = ServerOptions(authenticate=authenticate, extended_card=extended)
        return create_app(DemoAgent(), public, options=options)

    with ServerThread(make) as server:

        async def anonymous(client: A2aClient) -> None:
            with pytest.raises(PeerError) as refused:
                await client.get_extended_agent_card()
            assert refused.value.kind is ErrorKind.UNAUTHENTICATED

        async def alice(client: A2aClient) -> None:
            assert (await client.get_extended_agent_card()).name == "the extended card"

        with_client(server, anonymous)
        with_client(server, alice, "HTTP+JSON", headers={"Authorization": "Bearer a"})


class Chatty:
    """WORKING, five artifacts, then waits to be canceled."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.working()
        for i in range(5):
            await updater.add_artifact(f"piece {i}", artifact_id=f"a{i}")
        await asyncio.Event().wait()


def test_a_resume_past_what_a_bounded_log_holds_gets_a_gap_event() -> None:
    def make(base: str) -> Any:
        return create_app(Chatty(), card(base), store=MemoryStore(max_events=3))

    with ServerThread(make) as server:
        held: list[str] = []

        async def start(client: A2aClient) -> None:
            answer = await client.send_message(send("go", return_immediately=True))
            assert isinstance(answer.task, Task)
            held.append(answer.task.id)

        with_client(server, start)
        # The log holds events 5..7 (the creation, WORKING and the first artifacts are gone).
        _within_bound(lambda: server.app.core.running.get(TaskKey("", held[0])) is not None)
        stream = socket.create_connection(("127.0.0.1", server.port), timeout=BOUND)
        try:
            target = f"/a2a/rest/tasks/{held[0]}:subscribe"
            stream.sendall(request_bytes("GET", target, {**HEADERS, "Last-Event-ID": "1"}, None, server.port))
            seen = _read_until(stream, b"id: 7\n")
            assert b'event: gap\ndata: {"after":1,"resumedAt":5}\n\n' in seen
        finally:
            stream.close()

        async def resumed(client: A2aClient) -> None:
            items = client.subscribe_to_task(SubscribeToTaskRequest(id=held[0]), last_event_id="1")
            first = await anext(items)
            assert isinstance(first.event.task, Task) and first.id is None
            assert (await anext(items)).id == "5"  # the gap is no event for the caller
            await items.aclose()  # type: ignore[attr-defined]

        with_client(server, resumed)
