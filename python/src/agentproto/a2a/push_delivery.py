"""Push delivery: the worker that sends a task's events to its push configs.

A commit queues each of its events once per config the task has, in the same atomic
change (the store's outbox; see `agentproto.a2a.store`). `PushWorker` claims due
deliveries under a lease, POSTs each, and records the outcome:

| Attempt's result | Outcome |
|---|---|
| 2xx | delivered (removed) |
| 408, 429, 5xx, a timeout, a connection failure | tried again after a delay doubling from `first_delay` up to `max_delay` (or the `Retry-After` seconds of a 429/503, capped), until `max_attempts` |
| another status (3xx included: redirects are not followed) | given up at once |
| a target the SSRF guard refuses, a token or credentials unusable in a header | given up at once |

A delivery given up is logged (logger `agentproto.a2a.push`, warning) and removed. The
guarantee is at least once: a worker that stops mid-attempt leaves its claims, which come
due again when their lease ends, so receivers see duplicates and should deduplicate (the
task id and the event identify one). The deliveries of one task and config claimed
together are attempted one at a time in sequence order; a retry can arrive after the
events that followed it.

The request: `POST` to the config's URL, `Content-Type: application/a2a+json`,
`A2A-Version: 1.0`, the event's canonical JSON as the body, the config's token in
`X-A2A-Notification-Token` and `A2A-Notification-Token`, and `Authorization: {scheme}
{credentials}` when the config has authentication. Connections dial the address the guard
checked (`PushGuard.resolve`), so a name cannot be re-pointed between check and send.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from agentproto.a2a.client.http import HttpClient, HttpError
from agentproto.a2a.codec import encode
from agentproto.a2a.push_guard import PushGuard, Refused
from agentproto.a2a.store import Delivery, Store, StoreError

__all__ = ["PushOptions", "PushWorker"]

log = logging.getLogger("agentproto.a2a.push")

_RETRIED = frozenset({408, 429})


@dataclass(frozen=True, slots=True)
class PushOptions:
    """How the push worker sends (see the module documentation)."""

    max_attempts: int = 6
    first_delay: float = 0.5
    """Seconds before the second attempt; each later delay doubles."""
    max_delay: float = 60.0
    request_timeout: float = 10.0
    """Seconds one attempt may take, connecting included."""
    poll_interval: float = 0.2
    """Seconds between looks at the outbox when it had nothing due (`wake` looks at once)."""
    batch: int = 64
    """Deliveries claimed at a time."""
    lease: float = 60.0
    """Seconds a claim holds before another worker may take the delivery."""
    guard: PushGuard = field(default_factory=PushGuard)


@dataclass(slots=True)
class _Outcome:
    retry_after: float | None
    """`None`: done (delivered or given up); seconds otherwise."""
    delivered: bool = False
    error: str = ""


class PushWorker:
    """Drains a store's outbox (see the module documentation). `run` until cancelled, or
    `run_once` for one pass; `close` releases its connections."""

    def __init__(self, store: Store, options: PushOptions | None = None, *, clock: Callable[[], float] = time.time):
        self.store = store
        self.options = options or PushOptions()
        self.clock = clock
        self.http = HttpClient(resolve=self.options.guard.resolve)
        self.delivered = 0
        self.given_up = 0
        self._wake: asyncio.Event | None = None

    def wake(self) -> None:
        """Looks at the outbox now rather than at the next poll."""
        if self._wake is not None:
            self._wake.set()

    async def run(self) -> None:
        """Delivers until cancelled."""
        self._wake = asyncio.Event()
        while True:
            try:
                worked = await self.run_once()
            except StoreError as e:
                log.warning("push: the store failed: %s", e)
                worked = 0
            if worked:
                continue
            try:
                async with asyncio.timeout(self.options.poll_interval):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()

    async def run_once(self) -> int:
        """Claims what is due and attempts it; how many deliveries were attempted."""
        now_ms = int(self.clock() * 1000)
        claimed = await self.store.claim_deliveries(now_ms, self.options.batch, int(self.options.lease * 1000))
        # One task and config at a time, in sequence order; different ones side by side.
        queues: dict[tuple[str, str, str], list[Delivery]] = {}
        for delivery in sorted(claimed, key=lambda d: d.seq):
            queues.setdefault((delivery.key.tenant, delivery.key.id, delivery.config.id), []).append(delivery)
        await asyncio.gather(*(self._deliver_in_order(q) for q in queues.values()))
        return len(claimed)

    async def _deliver_in_order(self, deliveries: list[Delivery]) -> None:
        for delivery in deliveries:
            outcome = await self._attempt(delivery)
            retry_at: int | None = None
            if outcome.delivered:
                self.delivered += 1
            elif outcome.retry_after is not None and delivery.attempts + 1 < self.options.max_attempts:
                retry_at = int((self.clock() + outcome.retry_after) * 1000)
            else:
                self.given_up += 1
                log.warning(
                    "push: gave up delivering event %d of task %r to config %r (%s) after %d attempt(s): %s",
                    delivery.seq,
                    delivery.key.id,
                    delivery.config.id,
                    delivery.config.url,
                    delivery.attempts + 1,
                    outcome.error,
                )
            try:
                await self.store.finish_delivery(delivery.id, retry_at)
            except StoreError as e:
                log.warning("push: cannot record delivery %d: %s", delivery.id, e)

    def _backoff(self, attempts: int) -> float:
        return float(min(self.options.max_delay, self.options.first_delay * (2**attempts)))

    async def _attempt(self, delivery: Delivery) -> _Outcome:
        config = delivery.config
        headers = {"Content-Type": "application/a2a+json", "A2A-Version": "1.0"}
        if config.token:
            headers["X-A2A-Notification-Token"] = config.token
            headers["A2A-Notification-Token"] = config.token
        if config.authentication is not msgspec.UNSET:
            headers["Authorization"] = f"{config.authentication.scheme} {config.authentication.credentials}".strip()
        if any(c in value for value in headers.values() for c in "\r\n\0"):
            return _Outcome(None, error="the config's token or credentials hold a line break (unusable in a header)")
        backoff = self._backoff(delivery.attempts)
        try:
            async with asyncio.timeout(self.options.request_timeout):
                response = await self.http.request("POST", config.url, headers, encode(delivery.event))
                try:
                    await response.read(64 << 10)
                except HttpError:
                    response.close()
        except Refused as e:
            return _Outcome(None, error=f"refused by the SSRF guard: {e}")
        except ValueError as e:  # not an http(s) URL
            return _Outcome(None, error=str(e))
        except (HttpError, TimeoutError) as e:
            return _Outcome(backoff, error=str(e) or "timed out")
        status = response.status
        if 200 <= status < 300:
            return _Outcome(None, delivered=True)
        if status in _RETRIED or status >= 500:
            wait = backoff
            if status in (429, 503):
                wait = _retry_after(response.header("retry-after"), backoff, self.options.max_delay)
            return _Outcome(wait, error=f"HTTP {status}")
        return _Outcome(None, error=f"HTTP {status}")

    async def close(self) -> None:
        await self.http.close()


def _retry_after(value: str | None, default: float, cap: float) -> float:
    if value is None:
        return default
    try:
        return min(cap, max(0.0, float(int(value.strip()))))
    except ValueError:
        return default
