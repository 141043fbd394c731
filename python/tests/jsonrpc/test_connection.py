"""The asyncio connection's guarantees, over in-memory pipes: ordering, concurrency,
backpressure, cancellation both ways, bad and oversize lines, handler failures, EOF,
transport failures. Every wait is bounded; nothing sleeps."""

from __future__ import annotations

import asyncio
import json

import pytest
from msgspec import Raw

from agentproto.jsonrpc import (
    CallAborted,
    CallTimeout,
    CancellationToken,
    ConnectionClosed,
    ConnectionOptions,
    Notification,
    NotificationContext,
    Request,
    RequestContext,
    RequestError,
    ResponseTooLarge,
    RpcError,
    TransportError,
)
from agentproto.jsonrpc.options import (
    InputClosed,
    InvalidMessage,
    LateResponse,
    NonJsonLineSkipped,
    NotificationHandlerFailed,
    OversizeMessage,
    RequestHandlerFailed,
)
from tests.jsonrpc.wire import WAIT, Recorder, Setup, pair


async def test_a_call_returns_after_the_notifications_read_before_its_answer() -> None:
    async with Setup() as s:
        slow = asyncio.Event()

        async def on_note(note: Notification, cx: NotificationContext) -> None:
            if cx.index == 1:
                await slow.wait()  # the worker is held: the answer must wait for it

        s.handler.on_note = on_note
        call = asyncio.create_task(s.peer.call("work"))
        request = await s.wire.message()
        for i in range(200):
            await s.wire.send({"jsonrpc": "2.0", "method": "update", "params": {"n": i}})
        await s.wire.send({"jsonrpc": "2.0", "id": request["id"], "result": {"done": True}})
        done, _ = await asyncio.wait((call,), timeout=0)
        assert not done
        slow.set()
        result = await asyncio.wait_for(call, WAIT)
        assert json.loads(bytes(result)) == {"done": True}
        # Every update was handled, in order, before the call returned.
        assert [params["n"] for _, _, params in s.handler.notes] == list(range(200))


async def test_a_request_starts_after_the_notifications_read_before_it() -> None:
    async with Setup() as s:
        seen: list[int] = []

        async def tool(request: Request, cx: RequestContext) -> bytes:
            seen.append(len(s.handler.notes))
            return b"{}"

        s.handler.methods["permission"] = tool
        for i in range(50):
            await s.wire.send({"jsonrpc": "2.0", "method": "tool_call", "params": {"n": i}})
        await s.wire.send({"jsonrpc": "2.0", "id": 1, "method": "permission"})
        assert (await s.wire.message())["id"] == 1
        assert seen == [50]


async def test_a_notification_handler_may_call_the_peer_without_deadlock() -> None:
    a, b = Recorder(), Recorder()

    async def answer(request: Request, cx: RequestContext) -> bytes:
        return b'"pong"'

    b.methods["ping"] = answer
    results: list[bytes] = []
    all_done = asyncio.Event()
    left, right = pair(a, b)

    async def on_note(note: Notification, cx: NotificationContext) -> None:
        # The answer is read after more notifications; waiting for them would wait for this handler.
        results.append(bytes(await cx.peer.call("ping")))
        if len(results) == 3:
            all_done.set()

    a.on_note = on_note
    runs = [asyncio.create_task(left.run()), asyncio.create_task(right.run())]
    for _ in range(3):
        await right.peer.notify("tick")
    await asyncio.wait_for(all_done.wait(), WAIT)
    assert results == [b'"pong"'] * 3
    await _close(runs)


async def _close(runs: list[asyncio.Task[None]]) -> None:
    for task in runs:
        task.cancel()
    await asyncio.wait(runs, timeout=WAIT)


async def test_request_handlers_run_concurrently_and_may_await_their_own_calls() -> None:
    a, b = Recorder(), Recorder()
    both = asyncio.Event()
    started: list[str] = []

    async def first(request: Request, cx: RequestContext) -> bytes:
        started.append("first")
        if len(started) == 2:
            both.set()
        await both.wait()  # returns only once the second request runs too
        # A round trip to the peer from inside a request handler.
        return bytes(await cx.peer.call("echo", b"[1]"))

    async def echo(request: Request, cx: RequestContext) -> bytes:
        return bytes(request.params or b"null")

    b.methods["first"] = first
    b.methods["second"] = first
    a.methods["echo"] = echo
    left, right = pair(a, b)
    runs = [asyncio.create_task(left.run()), asyncio.create_task(right.run())]
    results = await asyncio.wait_for(asyncio.gather(left.peer.call("first"), left.peer.call("second")), WAIT)
    assert [bytes(r) for r in results] == [b"[1]", b"[1]"]
    await _close(runs)


async def test_a_full_notification_queue_stops_the_reader() -> None:
    """Backpressure: with no call pending, at most `notification_queue` notifications
    (and the one that found it full) are read ahead of the one being handled."""
    options = ConnectionOptions(notification_queue=4)
    async with Setup(options) as s:
        gaps: list[int] = []

        async def on_note(note: Notification, cx: NotificationContext) -> None:
            gaps.append(s.connection._reader._notifications_read - cx.index)

        s.handler.on_note = on_note
        lines = b"".join(b'{"jsonrpc":"2.0","method":"n","params":[%d]}\n' % i for i in range(2000))
        await s.wire.send_raw(lines)  # all of it is available to the reader at once
        await s.wire.send({"jsonrpc": "2.0", "id": 1, "method": "missing"})
        assert (await s.wire.message())["id"] == 1
        assert len(gaps) == 2000
        assert max(gaps) <= 4 + 1


async def test_the_backlog_lets_an_awaited_answer_through_a_full_queue() -> None:
    """While a call is pending, notifications are set aside (up to `backlog`) so that
    the answer behind them can still be read, even when a handler waits for it."""
    options = ConnectionOptions(notification_queue=2, backlog=100)
    async with Setup(options) as s:
        answered = asyncio.Event()

        async def on_note(note: Notification, cx: NotificationContext) -> None:
            if cx.index == 1:
                await answered.wait()  # the worker waits for an answer read after 50 more

        s.handler.on_note = on_note
        call = asyncio.create_task(s.peer.call("work", on_result=lambda result: answered.set()))
        request = await s.wire.message()
        for i in range(50):
            await s.wire.send({"jsonrpc": "2.0", "method": "update", "params": [i]})
        await s.wire.send({"jsonrpc": "2.0", "id": request["id"], "result": 7})
        assert bytes(await asyncio.wait_for(call, WAIT)) == b"7"
        assert len(s.handler.notes) == 50


async def test_request_slots_are_bounded() -> None:
    options = ConnectionOptions(max_concurrent_requests=2)
    async with Setup(options) as s:
        running = 0
        most = 0
        release = asyncio.Event()
        full = asyncio.Event()

        async def busy(request: Request, cx: RequestContext) -> bytes:
            nonlocal running, most
            running += 1
            most = max(most, running)
            if running == 2:
                full.set()
            await release.wait()
            running -= 1
            return b"null"

        s.handler.methods["busy"] = busy
        for i in range(10):
            await s.wire.send({"jsonrpc": "2.0", "id": i, "method": "busy"})
        await asyncio.wait_for(full.wait(), WAIT)
        release.set()
        ids = sorted([(await s.wire.message())["id"] for _ in range(10)])
        assert ids == list(range(10))
        assert most == 2


async def test_an_incoming_cancel_answers_minus_32800_and_stops_the_handler() -> None:
    async with Setup() as s:
        stopped = asyncio.Event()
        started = asyncio.Event()

        async def wait(request: Request, cx: RequestContext) -> bytes:
            started.set()
            try:
                await asyncio.get_running_loop().create_future()
            finally:
                stopped.set()
            return b"null"  # pragma: no cover - never reached

        s.handler.methods["wait"] = wait
        await s.wire.send({"jsonrpc": "2.0", "id": "w", "method": "wait"})
        await asyncio.wait_for(started.wait(), WAIT)
        await s.wire.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "w"}})
        answer = await s.wire.message()
        assert answer["id"] == "w" and answer["error"]["code"] == -32800
        assert stopped.is_set()
        # A cancel for an unknown id is ignored.
        await s.wire.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 99}})
        await s.wire.send({"jsonrpc": "2.0", "id": 2, "method": "missing"})
        assert (await s.wire.message())["id"] == 2


async def test_a_handler_that_handles_cancellation_sends_its_own_answer() -> None:
    async with Setup() as s:

        async def partial(request: Request, cx: RequestContext) -> bytes:
            cx.handle_cancellation()
            await cx.token.wait()
            return b'{"partial":true}'

        s.handler.methods["partial"] = partial
        await s.wire.send({"jsonrpc": "2.0", "id": 1, "method": "partial"})
        await s.wire.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}})
        assert await s.wire.message() == {"jsonrpc": "2.0", "id": 1, "result": {"partial": True}}


async def test_an_abandoned_call_sends_the_cancel_and_its_late_answer_is_reported() -> None:
    async with Setup() as s:
        call = asyncio.create_task(s.peer.call("slow"))
        request = await s.wire.message()
        call.cancel()
        cancel = await s.wire.message()
        assert cancel == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request["id"]}}
        with pytest.raises(asyncio.CancelledError):
            await call
        await s.wire.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32800, "message": "cancelled"}})
        await s.wire.send({"jsonrpc": "2.0", "id": 1, "method": "missing"})
        await s.wire.message()
        assert LateResponse(request["id"]) in s.events


async def test_a_cancel_token_sends_the_cancel_and_keeps_waiting_for_the_answer() -> None:
    async with Setup() as s:
        token = CancellationToken()
        call = asyncio.create_task(s.peer.call("slow", cancel=token))
        request = await s.wire.message()
        token.cancel()
        assert (await s.wire.message())["method"] == "$/cancel_request"
        await s.wire.send({"jsonrpc": "2.0", "id": request["id"], "result": {"partial": 1}})
        assert json.loads(bytes(await asyncio.wait_for(call, WAIT))) == {"partial": 1}


async def test_an_abort_token_and_a_timeout_abandon_the_call() -> None:
    async with Setup() as s:
        token = CancellationToken()
        call = asyncio.create_task(s.peer.call("slow", abort=token))
        request = await s.wire.message()
        token.cancel()
        with pytest.raises(CallAborted):
            await asyncio.wait_for(call, WAIT)
        assert (await s.wire.message())["params"] == {"requestId": request["id"]}
        with pytest.raises(CallTimeout):
            await s.peer.call("slow", timeout=0)
        sent = [await s.wire.message(), await s.wire.message()]
        assert sent[1] == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": sent[0]["id"]}}


async def test_bad_lines_are_answered_and_the_connection_stays_up() -> None:
    async with Setup() as s:
        await s.wire.send_raw(b"not json\n")
        assert await s.wire.message() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": "parse error: invalid JSON at line 1, column 2",
                "data": {"path": "$", "line": 1, "column": 2},
            },
        }
        await s.wire.send_raw(b'{"jsonrpc":"2.0","id":7}\n')
        answer = await s.wire.message()
        assert (answer["id"], answer["error"]["code"]) == (7, -32600)
        await s.wire.send_raw(b"[1,2]\n")
        assert (await s.wire.message())["error"]["code"] == -32600
        # An invalid response is never answered, only reported.
        await s.wire.send_raw(b'{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"x"}}\n')
        await s.wire.send({"jsonrpc": "2.0", "id": 8, "method": "missing"})
        assert (await s.wire.message())["id"] == 8
        assert sum(isinstance(e, InvalidMessage) for e in s.events) == 4


async def test_non_json_lines_can_be_skipped() -> None:
    async with Setup(ConnectionOptions(skip_non_json_lines=True)) as s:
        await s.wire.send_raw(b"starting up...\n")
        await s.wire.send({"jsonrpc": "2.0", "id": 1, "method": "missing"})
        assert (await s.wire.message())["id"] == 1
        assert NonJsonLineSkipped(14) in s.events


async def test_oversize_lines_are_skipped_answered_and_fail_their_call() -> None:
    async with Setup(ConnectionOptions(max_message_size=200)) as s:
        big = "x" * 5000
        await s.wire.send({"jsonrpc": "2.0", "id": 5, "method": "big", "params": {"blob": big}})
        answer = await s.wire.message()
        assert (answer["id"], answer["error"]["code"]) == (5, -32600)
        call = asyncio.create_task(s.peer.call("get"))
        request = await s.wire.message()
        await s.wire.send({"jsonrpc": "2.0", "id": request["id"], "result": {"blob": big}})
        with pytest.raises(ResponseTooLarge):
            await asyncio.wait_for(call, WAIT)
        await s.wire.send({"jsonrpc": "2.0", "id": 6, "method": "missing"})
        assert (await s.wire.message())["id"] == 6
        assert sum(isinstance(e, OversizeMessage) for e in s.events) == 2


async def test_handler_exceptions_become_minus_32603_and_are_reported() -> None:
    async with Setup() as s:

        async def boom(request: Request, cx: RequestContext) -> bytes:
            raise ValueError("bug")

        async def refuse(request: Request, cx: RequestContext) -> bytes:
            raise RequestError(4242, "no", b'{"why":1}')

        async def bad_note(note: Notification, cx: NotificationContext) -> None:
            raise KeyError("bug")

        s.handler.methods["boom"] = boom
        s.handler.methods["refuse"] = refuse
        s.handler.on_note = bad_note
        await s.wire.send({"jsonrpc": "2.0", "method": "note"})
        await s.wire.send({"jsonrpc": "2.0", "id": 1, "method": "boom"})
        answer = await s.wire.message()
        assert (answer["id"], answer["error"]["code"]) == (1, -32603)
        await s.wire.send({"jsonrpc": "2.0", "id": 2, "method": "refuse"})
        assert (await s.wire.message())["error"] == {"code": 4242, "message": "no", "data": {"why": 1}}
        assert any(isinstance(e, RequestHandlerFailed) and e.method == "boom" for e in s.events)
        assert any(isinstance(e, NotificationHandlerFailed) for e in s.events)


async def test_end_of_input_fails_pending_calls_at_once_and_later_ones_too() -> None:
    s = Setup()
    running = asyncio.create_task(s.connection.run())
    call = asyncio.create_task(s.peer.call("never"))
    await s.wire.message()
    s.wire.writer.close()
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(call, WAIT)
    await asyncio.wait_for(running, WAIT)
    with pytest.raises(ConnectionClosed):
        await s.peer.call("later")
    assert s.peer.is_closed
    assert InputClosed() in s.events
    assert await asyncio.wait_for(s.wire.closed(), WAIT)


async def test_requests_running_at_the_end_of_input_are_answered_cancelled() -> None:
    s = Setup()
    running = asyncio.create_task(s.connection.run())
    started = asyncio.Event()

    async def wait(request: Request, cx: RequestContext) -> bytes:
        started.set()
        await asyncio.get_running_loop().create_future()
        return b"null"  # pragma: no cover

    s.handler.methods["wait"] = wait
    await s.wire.send({"jsonrpc": "2.0", "id": 1, "method": "wait"})
    await asyncio.wait_for(started.wait(), WAIT)
    s.wire.writer.close()
    assert (await s.wire.message())["error"]["code"] == -32800
    await asyncio.wait_for(running, WAIT)


async def test_work_a_notification_handler_spawns_ends_before_run_returns() -> None:
    s = Setup()
    running = asyncio.create_task(s.connection.run())
    gate = asyncio.Event()
    done: list[bool] = []

    async def later() -> None:
        await gate.wait()
        for _ in range(50):
            await asyncio.sleep(0)
        done.append(True)

    async def on_note(note: Notification, cx: NotificationContext) -> None:
        cx.spawn(later())

    s.handler.on_note = on_note
    await s.wire.send({"jsonrpc": "2.0", "method": "later"})
    s.wire.writer.close()
    gate.set()  # the work can only finish after this, and `run()` only after the work
    await asyncio.wait_for(running, WAIT)
    assert done == [True]


async def test_work_a_notification_handler_spawns_is_cancelled_when_the_grace_runs_out() -> None:
    s = Setup(ConnectionOptions(shutdown_grace=0.1))
    running = asyncio.create_task(s.connection.run())
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            cancelled.set()

    async def on_note(note: Notification, cx: NotificationContext) -> None:
        cx.spawn(forever())

    s.handler.on_note = on_note
    await s.wire.send({"jsonrpc": "2.0", "method": "forever"})
    s.wire.writer.close()
    await asyncio.wait_for(running, WAIT)
    assert cancelled.is_set()


async def test_work_a_notification_handler_spawns_that_raises_is_reported() -> None:
    async with Setup() as s:

        async def fails() -> None:
            raise ValueError("no")

        async def on_note(note: Notification, cx: NotificationContext) -> None:
            cx.spawn(fails())

        s.handler.on_note = on_note
        await s.wire.send({"jsonrpc": "2.0", "method": "fails"})
    # `run()` returned, so the work ended, and its failure was reported.
    assert any(isinstance(e, NotificationHandlerFailed) and e.method == "fails" for e in s.events)


async def test_a_write_failure_ends_the_connection_with_a_transport_error() -> None:
    s = Setup()
    running = asyncio.create_task(s.connection.run())
    s.wire.reader.close()  # the peer stopped reading: the next write fails
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(s.peer.call("x"), WAIT)
    with pytest.raises(TransportError):
        await asyncio.wait_for(running, WAIT)


async def test_requests_are_seen_in_read_order_with_their_positions() -> None:
    async with Setup() as s:
        positions: list[tuple[int, int]] = []

        async def note(request: Request, cx: RequestContext) -> bytes:
            positions.append((cx.index, cx.notifications_before))
            return b"null"

        s.handler.methods["r"] = note
        await s.wire.send({"jsonrpc": "2.0", "id": 1, "method": "r"})
        await s.wire.send({"jsonrpc": "2.0", "method": "n"})
        await s.wire.send({"jsonrpc": "2.0", "id": 2, "method": "r"})
        await s.wire.message()
        await s.wire.message()
        assert s.handler.read == [(1, "r"), (2, "r")]
        assert sorted(positions) == [(1, 0), (2, 1)]


async def test_flush_waits_until_everything_queued_is_written() -> None:
    async with Setup() as s:
        for i in range(100):
            await s.peer.notify("n", b"[%d]" % i)
        await asyncio.wait_for(s.peer.flush(), WAIT)
        assert len(s.wire.reader._pipe.buffer) > 0
        assert [(await s.wire.message())["params"][0] for _ in range(100)] == list(range(100))


async def test_a_peer_error_answer_is_an_rpc_error() -> None:
    async with Setup() as s:
        call = asyncio.create_task(s.peer.call("x"))
        request = await s.wire.message()
        await s.wire.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32002, "message": "gone"}})
        with pytest.raises(RpcError) as raised:
            await asyncio.wait_for(call, WAIT)
        assert raised.value.error.code == -32002


async def test_raw_results_pass_through_untouched() -> None:
    async with Setup() as s:

        async def echo(request: Request, cx: RequestContext) -> Raw:
            assert request.params is not None
            return request.params

        s.handler.methods["echo"] = echo
        await s.wire.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{ "a" : [1, 2.50] }}\n')
        assert await s.wire.line() == b'{"jsonrpc":"2.0","id":1,"result":{ "a" : [1, 2.50] }}'
