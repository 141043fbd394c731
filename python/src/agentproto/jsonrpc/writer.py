"""The writer task: drains the peer's outgoing queue into the output.

Everything queued at the moment it wakes goes out in one `write` followed by one
`drain`, so messages are batched under load (10,000 streamed updates cost a few hundred
writes, not 10,000) and a lone message still leaves at once. Cancel notifications set
aside while the queue was full go first.
"""

from __future__ import annotations

import asyncio

from agentproto.jsonrpc.local_error import ConnectionClosed
from agentproto.jsonrpc.peer import Peer
from agentproto.jsonrpc.transport import ByteWriter

__all__ = ["write_loop"]


async def write_loop(peer: Peer, output: ByteWriter) -> None:
    """Runs until the peer is stopping and its queue is empty, then closes the output.

    Raises the output's error when a write fails (the connection then ends)."""
    out = peer._out
    overflow = peer._overflow
    flushed: list[asyncio.Future[None]] = []
    try:
        while True:
            if not out and not overflow:
                if peer._stopping:
                    break
                wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                peer._writer_wake = wake
                try:
                    await wake
                finally:
                    peer._writer_wake = None
                continue
            lines: list[bytes] = list(overflow)
            overflow.clear()
            while out:
                item = out.popleft()
                if isinstance(item, bytes):
                    lines.append(item)
                else:
                    flushed.append(item)
            peer._wake_room(peer._out_capacity)
            if lines:
                lines.append(b"")
                output.write(b"\n".join(lines))
            await output.drain()
            for marker in flushed:
                if not marker.done():
                    marker.set_result(None)
            flushed.clear()
    finally:
        for marker in flushed:  # written or not, nobody will flush them now
            if not marker.done():
                marker.set_exception(ConnectionClosed())
        peer._writer_ended()
        try:
            output.close()
        except OSError:
            pass
