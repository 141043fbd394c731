"""A client-side session object for ACP v1: open a session, prompt it with plain text,
read the updates of each turn as they stream in, collect the agent's reply.

    session = await open_session(agent, cwd=os.getcwd())
    reply = await session.prompt_text("Hello")        # the agent's message text of the turn

    turn = session.prompt("Summarise notes.md")       # the request is sent at once
    async for update in turn:                         # this turn's updates, as they arrive
        ...
    response = await turn                             # the `PromptResponse`

    async for update in session.updates():            # every update, until `close()`
        ...

It is a thin layer over the typed connection (`v1.AgentConnection`): every call is the
ordinary validated call, and the application's `Client.session_update` handler still
receives every update. The session sees the updates of its own id that arrive after
`open_session` returned; an agent's updates read before the answer to a turn are
delivered before the turn ends (the connection's ordering guarantee), so a finished turn
holds all of its updates. `SessionClient` is a ready-made `v1.Client` for programs that
only prompt: it answers permission requests from a fixed policy.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator, Iterable
from typing import Any, Literal, Self

from agentproto.acp.endpoint import Endpoint
from agentproto.acp.generated.v1 import (
    CancelNotification,
    ContentBlock,
    McpServerHttp,
    McpServerSse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    RequestPermissionOutcomeCancelled,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionNotification,
    SessionUpdate,
    SessionUpdateAgentMessageChunk,
    TextContent,
)
from agentproto.acp.generated.v1_roles import AgentConnection, Client, ClientContext

__all__ = ["ClientSession", "SessionClient", "Turn", "open_session"]

_UPDATE = "session/update"
_END = object()  # ends a subscriber's iteration


class _Subscriber:
    """The updates one reader has not taken yet; ends with `_END`."""

    __slots__ = ("queue",)

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    async def __aiter__(self) -> AsyncIterator[SessionUpdate]:
        while True:
            item = await self.queue.get()
            if item is _END:
                return
            yield item


class _Router:
    """Hands each `session/update` to the subscribers of its session; one per connection."""

    __slots__ = ("sessions",)

    def __init__(self) -> None:
        self.sessions: dict[str, list[_Subscriber | Turn]] = {}

    def __call__(self, method: str, session: str, params: Any) -> None:
        if method != _UPDATE or not isinstance(params, SessionNotification):
            return
        for subscriber in self.sessions.get(session, ()):
            if isinstance(subscriber, Turn):
                subscriber._add(params.update)
            else:
                subscriber.queue.put_nowait(params.update)


def _router(endpoint: Endpoint) -> _Router:
    watcher = endpoint.session_watcher
    if isinstance(watcher, _Router):
        return watcher
    if watcher is not None:
        raise RuntimeError("this connection's session updates are already watched by something else")
    router = _Router()
    endpoint.session_watcher = router
    return router


def _blocks(prompt: str | ContentBlock | Iterable[ContentBlock]) -> list[ContentBlock]:
    if isinstance(prompt, str):
        return [TextContent(text=prompt)]
    if isinstance(prompt, Iterable):
        return list(prompt)
    return [prompt]


def agent_text(updates: Iterable[SessionUpdate]) -> str:
    """The text of the agent's message chunks among `updates`, joined."""
    return "".join(
        u.content.text
        for u in updates
        if isinstance(u, SessionUpdateAgentMessageChunk) and isinstance(u.content, TextContent)
    )


class Turn:
    """One prompt turn: await it for the `PromptResponse`; iterate it for the turn's
    updates as they arrive (the iteration ends when the agent has answered). `updates`
    holds every update of the turn so far, `text` the agent's message text."""

    def __init__(self, session: ClientSession, prompt: list[ContentBlock]) -> None:
        self.session = session
        self.updates: list[SessionUpdate] = []
        self._arrived = asyncio.Event()
        session._subscribe(self)
        request = PromptRequest(session_id=session.session_id, prompt=prompt)
        self._task = asyncio.ensure_future(session.agent.prompt(request))
        self._task.add_done_callback(self._ended)

    def _add(self, update: SessionUpdate) -> None:
        self.updates.append(update)
        self._arrived.set()

    def _ended(self, task: asyncio.Future[PromptResponse]) -> None:
        self.session._unsubscribe(self)
        self._arrived.set()
        if not task.cancelled():
            task.exception()  # retrieved here; awaiting the turn raises it again

    @property
    def text(self) -> str:
        """The agent's message text of this turn so far (all of it once the turn ended)."""
        return agent_text(self.updates)

    @property
    def done(self) -> bool:
        return self._task.done()

    def __await__(self) -> Generator[Any, None, PromptResponse]:
        return self._task.__await__()

    async def __aiter__(self) -> AsyncIterator[SessionUpdate]:
        seen = 0
        while True:
            while seen < len(self.updates):
                seen += 1
                yield self.updates[seen - 1]
            if self._task.done():
                return
            self._arrived.clear()
            await self._arrived.wait()

    async def text_reply(self) -> str:
        """Waits for the end of the turn and returns the agent's message text."""
        await self
        return self.text

    def abandon(self) -> None:
        """Stops waiting for the answer (the request is cancelled with `$/cancel_request`).
        To end the turn the protocol's way use `ClientSession.cancel()`."""
        self._task.cancel()


class ClientSession:
    """A session opened by `open_session`; see the module docs."""

    def __init__(self, agent: AgentConnection, response: NewSessionResponse) -> None:
        self.agent = agent
        self.response = response
        """The agent's answer to `session/new` (modes, config options, ...)."""
        self.session_id = response.session_id
        self._router = _router(agent._endpoint)
        self._subscribers = self._router.sessions.setdefault(self.session_id, [])
        self._closed = False

    def _subscribe(self, subscriber: _Subscriber | Turn) -> None:
        if self._closed:
            raise RuntimeError(f"session `{self.session_id}` is closed")
        self._subscribers.append(subscriber)

    def _unsubscribe(self, subscriber: _Subscriber | Turn) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    def prompt(self, prompt: str | ContentBlock | Iterable[ContentBlock]) -> Turn:
        """Sends `session/prompt` (a string is one text block) and returns the turn:
        `await session.prompt("hi")` gives the `PromptResponse`."""
        return Turn(self, _blocks(prompt))

    async def prompt_text(self, prompt: str | ContentBlock | Iterable[ContentBlock]) -> str:
        """Runs one turn and returns the agent's message text of it."""
        return await self.prompt(prompt).text_reply()

    def updates(self) -> AsyncIterator[SessionUpdate]:
        """Every update of this session from now on, in order, until `close()`."""
        subscriber = _Subscriber()
        self._subscribe(subscriber)
        return subscriber.__aiter__()

    async def cancel(self) -> None:
        """Sends `session/cancel`: the agent ends the running turn with `cancelled`."""
        await self.agent.cancel(CancelNotification(session_id=self.session_id))

    def close(self) -> None:
        """Stops following the session here: `updates()` iterations end. Turns still
        running go on. (The session itself stays open on the agent.)"""
        if self._closed:
            return
        self._closed = True
        for subscriber in list(self._subscribers):
            if isinstance(subscriber, _Subscriber):
                subscriber.queue.put_nowait(_END)
                self._subscribers.remove(subscriber)
        if not self._subscribers and self._router.sessions.get(self.session_id) is self._subscribers:
            del self._router.sessions[self.session_id]

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


async def open_session(
    agent: AgentConnection,
    cwd: str,
    mcp_servers: Iterable[McpServerHttp | McpServerSse] = (),
    *,
    additional_directories: Iterable[str] | None = None,
) -> ClientSession:
    """Sends `session/new` (after `initialize`) and follows the new session."""
    request = NewSessionRequest(cwd=cwd, mcp_servers=list(mcp_servers))
    if additional_directories is not None:
        request.additional_directories = list(additional_directories)
    return ClientSession(agent, await agent.new_session(request))


class SessionClient(Client):
    """A `v1.Client` for programs that only prompt: updates are read through
    `ClientSession`, and permission requests are answered from `permissions`: `"allow"`
    picks the first allow option, `"reject"` (the default) the first reject option,
    `"cancel"` answers `cancelled`."""

    def __init__(self, permissions: Literal["allow", "reject", "cancel"] = "reject") -> None:
        self.permissions = permissions

    async def request_permission(
        self, cx: ClientContext, params: RequestPermissionRequest
    ) -> RequestPermissionResponse:
        kinds = {"allow": ("allow_once", "allow_always"), "reject": ("reject_once", "reject_always")}
        wanted = kinds.get(self.permissions, ())
        choice = next((o for o in params.options if o.kind in wanted), None)
        if choice is None:
            return RequestPermissionResponse(outcome=RequestPermissionOutcomeCancelled())
        return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id=choice.option_id))

    async def session_update(self, cx: ClientContext, params: SessionNotification) -> None:
        return
