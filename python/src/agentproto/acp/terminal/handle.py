"""`TerminalHandle`: the agent side, a command the agent runs through its client (the twin
of the agent half of `crates/acp/src/terminal/mod.rs`)."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from agentproto.acp import v1
from agentproto.acp.context import Context
from agentproto.acp.errors import AcpError

__all__ = ["TerminalHandle"]


class TerminalHandle:
    """A terminal the agent created on the client, by id, with the connection that reaches
    it. Its calls are the generated typed calls of `v1.ClientConnection`.

    The calls go through the connection the handle was created with, so inside a prompt
    turn they end with `Cancelled` when the turn is cancelled. `release()` does not: it
    is sent even after a cancellation, since the agent must release what it created.
    Use the handle as an async context manager to release it on every way out.
    """

    __slots__ = ("_client", "_released", "_session_id", "_terminal_id")

    def __init__(self, client: v1.ClientConnection, session_id: str, terminal_id: str) -> None:
        """Wraps a terminal that already exists (`create` is the usual way in)."""
        self._client = client
        self._session_id = session_id
        self._terminal_id = terminal_id
        self._released = False

    @classmethod
    async def create(
        cls, peer: v1.ClientConnection | v1.AgentContext, request: v1.CreateTerminalRequest
    ) -> TerminalHandle:
        """Sends `terminal/create` through `peer` (a handler's context or its `cx.peer`) and
        wraps the new terminal. The client starts the command and answers at once; it
        does not wait for the command to finish.

        Raises:
            AcpError: the call failed (`CapabilityNotAdvertised` when the client did not
                advertise `terminal`, `PeerError` with the client's refusal, ...).
        """
        client = peer.peer if isinstance(peer, Context) else peer
        response = await client.create_terminal(request)
        return cls(client, request.session_id, response.terminal_id)

    def __repr__(self) -> str:
        state = ", released" if self._released else ""
        return f"TerminalHandle(session_id={self._session_id!r}, id={self._terminal_id!r}{state})"

    @property
    def id(self) -> str:
        """The terminal's id, as the client assigned it."""
        return self._terminal_id

    @property
    def session_id(self) -> str:
        """The session the terminal belongs to."""
        return self._session_id

    @property
    def released(self) -> bool:
        """Whether `release()` has been called."""
        return self._released

    def as_tool_call_content(self) -> v1.Terminal:
        """The tool-call content item `{"type":"terminal","terminalId":…}` that shows this
        terminal's live output in a tool call (clients keep showing it after release)."""
        return v1.Terminal(terminal_id=self._terminal_id)

    async def output(self) -> v1.TerminalOutputResponse:
        """Sends `terminal/output`: the output so far, whether it was truncated, and the
        exit status once the command has exited."""
        request = v1.TerminalOutputRequest(session_id=self._session_id, terminal_id=self._terminal_id)
        return await self._client.terminal_output(request)

    async def wait_for_exit(self) -> v1.WaitForTerminalExitResponse:
        """Sends `terminal/wait_for_exit`, which the client answers once the command has exited."""
        request = v1.WaitForTerminalExitRequest(session_id=self._session_id, terminal_id=self._terminal_id)
        return await self._client.wait_for_terminal_exit(request)

    async def kill(self) -> v1.KillTerminalResponse:
        """Sends `terminal/kill`: the command is stopped and the terminal stays valid (its
        output can still be read; it must still be released)."""
        request = v1.KillTerminalRequest(session_id=self._session_id, terminal_id=self._terminal_id)
        return await self._client.kill_terminal(request)

    async def release(self) -> None:
        """Sends `terminal/release`: the client kills the command if it still runs and
        forgets the terminal. Sent even when the prompt turn has been cancelled; only the
        first call sends anything (the handle counts as released even if that call
        fails)."""
        if self._released:
            return
        self._released = True
        request = v1.ReleaseTerminalRequest(session_id=self._session_id, terminal_id=self._terminal_id)
        # Not tied to the prompt turn: a cancelled turn must still release.
        await self._client._in_turn(None).release_terminal(request)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Releases the terminal. When the block is left by an exception, a failure to
        release does not replace it: it is added to that exception as a note."""
        if value is None:
            await self.release()
            return
        try:
            await self.release()
        except AcpError as e:
            value.add_note(f"releasing terminal `{self._terminal_id}` failed too: {e}")
