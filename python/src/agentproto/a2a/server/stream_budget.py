"""The server-wide stream budget: a bound on the bytes of stream events held for
subscribers, all streams together (issue 35, item 1; `agentproto serve --stream-budget-mib`
is the same idea).

An SSE stream charges each encoded frame from the moment it is made until the connection
has written it out: `send` returned and, for a frame larger than the transport's
low-water mark, a following empty `send` returned too (an ASGI server awaits its flow
control there, so the frame no longer sits in the transport's buffer). A client that stops
reading therefore holds its unwritten frame against the budget.

When a frame does not fit, the stream holding the most is cut off: when that is another
stream, one whose client has not read its frame, its connection is closed (the only way
to free what the transport holds) and the frame is charged; when it is the stream itself,
or no stream holds anything (or the server offers no way to close a connection), the frame
is refused and its stream ends with `event: lagged`. Either client resumes from the log.
Healthy readers are charged while a frame is being written, so a budget of about two of
the largest events per reader expected at once leaves them alone.

Closing a connection needs the ASGI server's help: the scope extension `agentproto.close`
(`{"close": callable}`), which `agentproto.a2a.server.uvicorn_limits` adds on uvicorn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["DRAIN_ABOVE", "Holder", "StreamBudget"]

DRAIN_ABOVE = 16 << 10
"""A frame larger than this is held until an empty `send` after it returns (asyncio's
transports resume writing below 16 KiB; uvicorn awaits that before each `send`)."""


@dataclass(slots=True, eq=False)
class Holder:
    """One stream's share of the budget."""

    close: Callable[[], object] | None = None
    """Closes the stream's connection (`None`: the server offers no way)."""
    held: int = 0
    """Bytes charged to this stream now."""
    cut: bool = False
    """Its connection was closed by the budget."""


@dataclass(slots=True)
class StreamBudget:
    """Bytes held for subscribers, against `capacity`. Single-threaded (one event loop)."""

    capacity: int
    """The most bytes held at once (`ServerOptions.stream_budget`)."""
    held: int = 0
    """Bytes charged now."""
    peak: int = 0
    """The most bytes ever charged at once."""
    cut: int = 0
    """Streams cut off: refused a frame, or closed for another's."""
    _holding: set[Holder] = field(default_factory=set)

    def charge(self, holder: Holder, size: int) -> bool:
        """Charges `size` bytes to `holder`, closing the connections of streams that hold
        more as long as they do not fit; false (nothing charged, `holder` counted as cut)
        when `holder` is the one holding the most or no other can be closed."""
        while self.held + size > self.capacity:
            most = max(self._holding, key=lambda h: h.held, default=None)
            if most is None or most is holder or most.close is None or most.held <= holder.held:
                self.cut += 1
                return False
            self._close(most)
        holder.held += size
        self.held += size
        self._holding.add(holder)
        self.peak = max(self.peak, self.held)
        return True

    def release(self, holder: Holder, size: int) -> None:
        """Gives back bytes charged to `holder` (nothing when its connection was closed:
        they were given back then)."""
        if holder.cut:
            return
        holder.held -= size
        self.held -= size
        if holder.held == 0:
            self._holding.discard(holder)

    def _close(self, holder: Holder) -> None:
        self.held -= holder.held
        holder.held = 0
        holder.cut = True
        self._holding.discard(holder)
        self.cut += 1
        if holder.close is not None:
            holder.close()
