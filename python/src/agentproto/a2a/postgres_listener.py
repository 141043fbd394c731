"""The receiving side of the PostgreSQL store's notices: one connection per server
process, outside the pool, that `LISTEN`s on the events channel and the control channel
(`agentproto.a2a.postgres_store`), and reconnects with backoff when it drops.

What it hears it hands to callbacks: `on_events(key)` for a commit's notice (`None`: a
notice naming no task, or one that does not parse — re-read every task you follow);
`on_control(payload)` for a message between replicas; `on_listening()` each time it
listens again (at start-up and after a reconnection): notices sent while it was away are
lost, so whoever follows tasks reads their logs once then. Callbacks run on the event loop
and must not block.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from agentproto.a2a.postgres_store import CONTROL_CHANNEL, NOTIFY_CHANNEL, driver
from agentproto.a2a.store import TaskKey

__all__ = ["PgListener", "parse_notice"]

LOGGER = logging.getLogger("agentproto.a2a")


def parse_notice(payload: str) -> list[TaskKey | None]:
    """The tasks an events notice names: one object or an array of them (the Rust store
    sends arrays for a batch); `[None]` when it names none or does not parse."""
    try:
        value = json.loads(payload)
    except ValueError:
        return [None]
    items = value if isinstance(value, list) else [value]
    keys: list[TaskKey | None] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("tenant"), str) and isinstance(item.get("id"), str):
            keys.append(TaskKey(item["tenant"], item["id"]))
        else:
            return [None]
    return keys or [None]


class PgListener:
    """The listening connection (see the module documentation). `start` begins; `ready`
    is set once it listens; `close` ends it."""

    def __init__(
        self,
        dsn: str,
        on_events: Callable[[TaskKey | None], None],
        on_control: Callable[[str], None],
        on_listening: Callable[[], None] = lambda: None,
        *,
        backoff: tuple[float, float] = (0.1, 2.0),
    ) -> None:
        self.dsn = dsn
        self.on_events = on_events
        self.on_control = on_control
        self.on_listening = on_listening
        self.backoff = backoff
        self.ready = asyncio.Event()
        """Set while the connection listens."""
        self._task: asyncio.Task[None] | None = None
        self._connection: Any = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="agentproto-a2a-pg-listener")

    async def _run(self) -> None:
        asyncpg = driver()
        delay = self.backoff[0]
        while True:
            lost = asyncio.Event()
            try:
                connection = await asyncpg.connect(
                    self.dsn, timeout=10, server_settings={"application_name": "agentproto-a2a-py-listener"}
                )
                self._connection = connection
                connection.add_termination_listener(lambda _c, lost=lost: lost.set())
                await connection.add_listener(NOTIFY_CHANNEL, self._heard)
                await connection.add_listener(CONTROL_CHANNEL, self._heard)
            except Exception as e:  # noqa: BLE001 - whatever failed, listen again after the backoff
                LOGGER.warning(
                    "a2a postgres listener: cannot listen (%s); again in %.1f s", e or type(e).__name__, delay
                )
                await self._drop()
                await asyncio.sleep(delay)  # backoff before reconnecting, not synchronisation
                delay = min(delay * 2, self.backoff[1])
                continue
            delay = self.backoff[0]
            self.ready.set()
            self.on_listening()
            await lost.wait()
            self.ready.clear()
            self._connection = None
            LOGGER.warning("a2a postgres listener: the connection closed; listening again")

    def _heard(self, _connection: Any, _pid: int, channel: str, payload: str) -> None:
        try:
            if channel == NOTIFY_CHANNEL:
                for key in parse_notice(payload):
                    self.on_events(key)
            else:
                self.on_control(payload)
        except Exception:  # a callback's bug must not end the listener
            LOGGER.exception("a2a postgres listener: a callback failed")

    async def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                await asyncio.wait_for(connection.close(), 5)
            except Exception:  # noqa: BLE001 - closing a broken connection: nothing to do
                connection.terminate()

    async def close(self) -> None:
        """Stops listening and closes the connection."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait([task], timeout=5)
        self.ready.clear()
        await self._drop()
