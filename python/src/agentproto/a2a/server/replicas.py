"""Turn leases, the sweep that ends orphaned turns, and — on the PostgreSQL store — live
events and cancels across server processes (replicas) sharing one database.

**Leases.** A task whose turn runs holds a lease naming this process (`Tasks.owner`)
until a time; every commit of the turn sets it, and a renewal round every third of
`ServerOptions.turn_lease` extends the leases of every turn running here. A process that
dies stops renewing. A message to a task whose turn runs in another live server is taken
(a turn of its own here), as one to a turn running here is. Every half lease, each process
*sweeps*: a task whose lease has expired, and whose turn does not run here, is failed
through an ordinary commit checked against the version it read (and, on PostgreSQL,
the lease it read: an owner that renewed late keeps its turn) — so when several
replicas sweep at once exactly one ends it, and its FAILED event reaches every
subscriber like any other. Any store works (on SQLite, a restarted server fails the
turns its previous run left).

**Retention.** With `ServerOptions.retain_terminal`, a round every quarter of it (at most a
minute) deletes the terminal tasks older than that, on a store that can (`purge_terminal`:
SQLite, PostgreSQL — where concurrent purges of several replicas split the work).

**Events across replicas** (PostgreSQL). Each commit with events notifies the database's
listeners (`agentproto.a2a.postgres_store`); a `PgListener` per process turns the notice
into a wake-up of that process's readers of the task (`EventHub.publish`), who read the
new events from the store by sequence number — order and completeness come from the log,
however notices arrive. Each time the listener listens again, every reader reads once.

**Cancel across replicas** (PostgreSQL). `CancelTask` of a task whose turn runs in
another live replica (its lease names it and has not expired) sends that replica a
request on the control channel — the Rust server's messages,
`{"kind":"cancel","tenant","id","to","from","request"}` answered by
`{"kind":"canceled","to","request","handled"[,"error"]}` — and waits for the answer at
most `ServerOptions.cancel_wait` seconds. The owner cancels its turn as a local cancel
would. When the owner has no such turn, or does not answer in time, the requester
cancels the task itself through an ordinary commit (when unanswered, the CANCELED
event's metadata names the replica, as the Rust server's does).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, Any

import msgspec

from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.generated.errors import kind_from_reason
from agentproto.a2a.generated.v1 import Message, Part, Role, TaskState, TaskStatus
from agentproto.a2a.server.core import new_id
from agentproto.a2a.store import Commit, Conflict, StoreError, TaskKey, TaskRecord
from agentproto.a2a.tasks import StatusChange, apply_change, is_active, now_timestamp

if TYPE_CHECKING:
    from agentproto.a2a.postgres_listener import PgListener
    from agentproto.a2a.postgres_store import PostgresStore
    from agentproto.a2a.server.turns import Core

__all__ = ["Replicas"]

LOGGER = logging.getLogger("agentproto.a2a")

SWEEP_BATCH = 100
"""The most expired leases one sweep round looks at."""
RETAIN_BATCH = 500
"""The most tasks one retention transaction deletes."""

INTERRUPTED = (
    "The turn working on this task was interrupted: the server running it stopped (a restart, or a lost replica)"
    " before it finished. Turns are not run again; send the request again to start a new task."
)
"""The message of the FAILED status a sweep writes (the Rust server's words)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


class Replicas:
    """This process's lease renewal and sweep, and its end of the replica channels (see
    the module documentation). Made by the core; `start` and `stop` follow the server's."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.owner = core.tasks.owner
        self.lease_s = core.options.turn_lease
        self._loops: list[asyncio.Task[None]] = []
        self._pending: dict[str, asyncio.Future[tuple[bool, A2aError | None]]] = {}
        self._handling: set[asyncio.Task[None]] = set()
        self.listener: PgListener | None = None
        self.swept = 0
        """Orphaned turns this process has failed."""

    @property
    def _postgres(self) -> PostgresStore | None:
        from agentproto.a2a.postgres_store import PostgresStore

        store = self.core.store
        return store if isinstance(store, PostgresStore) else None

    def start(self) -> None:
        """Starts renewing, sweeping and (PostgreSQL) listening; again is a no-op."""
        if self._loops:
            return
        loop = asyncio.get_running_loop()
        self._loops = [
            loop.create_task(self._every(self.lease_s / 3, self.renew), name="agentproto-a2a-lease-renewal"),
            loop.create_task(self._every(self.lease_s / 2, self.sweep), name="agentproto-a2a-lease-sweep"),
        ]
        retain = self.core.options.retain_terminal
        if retain is not None and hasattr(self.core.store, "purge_terminal"):
            every = min(max(retain / 4, 0.05), 60.0)
            self._loops.append(loop.create_task(self._every(every, self.retain), name="agentproto-a2a-retention"))
        store = self._postgres
        if store is not None and self.listener is None:
            from agentproto.a2a.postgres_listener import PgListener

            hub = self.core.hub
            self.listener = PgListener(
                store.dsn,
                on_events=lambda key: hub.wake_all() if key is None else hub.publish(key),
                on_control=self._control,
                on_listening=hub.wake_all,
            )
            self.listener.start()

    async def stop(self) -> None:
        loops, self._loops = self._loops, []
        for task in [*loops, *self._handling]:
            task.cancel()
        if loops or self._handling:
            await asyncio.wait([*loops, *self._handling], timeout=5)
        if self.listener is not None:
            await self.listener.close()
            self.listener = None

    async def _every(self, seconds: float, round: Any) -> None:
        while True:
            await asyncio.sleep(max(0.02, seconds))  # a periodic round, not synchronisation
            try:
                await round()
            except StoreError as e:
                LOGGER.warning("a2a %s: %s (trying again next round)", round.__name__, e)

    # --- leases ----------------------------------------------------------------------

    async def renew(self) -> None:
        """Extends the lease of every turn running here."""
        keys = list(self.core.running)
        if keys:
            await self.core.store.renew_leases(self.owner, keys, _now_ms() + int(self.lease_s * 1000))

    async def sweep(self) -> int:
        """Fails the tasks whose lease expired and whose turn does not run here; returns
        how many this round ended."""
        ended = 0
        now = _now_ms()
        for key in await self.core.store.expired_leases(now, SWEEP_BATCH):
            if key in self.core.running:
                continue  # running here: the renewal is late, not the turn dead
            record = await self.core.store.get_task(key)
            if record is None or record.terminal or record.lease is None or record.lease.until_ms >= now:
                continue
            if await self._fail_orphan(record):
                ended += 1
        self.swept += ended
        return ended

    async def _fail_orphan(self, record: TaskRecord) -> bool:
        """Fails the task of an expired lease (the Rust server's status, text and
        metadata); a task no turn works on (not SUBMITTED or WORKING) only loses the lease."""
        lease = record.lease
        assert lease is not None
        if not is_active(record.task.status.state):
            try:
                await self.core.store.commit(Commit(record.key, record.task, record.version, (), "clear"))
            except Conflict:
                pass
            return False
        message = Message(
            message_id=new_id(),
            role=Role.AGENT,
            parts=[Part(text=INTERRUPTED)],
            task_id=record.key.id,
            context_id=record.task.context_id,
        )
        status = TaskStatus(state=TaskState.FAILED, message=message, timestamp=now_timestamp())
        metadata = {"agentproto": {"interrupted": {"replica": lease.owner, "leaseUntilMs": lease.until_ms}}}
        change = StatusChange(status, msgspec.Raw(json.dumps(metadata).encode()))
        task, event = apply_change(record.task, change)
        events = [] if event is None else [(event, True)]
        commit = Commit(record.key, task, record.version, events, "clear")
        store = self._postgres
        try:
            if store is not None:
                await store.commit(commit, lease_expired_before=lease.until_ms + 1)
            else:
                await self.core.store.commit(commit)
        except Conflict:
            return False  # another replica (or the turn itself) wrote first, or the lease was renewed
        self.core.hub.publish(record.key)
        return True

    def runs_elsewhere(self, record: TaskRecord) -> bool:
        """Whether `record`'s turn runs in another server whose lease is live."""
        lease = record.lease
        return lease is not None and lease.owner not in ("", self.owner) and lease.until_ms >= _now_ms()

    async def retain(self) -> int:
        """Retention: deletes the terminal tasks older than `ServerOptions.retain_terminal`
        (in batches, each its own transaction); returns how many."""
        retain = self.core.options.retain_terminal
        purge = getattr(self.core.store, "purge_terminal", None)
        if retain is None or purge is None:
            return 0
        before = _now_ms() - int(retain * 1000)
        total = 0
        while True:
            purged: int = await purge(before, RETAIN_BATCH)
            total += purged
            if purged < RETAIN_BATCH:
                return total

    # --- cancel across replicas -------------------------------------------------------

    async def cancel_elsewhere(self, record: TaskRecord) -> bool:
        """Asks the replica running `record`'s turn to cancel it: `True` once the task is
        canceled (by that replica, or here when it did not answer within `cancel_wait`: the
        CANCELED event's metadata names it, `{"agentproto":{"cancelUnanswered":{"replica":…}}}`),
        `False` when the caller should cancel the task itself (no live lease of another
        replica, or that replica has no such turn).

        Raises:
            A2aError: the owner's cancel failed with it.
        """
        store = self._postgres
        lease = record.lease
        if store is None or lease is None or not self.runs_elsewhere(record):
            return False
        request = f"{self.owner}:{id(record)}:{_now_ms()}"
        future: asyncio.Future[tuple[bool, A2aError | None]] = asyncio.get_running_loop().create_future()
        self._pending[request] = future
        try:
            payload = {"kind": "cancel", "tenant": record.key.tenant, "id": record.key.id}
            await store.notify_control(
                json.dumps({**payload, "to": lease.owner, "from": self.owner, "request": request})
            )
            handled, error = await asyncio.wait_for(future, self.core.options.cancel_wait)
        except TimeoutError:
            LOGGER.warning("a2a: replica %r did not answer a cancel of task %s in time", lease.owner, record.key.id)
            # Canceled here; the CANCELED event says whose turn did not answer (as Rust's).
            metadata = {"agentproto": {"cancelUnanswered": {"replica": lease.owner}}}
            change = StatusChange(TaskStatus(state=TaskState.CANCELED), msgspec.Raw(json.dumps(metadata).encode()))
            await self.core.tasks.apply(record.key, [change])
            return True
        finally:
            self._pending.pop(request, None)
        if error is not None:
            raise error
        return handled

    def _control(self, payload: str) -> None:
        try:
            message = json.loads(payload)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("to") != self.owner:
            return
        kind, request = message.get("kind"), message.get("request")
        if not isinstance(request, str):
            return
        if kind == "canceled":
            future = self._pending.get(request)
            if future is not None and not future.done():
                handled = message.get("handled") is True
                error = None
                found = message.get("error")
                if handled and isinstance(found, dict):
                    reason = found.get("reason")
                    error_kind = kind_from_reason(reason) if isinstance(reason, str) else None
                    error = A2aError(error_kind or ErrorKind.INTERNAL, str(found.get("message", "")))
                future.set_result((handled, error))
        elif kind == "cancel" and isinstance(message.get("tenant"), str) and isinstance(message.get("id"), str):
            key = TaskKey(message["tenant"], message["id"])
            reply_to = message.get("from")
            if isinstance(reply_to, str):
                task = asyncio.get_running_loop().create_task(self._cancel_here(key, reply_to, request))
                self._handling.add(task)
                task.add_done_callback(self._handling.discard)

    async def _cancel_here(self, key: TaskKey, reply_to: str, request: str) -> None:
        answer: dict[str, Any] = {"kind": "canceled", "to": reply_to, "request": request}
        running = self.core.running.get(key)
        if running is None:
            answer["handled"] = False
        else:
            answer["handled"] = True
            try:
                await self.core.cancel_running(running)
            except A2aError as e:
                answer["error"] = {"reason": e.reason, "message": e.message}
        store = self._postgres
        if store is not None:
            try:
                await store.notify_control(json.dumps(answer))
            except StoreError as e:
                LOGGER.warning("a2a: cannot answer a cancel request of task %s: %s", key.id, e)
