"""An ACP agent and client connected in this process, over in-memory pipes
(`agentproto.jsonrpc.memory`): the whole protocol runs as it would between two
processes (every message encoded, validated and decoded), with no process to start.
For tests of an agent against a client, and for embedding one in the other. Each
surface binds it as `connect_pair` (e.g. `v1.connect_pair`):

    async with v1.connect_pair(MyAgent(), SessionClient()) as pair:
        await pair.agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
        session = await open_session(pair.agent, cwd="/")
        assert await session.prompt_text("hi") == "hi"

`pair.agent` is the client's handle to the agent, `pair.client` the agent's handle to
the client. Leaving the block closes the client's end: the agent side sees the end of
its input and shuts down (its handlers get the connection's shutdown grace), then the
client side. A side that has not ended within `timeout` seconds is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Generic, Self, TypeVar

from agentproto.acp.options import AcpOptions
from agentproto.jsonrpc.connection import Connection
from agentproto.jsonrpc.memory import PipeReader, PipeWriter, duplex

__all__ = ["Pair"]

A = TypeVar("A")  # the client's handle to the agent
C = TypeVar("C")  # the agent's handle to the client


class Pair(Generic[A, C]):
    """Both ends of an in-process connection; use it with `async with`."""

    def __init__(
        self,
        connect_agent: Callable[[PipeReader, PipeWriter, AcpOptions | None], tuple[Connection, C]],
        connect_client: Callable[[PipeReader, PipeWriter, AcpOptions | None], tuple[Connection, A]],
        agent_options: AcpOptions | None = None,
        client_options: AcpOptions | None = None,
        timeout: float = 5.0,
    ) -> None:
        (a_in, a_out), (c_in, c_out) = duplex()
        self._agent_side, self.client = connect_agent(a_in, a_out, agent_options)
        """The agent's handle to the client (what the agent's handlers get as `cx.peer`)."""
        self._client_side, self.agent = connect_client(c_in, c_out, client_options)
        """The client's handle to the agent: initialize, open sessions, prompt."""
        self._client_out = c_out
        self.timeout = timeout
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> Self:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def start(self) -> None:
        """Runs both sides (done by `async with`)."""
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._agent_side.run()),
                asyncio.create_task(self._client_side.run()),
            ]

    async def close(self) -> None:
        """Ends both sides, waiting at most `timeout` seconds before stopping them."""
        self._client_out.close()
        tasks = self._tasks
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=self.timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        for task in tasks:
            if not task.cancelled():
                with contextlib.suppress(Exception):
                    task.exception()  # retrieved: a transport failure at the end is no news here
