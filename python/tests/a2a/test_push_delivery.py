"""Push delivery against a local receiver (allowed through the SSRF guard's option): each
event to each config with its headers, in order; retries with backoff; giving up; the
guard refusing at delivery; and the server sending a task's events on its own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import pytest

from agentproto.a2a.client import A2aClient
from agentproto.a2a.demo import DemoAgent
from agentproto.a2a.generated.v1 import (
    AuthenticationInfo,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from agentproto.a2a.memory_store import MemoryStore
from agentproto.a2a.postgres_store import PostgresStore
from agentproto.a2a.push_delivery import PushOptions, PushWorker
from agentproto.a2a.push_guard import PushGuard
from agentproto.a2a.sqlite_store import SqliteStore
from agentproto.a2a.store import Commit, PushConfigRecord, Store, TaskKey
from tests.a2a import postgres_cluster
from tests.a2a.postgres_cluster import postgres_session  # noqa: F401  (stops the server at the end)
from tests.a2a.test_server import send, serve, with_client

LOCAL = PushGuard(allow_loopback=True)
K = TaskKey("", "t")


@dataclass
class Receiver:
    """An HTTP/1.1 receiver on 127.0.0.1: records each request, answers the next scripted
    status (200 once the script is used up)."""

    statuses: list[int] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    url: str = ""

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append((lines[0].split(" ")[1], headers, body))
                self.arrived.set()
                status = self.statuses.pop(0) if self.statuses else 200
                writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n".encode())
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, _, body in self.requests]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def status(state: TaskState) -> StreamResponse:
    update = TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(state=state))
    return StreamResponse(status_update=update)


async def memory(_: Path) -> Store:
    return MemoryStore()


async def sqlite(folder: Path) -> Store:
    return await SqliteStore.open(str(folder / "push.db"))


async def postgres(_: Path) -> Store:
    return await PostgresStore.open(postgres_cluster.database(), max_connections=2)


STORES: dict[str, Callable[[Path], Awaitable[Store]]] = {"memory": memory, "sqlite": sqlite, "postgres": postgres}


WORKING = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))


def run(body: Coroutine[Any, Any, None]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(20):
            await body

    asyncio.run(bounded())


async def _task_with_config(store: Store, url: str, **config: Any) -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    await store.commit(Commit(K, task, None, [(StreamResponse(task=task), False)]))
    push = TaskPushNotificationConfig(id="p", task_id="t", url=url, **config)
    await store.put_push_config(PushConfigRecord(K, push))


@pytest.mark.parametrize("store_name", sorted(STORES))
def test_each_event_goes_to_the_config_in_order_with_its_headers(store_name: str, tmp_path: Path) -> None:
    async def main() -> None:
        store = await STORES[store_name](tmp_path)
        worker = PushWorker(store, PushOptions(guard=LOCAL))
        try:
            async with Receiver() as receiver:
                auth = AuthenticationInfo(scheme="Bearer", credentials="secret")
                await _task_with_config(store, receiver.url + "/hook", token="tok", authentication=auth)
                done = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED))
                events = [(status(TaskState.WORKING), False), (status(TaskState.COMPLETED), True)]
                await store.commit(Commit(K, done, 1, events))
                assert await worker.run_once() == 2
                assert [r[0] for r in receiver.requests] == ["/hook", "/hook"]
                states = [e["statusUpdate"]["status"]["state"] for e in receiver.events()]
                assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
                headers = receiver.requests[0][1]
                assert headers["content-type"] == "application/a2a+json" and headers["a2a-version"] == "1.0"
                assert headers["x-a2a-notification-token"] == "tok" == headers["a2a-notification-token"]
                assert headers["authorization"] == "Bearer secret"
                assert await worker.run_once() == 0 and worker.delivered == 2
        finally:
            await worker.close()
            await store.close()

    run(main())


@pytest.mark.parametrize("store_name", sorted(STORES))
def test_failures_are_retried_with_backoff_and_given_up_on(store_name: str, tmp_path: Path) -> None:
    async def main() -> None:
        store = await STORES[store_name](tmp_path)
        clock = Clock()
        worker = PushWorker(store, PushOptions(guard=LOCAL, first_delay=1.0, max_attempts=3), clock=clock)
        try:
            async with Receiver(statuses=[503, 500, 404]) as receiver:
                await _task_with_config(store, receiver.url)
                await store.commit(Commit(K, WORKING, 1, [(status(TaskState.WORKING), False)]))
                assert await worker.run_once() == 1  # 503: again after 1 s
                assert await worker.run_once() == 0
                clock.now += 1.0
                assert await worker.run_once() == 1  # 500: again after 2 s
                clock.now += 1.0
                assert await worker.run_once() == 0
                clock.now += 1.0
                assert await worker.run_once() == 1  # the third and last attempt
                assert len(receiver.requests) == 3 and worker.given_up == 1 and worker.delivered == 0
                clock.now += 100
                assert await worker.run_once() == 0
        finally:
            await worker.close()
            await store.close()

    run(main())


def test_a_client_error_is_given_up_at_once_and_the_guard_refuses_at_delivery(tmp_path: Path) -> None:
    async def main() -> None:
        store = MemoryStore()
        worker = PushWorker(store, PushOptions(guard=LOCAL))
        strict = PushWorker(store, PushOptions())  # loopback refused
        try:
            async with Receiver(statuses=[404]) as receiver:
                await _task_with_config(store, receiver.url)
                await store.commit(Commit(K, WORKING, 1, [(status(TaskState.WORKING), False)]))
                assert await worker.run_once() == 1 and worker.given_up == 1
                await store.commit(Commit(K, WORKING, 2, [(status(TaskState.WORKING), False)]))
                assert await strict.run_once() == 1 and strict.given_up == 1
                assert len(receiver.requests) == 1
                assert await worker.run_once() == 0
                bad = TaskPushNotificationConfig(id="q", task_id="t", url=receiver.url, token="a\r\nX-Injected: 1")
                await store.put_push_config(PushConfigRecord(K, bad))
                await store.commit(Commit(K, WORKING, 3, [(status(TaskState.WORKING), False)]))
                assert await worker.run_once() == 2  # to "p" (200) and to "q" (given up, not sent)
                assert worker.given_up == 2 and len(receiver.requests) == 2
                assert all("x-injected" not in r[1] for r in receiver.requests)
        finally:
            await worker.close()
            await strict.close()

    run(main())


def test_the_server_sends_a_tasks_events_to_its_config() -> None:
    async def main_receiver() -> None:
        async with Receiver() as receiver:
            with serve(DemoAgent(0.05), push_guard=LOCAL) as server:

                async def body(client: A2aClient) -> None:
                    config = TaskPushNotificationConfig(url=receiver.url + "/events", token="tok")
                    sent = await client.send_message(send("hello", task_push_notification_config=config))
                    assert isinstance(sent.task, Task) and sent.task.status.state is TaskState.COMPLETED

                await asyncio.to_thread(with_client, server, body)
                while not any(b"TASK_STATE_COMPLETED" in r[2] for r in receiver.requests):
                    receiver.arrived.clear()
                    await receiver.arrived.wait()
            assert all(r[1]["x-a2a-notification-token"] == "tok" for r in receiver.requests)

    run(main_receiver())
