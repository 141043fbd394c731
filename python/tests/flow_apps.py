"""The two small deterministic applications the flow vectors run against
(`vectors/README.md`, "The test applications"), mirroring the Rust runner's
(`crates/vector-runner/src/flows.rs`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
from msgspec import Raw

from agentproto.acp import v1
from agentproto.acp.errors import AcpError, Cancelled, PeerError
from agentproto.acp.receive import ExtMessage
from agentproto.codec import encode
from agentproto.jsonrpc import RequestError

STEP_TIMEOUT = 5.0
"""How long any single wait of a flow may take."""

BARRIER = "_flow/barrier"
"""The method of the barrier behind `expect_silence` (a notification and a request)."""

DELIBERATE = "deliberate failure of the test application"


class DeliberateFailure(Exception):
    """What the applications raise where the Rust ones panic."""


def raw_json(value: Any) -> Raw:
    return Raw(json.dumps(value, separators=(",", ":")).encode())


class Barrier:
    """Lets the `_flow/barrier` request wait until the notification with the same `n`
    has been handled (notifications are handled one at a time, in order)."""

    def __init__(self) -> None:
        self._seen = 0
        self._changed: asyncio.Event = asyncio.Event()

    @staticmethod
    def number(payload: Raw | None) -> int:
        try:
            value = json.loads(bytes(payload)) if payload is not None else None
        except ValueError:
            return 0
        n = value.get("n") if isinstance(value, dict) else None
        return n if isinstance(n, int) else 0

    def mark(self, payload: Raw | None) -> None:
        self._seen = max(self._seen, self.number(payload))
        self._changed.set()

    async def wait(self, payload: Raw | None) -> Raw:
        n = self.number(payload)
        try:
            async with asyncio.timeout(STEP_TIMEOUT):
                while self._seen < n:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            raise RequestError.internal_error(f"barrier notification {n} was not handled") from None
        return raw_json({"n": n})


async def ext_request(barrier: Barrier, request: ExtMessage) -> Raw:
    """Extension requests both applications answer: the barrier and `_test/echo`."""
    if request.method == BARRIER:
        return await barrier.wait(request.payload)
    if request.method == "_test/echo":
        params = None if request.payload is None else json.loads(bytes(request.payload))
        return raw_json({"method": request.method, "params": params})
    raise RequestError.method_not_found(request.method)


async def forever() -> Any:
    await asyncio.get_running_loop().create_future()


class FlowAgent(v1.Agent):
    """The agent application of the flows."""

    def __init__(self, setup: dict[str, Any]) -> None:
        caps = json.dumps(setup.get("agentCapabilities", {})).encode()
        self.capabilities = v1.SURFACE.decode("AgentCapabilities", caps, "$").value
        # `setup.modes`: the `modes` the answer of each opening request carries.
        self.modes: dict[str, v1.SessionModeState] = {
            method: v1.SURFACE.decode("SessionModeState", json.dumps(state).encode(), "$").value
            for method, state in setup.get("modes", {}).items()
        }
        self.sessions = 0
        self.barrier = Barrier()

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        info = params.client_info
        name = info.name if isinstance(info, v1.Implementation) else ""
        if name == "panic":
            raise DeliberateFailure(DELIBERATE)
        if name == "fail":
            raise RequestError(4242, "initialize fails on request")
        # Echoes the requested version on purpose: the role must answer its own.
        return v1.InitializeResponse(protocol_version=params.protocol_version, agent_capabilities=self.capabilities)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        self.sessions += 1
        modes = self.modes.get("session/new", msgspec.UNSET)
        return v1.NewSessionResponse(session_id=f"sess-{self.sessions}", modes=modes)

    async def load_session(self, cx: v1.AgentContext, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        return v1.LoadSessionResponse(modes=self.modes.get("session/load", msgspec.UNSET))

    async def resume_session(self, cx: v1.AgentContext, params: v1.ResumeSessionRequest) -> v1.ResumeSessionResponse:
        return v1.ResumeSessionResponse(modes=self.modes.get("session/resume", msgspec.UNSET))

    async def close_session(self, cx: v1.AgentContext, params: v1.CloseSessionRequest) -> v1.CloseSessionResponse:
        return v1.CloseSessionResponse()

    async def delete_session(self, cx: v1.AgentContext, params: v1.DeleteSessionRequest) -> v1.DeleteSessionResponse:
        return v1.DeleteSessionResponse()

    async def list_sessions(self, cx: v1.AgentContext, params: v1.ListSessionsRequest) -> v1.ListSessionsResponse:
        return v1.ListSessionsResponse(sessions=[])

    async def logout(self, cx: v1.AgentContext, params: v1.LogoutRequest) -> v1.LogoutResponse:
        return v1.LogoutResponse()

    async def set_session_mode(
        self, cx: v1.AgentContext, params: v1.SetSessionModeRequest
    ) -> v1.SetSessionModeResponse:
        return v1.SetSessionModeResponse()

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        first = params.prompt[0] if params.prompt else None
        text = first.text if isinstance(first, v1.TextContent) else ""
        command, _, argument = text.partition(" ")
        session = params.session_id

        async def say(words: str) -> None:
            chunk = v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text=words))
            await cx.peer.session_update(v1.SessionNotification(session_id=session, update=chunk))

        if command == "echo":
            for word in argument.split():
                await say(word)
        elif command == "permission":
            cx.handle_cancellation()
            options = [
                v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ]
            ask = v1.RequestPermissionRequest(
                session_id=session, tool_call=v1.ToolCallUpdate(tool_call_id="call-1"), options=options
            )
            try:
                answer = await cx.peer.request_permission(ask)
                chosen = answer.outcome
                outcome = chosen.option_id if isinstance(chosen, v1.SelectedPermissionOutcome) else "cancelled"
            except Cancelled:
                outcome = "cancelled"
            except AcpError as e:
                outcome = f"error:{e.variant}"
            await say(f"permission:{outcome}")
            return v1.PromptResponse(stop_reason="cancelled" if outcome == "cancelled" else "end_turn")
        elif command == "wait":
            await say("waiting")
            await forever()
        elif command == "hang":
            await forever()
        elif command == "linger":
            cx.handle_cancellation()
            await say("waiting")
            await cx.cancellation_token.wait()
            if argument == "fail":
                raise RequestError(4242, "failed after the cancel")
        elif command == "read":
            try:
                read = await cx.peer.read_text_file(v1.ReadTextFileRequest(session_id=session, path=argument))
                report = f"read:{read.content}"
            except PeerError as e:
                report = f"read:error:{e.error.code}"
            except AcpError as e:
                report = f"read:local:{e.variant}"
            await say(report)
        elif command == "panic":
            raise DeliberateFailure(DELIBERATE)
        elif command == "error":
            raise RequestError(4242, "test failure", b'{"reason":"test"}')
        return v1.PromptResponse(stop_reason="end_turn")

    async def ext_method(self, cx: v1.AgentContext, request: ExtMessage) -> Raw:
        return await ext_request(self.barrier, request)

    async def ext_notification(self, cx: v1.AgentContext, notification: ExtMessage) -> None:
        if notification.method == BARRIER:
            self.barrier.mark(notification.payload)


async def report_seen(cx: v1.ClientContext, seen: dict[str, Any]) -> None:
    """Tells the flow what the client application saw, as a `_test/seen` notification."""
    await cx.peer.ext_notification("_test/seen", raw_json(seen))


class FlowClient(v1.Client):
    """The client application of the flows."""

    def __init__(self, setup: dict[str, Any]) -> None:
        permission = setup.get("permission")
        if permission is not None and not isinstance(permission, str):
            raise ValueError(f"setup.permission must be a string or null, found {permission!r}")
        self.permission: str | None = permission
        self.barrier = Barrier()

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        await report_seen(cx, {"method": "session/request_permission", "sessionId": params.session_id})
        if self.permission is None:
            # Left pending: the role answers `cancelled` when this side cancels the session.
            await forever()
        return v1.RequestPermissionResponse(outcome=v1.SelectedPermissionOutcome(option_id=str(self.permission)))

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = msgspec.json.decode(encode(params.update))
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        await report_seen(cx, {"method": "session/update", "sessionId": params.session_id, "update": kind})

    async def read_text_file(self, cx: v1.ClientContext, params: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        return v1.ReadTextFileResponse(content=f"text of {params.path}")

    async def write_text_file(self, cx: v1.ClientContext, params: v1.WriteTextFileRequest) -> v1.WriteTextFileResponse:
        return v1.WriteTextFileResponse()

    async def create_elicitation(
        self, cx: v1.ClientContext, params: v1.CreateElicitationRequest
    ) -> v1.CreateElicitationResponse:
        value: v1.CreateElicitationResponse = v1.SURFACE.decode(
            "CreateElicitationResponse", b'{"action":"decline"}', "$"
        ).value
        return value

    async def ext_method(self, cx: v1.ClientContext, request: ExtMessage) -> Raw:
        return await ext_request(self.barrier, request)

    async def ext_notification(self, cx: v1.ClientContext, notification: ExtMessage) -> None:
        if notification.method == BARRIER:
            self.barrier.mark(notification.payload)


__all__ = ["BARRIER", "STEP_TIMEOUT", "FlowAgent", "FlowClient"]
