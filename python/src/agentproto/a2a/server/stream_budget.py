"""The server-wide stream budget: a bound on the bytes of stream events held for
subscribers, all streams together (issue 35, item 1; `agentproto serve --stream-budget-mib`
is the same idea).

An SSE stream charges each encoded frame from the moment it is made until the connection
has written it out: `send` returned and, for a frame larger than the transport's
low-water mark, a following empty `send` returned too (an ASGI server awaits its flow
control there, so the frame no longer sits in the transport's buffer). A client that stops
reading therefore holds its unwritten frame against the budget. A frame that cannot be
charged cuts its stream off as lagged (`event: lagged`, then the end of the response): the
client resumes from the log. Healthy readers are charged only while a frame is being
written, so a budget of about two of the largest events per reader expected at once never
cuts them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DRAIN_ABOVE", "StreamBudget"]

DRAIN_ABOVE = 16 << 10
"""A frame larger than this is held until an empty `send` after it returns (asyncio's
transports resume writing below 16 KiB; uvicorn awaits that before each `send`)."""


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
    """Streams cut off because their next frame did not fit."""

    def charge(self, size: int) -> bool:
        """Charges `size` bytes if they fit (else counts a cut stream and charges nothing)."""
        if self.held + size > self.capacity:
            self.cut += 1
            return False
        self.held += size
        self.peak = max(self.peak, self.held)
        return True

    def release(self, size: int) -> None:
        """Gives back bytes charged before."""
        self.held -= size
