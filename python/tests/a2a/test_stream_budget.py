"""The Python A2A server's stream budget (issue 35, item 1), in process: the ASGI app driven
by connections that model uvicorn's flow control (a `send` after a large frame waits until
the client has read it), so a client that stops reading holds its frame.

Every wait is bounded by `BOUND` seconds."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentproto.a2a.demo import card
from agentproto.a2a.executor import RequestContext, TaskUpdater
from agentproto.a2a.server import ServerOptions, create_app
from agentproto.a2a.server.app import A2aApp
from agentproto.a2a.server.stream_budget import DRAIN_ABOVE, Holder, StreamBudget

BOUND = 10.0
PIECE = 100_000
"""The text of each artifact: every such event's frame is a little larger."""
PIECES = 3


def test_the_budget_charges_what_fits_and_refuses_the_stream_holding_the_most() -> None:
    budget = StreamBudget(100)
    a, b = Holder(), Holder()
    assert budget.charge(a, 60) and budget.held == 60 and a.held == 60
    assert not budget.charge(a, 41) and budget.held == 60 and budget.cut == 1
    assert not budget.charge(b, 41) and budget.cut == 2  # a holds more, but cannot be closed
    assert budget.charge(b, 40) and budget.held == 100 and budget.peak == 100
    budget.release(a, 60)
    budget.release(b, 40)
    assert budget.held == 0 and a.held == b.held == 0 and budget.peak == 100 and budget.cut == 2


def test_a_frame_that_does_not_fit_closes_the_connection_of_the_stream_holding_the_most() -> None:
    closed: list[str] = []
    budget = StreamBudget(100)
    a, b, c = Holder(lambda: closed.append("a")), Holder(lambda: closed.append("b")), Holder()
    assert budget.charge(a, 50) and budget.charge(b, 30)
    assert budget.charge(c, 40) and closed == ["a"] and a.cut and a.held == 0
    assert budget.held == 70 and budget.cut == 1
    budget.release(a, 50)  # given back when it was closed
    assert budget.held == 70
    assert not budget.charge(b, 40) and closed == ["a"]  # b holds the most: b is refused
    budget.release(b, 30)
    budget.release(c, 40)
    assert budget.held == 0


class Pieces:
    """WORKING, `PIECES` artifacts of `PIECE` characters, then COMPLETED."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.working()
        for i in range(PIECES):
            await updater.add_artifact(str(i) * PIECE, artifact_id=f"a{i}")
        await updater.complete()


class Connection:
    """One HTTP exchange as uvicorn runs it: a body larger than `DRAIN_ABOVE` fills the
    transport's buffer when the client does not read (`reading=False`), and the next `send`
    waits until `read()` is called."""

    def __init__(self, body: bytes, reading: bool, closable: bool) -> None:
        self._body = body
        self._reading = reading
        self.closable = closable
        self.closed = asyncio.Event()
        """Set when the application closed the connection."""
        self._readable = asyncio.Event()
        self._readable.set()
        self.frames: list[bytes] = []
        self.blocked = asyncio.Event()
        """Set while a `send` waits for the client to read."""
        self.ended = asyncio.Event()
        self._gone = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self._body:
            body, self._body = self._body, b""
            return {"type": "http.request", "body": body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if not self._readable.is_set():
            self.blocked.set()
            await self._readable.wait()
            self.blocked.clear()
        if self.closed.is_set() or message["type"] != "http.response.body":
            return
        body = message.get("body", b"")
        if body:
            self.frames.append(body)
        if len(body) > DRAIN_ABOVE and not self._reading:
            self._readable.clear()
        if not message.get("more_body", False):
            self.ended.set()

    def read(self) -> None:
        """The client reads from now on."""
        self._reading = True
        self._readable.set()

    def close(self) -> None:
        self._gone.set()
        self._readable.set()

    def _closed_by_app(self) -> None:
        self.closed.set()
        self.close()

    def scope(self) -> dict[str, Any]:
        headers = [(b"a2a-version", b"1.0"), (b"content-type", b"application/json")]
        scope: dict[str, Any] = {
            "type": "http",
            "method": "POST",
            "path": "/",
            "raw_path": b"/",
            "query_string": b"",
            "headers": headers,
        }
        if self.closable:
            scope["extensions"] = {"agentproto.close": {"close": self._closed_by_app}}
        return scope

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(f.partition(b"data: ")[2]) for f in self.frames if b"event:" not in f]


def _stream_request(n: int) -> bytes:
    message = {"messageId": f"m{n}", "role": "ROLE_USER", "parts": [{"text": "go"}]}
    call = {"jsonrpc": "2.0", "id": n, "method": "SendStreamingMessage", "params": {"message": message}}
    return json.dumps(call).encode()


async def _within_bound(*waits: asyncio.Event) -> None:
    """Waits until any of `waits` is set, at most `BOUND` seconds."""
    tasks = [asyncio.create_task(w.wait()) for w in waits]
    try:
        done, _ = await asyncio.wait(tasks, timeout=BOUND, return_when="FIRST_COMPLETED")
        assert done, "nothing happened within the bound"
    finally:
        for task in tasks:
            task.cancel()


async def _streams(
    app: A2aApp, reading: list[bool], closable: bool = True
) -> tuple[list[Connection], list[asyncio.Task[None]]]:
    conns = [Connection(_stream_request(n), r, closable) for n, r in enumerate(reading)]
    calls = [asyncio.create_task(app(c.scope(), c.receive, c.send)) for c in conns]  # type: ignore[arg-type]
    return conns, calls


def _app(budget: int) -> A2aApp:
    return create_app(Pieces(), card("http://127.0.0.1:1"), options=ServerOptions(stream_budget=budget))


@pytest.mark.parametrize("closable", [True, False], ids=["closable", "not-closable"])
def test_clients_that_stop_reading_hold_at_most_the_budget_and_the_rest_are_cut(closable: bool) -> None:
    """With connections the application can close, each frame that does not fit closes the
    connection of a stream holding one; without, it is refused and its stream ends with
    `event: lagged`. Either way two streams hold a frame, three are cut."""

    async def main() -> None:
        app = _app(5 * PIECE // 2)  # two frames of a piece fit, not three
        app.core.start()
        conns, calls = await _streams(app, [False] * 5, closable)
        try:
            for c in conns:
                await _within_bound(c.blocked, c.ended, c.closed)
            budget = app.core.stream_budget
            cut = [c for c in conns if c.ended.is_set() or c.closed.is_set()]
            stuck = [c for c in conns if c not in cut]
            assert len(stuck) == 2 and len(cut) == 3 and all(c.blocked.is_set() for c in stuck)
            assert PIECE < budget.held <= budget.capacity and budget.peak <= budget.capacity
            for c in cut:
                if closable:
                    assert c.closed.is_set() and not c.ended.is_set()
                else:
                    assert c.frames[-1] == b"event: lagged\ndata: {}\n\n" and c.ended.is_set()
            for c in stuck:  # reading again, they get every event
                c.read()
            async with asyncio.timeout(BOUND):
                await asyncio.gather(*calls)
            for c in stuck:
                kinds = [next(iter(e["result"])) for e in c.events]
                assert kinds.count("artifactUpdate") == PIECES and c.events[-1]["result"]["statusUpdate"]
            assert budget.held == 0 and budget.cut == 3
        finally:
            for c in conns:
                c.close()
            async with asyncio.timeout(BOUND):
                await asyncio.gather(*calls, return_exceptions=True)
                await app.core.shutdown()

    asyncio.run(main())


def test_readers_that_read_are_never_cut_under_a_small_budget() -> None:
    async def main() -> None:
        app = _app(3 * PIECE // 2)  # one frame of a piece at a time
        app.core.start()
        conns, calls = await _streams(app, [True] * 6)
        try:
            async with asyncio.timeout(BOUND):
                await asyncio.gather(*calls)
            for c in conns:
                assert not any(b"event: lagged" in f for f in c.frames)
                kinds = [next(iter(e["result"])) for e in c.events]
                assert kinds.count("artifactUpdate") == PIECES and "statusUpdate" in kinds
            assert app.core.stream_budget.cut == 0 and app.core.stream_budget.held == 0
        finally:
            for c in conns:
                c.close()
            async with asyncio.timeout(BOUND):
                await asyncio.gather(*calls, return_exceptions=True)
                await app.core.shutdown()

    asyncio.run(main())


class _Aborted(Exception):
    pass


class _GrpcContext:
    """What the gRPC binding's streaming handler asks of its `grpc.aio` context."""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()

    async def abort(self, code: Any, details: str, trailing_metadata: Any = ()) -> None:
        raise _Aborted(code, details)


def test_grpc_streams_whose_messages_are_not_taken_hold_at_most_the_budget() -> None:
    """A gRPC stream holds its message until `grpc.aio` takes the next (the handler's
    generator resumes): five streams that stop there, two fit, the others' calls are
    cancelled one after the other; the two then get every event."""
    pytest.importorskip("grpc")
    from agentproto.a2a import grpc_wire
    from agentproto.a2a.generated.v1 import Message, Part, Role, SendMessageRequest
    from agentproto.a2a.server.grpc_server import _Service

    async def main() -> None:
        app = _app(5 * PIECE // 2)
        app.core.start()
        handler = _Service(app.core).streaming("SendStreamingMessage")
        go_on = asyncio.Event()
        holding = [asyncio.Event() for _ in range(5)]
        taken: list[list[bytes]] = [[] for _ in range(5)]

        async def call(n: int) -> None:
            message = Message(message_id=f"m{n}", role=Role.USER, parts=[Part(text="go")])
            data = grpc_wire.encode("SendMessageRequest", SendMessageRequest(message=message))
            stream = handler(data, _GrpcContext())
            try:
                async for out in stream:
                    taken[n].append(out)
                    if len(out) > PIECE and not go_on.is_set():
                        holding[n].set()
                        await go_on.wait()  # the peer reads no more: grpc.aio takes no next
            finally:
                await stream.aclose()  # type: ignore[attr-defined]

        calls = [asyncio.create_task(call(n)) for n in range(5)]
        try:
            for n, c in enumerate(calls):
                waiting = asyncio.create_task(holding[n].wait())
                await asyncio.wait({waiting, c}, timeout=BOUND, return_when="FIRST_COMPLETED")
                waiting.cancel()
                assert holding[n].is_set() or c.done()
            budget = app.core.stream_budget
            cancelled = [c for c in calls if c.done()]
            assert len(cancelled) == 3 and all(c.cancelled() for c in cancelled)
            assert PIECE < budget.held <= budget.capacity and budget.peak <= budget.capacity
            go_on.set()
            async with asyncio.timeout(BOUND):
                await asyncio.gather(*(c for c in calls if not c.done()))
            for n, c in enumerate(calls):
                if not c.cancelled():
                    assert sum(len(out) > PIECE for out in taken[n]) == PIECES
            assert budget.held == 0 and budget.cut == 3
        finally:
            for c in calls:
                c.cancel()
            async with asyncio.timeout(BOUND):
                await asyncio.gather(*calls, return_exceptions=True)
                await app.core.shutdown()

    asyncio.run(main())
