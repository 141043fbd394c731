"""The scenario agent of `interop/SCENARIO.md`, on agentproto's Python SDK.

    python3 interop/agentproto-python/agent.py

Speaks ACP v1 on stdin/stdout until stdin closes; what the connection reports (events
it did not pass to a handler) goes to stderr.
"""

from __future__ import annotations

import asyncio
import sys

from agentproto.acp import AcpOptions, ExtMessage, v1
from agentproto.acp.errors import Cancelled
from agentproto.acp.options import AcpEvent
from agentproto.codec import Raw, Unknown
from agentproto.jsonrpc import ConnectionEvent, ErrorObject, RequestError

NAME = "agentproto-python-scenario-agent"

# The `unknown-update` step's update: a variant no schema lists, kept as raw JSON.
FUTURE_UPDATE = Unknown(
    "agentproto_future_update", Raw(b'{"sessionUpdate":"agentproto_future_update","detail":{"n":1}}')
)


def text_of(prompt: list[v1.ContentBlock]) -> str:
    """The text of the prompt's first block, or "" when it is not a text block."""
    first = prompt[0] if prompt else None
    return first.text if isinstance(first, v1.TextContent) else ""


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class ScenarioAgent(v1.Agent):
    def __init__(self) -> None:
        self.sessions = 0

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=v1.PROTOCOL_VERSION,
            agent_capabilities=v1.AgentCapabilities(),
            auth_methods=[],
            agent_info=v1.Implementation(name=NAME, version="0.0.0"),
        )

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        self.sessions += 1
        return v1.NewSessionResponse(session_id=f"sess-{self.sessions}")

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        # This agent reports what happened after a cancel, so it finishes its turns itself
        # (the connection still forces the stop reason of a cancelled turn to `cancelled`).
        cx.handle_cancellation()
        session = params.session_id
        command, _, argument = text_of(params.prompt).partition(" ")

        async def update(update: v1.SessionUpdate) -> None:
            await cx.peer.session_update(v1.SessionNotification(session_id=session, update=update))

        async def say(text: str) -> None:
            await update(v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text=text)))

        if command == "echo":
            for word in argument.split():
                await say(word)
            return v1.PromptResponse(stop_reason="end_turn")
        if command == "permission":
            await update(v1.ToolCall(tool_call_id="call-1", title="Pretend edit", kind="edit", status="pending"))
            outcome = await self.ask_permission(cx, session)
            await say(f"permission:{outcome}")
            status: v1.ToolCallStatus = "completed" if outcome == "allow" else "failed"
            await update(v1.SessionUpdateToolCallUpdate(tool_call_id="call-1", status=status))
            return v1.PromptResponse(stop_reason="cancelled" if outcome == "cancelled" else "end_turn")
        if command == "fs":
            read = await cx.peer.read_text_file(v1.ReadTextFileRequest(session_id=session, path=argument))
            content = read.content
            write = v1.WriteTextFileRequest(session_id=session, path=f"{argument}.out", content=content.upper())
            await cx.peer.write_text_file(write)
            await say(f"read:{utf16_length(content)}")
            return v1.PromptResponse(stop_reason="end_turn")
        if command == "wait":
            await say("waiting")
            await cx.cancellation_token.wait()  # the turn's token: `session/cancel` fires it
            return v1.PromptResponse(stop_reason="cancelled")
        if command == "unknown-update":
            await update(FUTURE_UPDATE)
            await say("after-unknown")
            return v1.PromptResponse(stop_reason="end_turn")
        if command == "error":
            raise RequestError(4242, "deliberate failure", b'{"reason":"scenario"}')
        return v1.PromptResponse(stop_reason="end_turn")

    @staticmethod
    async def ask_permission(cx: v1.AgentContext, session: str) -> str:
        """The chosen option id, or "cancelled" (answered so, or the turn was cancelled
        while the request was pending)."""
        options = [
            v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        request = v1.RequestPermissionRequest(
            session_id=session, tool_call=v1.ToolCallUpdate(tool_call_id="call-1"), options=options
        )
        try:
            answer = await cx.peer.request_permission(request)
        except Cancelled:
            return "cancelled"
        chosen = answer.outcome
        return chosen.option_id if isinstance(chosen, v1.SelectedPermissionOutcome) else "cancelled"

    async def ext_method(self, cx: v1.AgentContext, request: ExtMessage) -> Raw:
        if request.method != "_agentproto/slow":
            raise RequestError.method_not_found(request.method)
        # Never answers on its own. `$/cancel_request` fires the token and stops this
        # handler; the connection then answers -32800 (as it would for this error).
        await cx.cancellation_token.wait()
        raise RequestError.from_object(ErrorObject.request_cancelled())


def log(event: ConnectionEvent | AcpEvent) -> None:
    print(f"[{NAME}] {event!r}", file=sys.stderr, flush=True)


def main() -> int:
    # Outgoing validation is switched off (it is on by default): the `unknown-update` step
    # sends a variant no schema knows, on purpose.
    try:
        asyncio.run(v1.serve_agent_stdio(ScenarioAgent(), AcpOptions(observer=log, strict=False)))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
