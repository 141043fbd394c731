"""Scenario agent (interop/SCENARIO.md) on the official Python SDK,
agent-client-protocol 0.12.1 (module ``acp``).

Speaks ACP v1 on stdin/stdout; the SDK logs through ``logging``, which goes to
stderr.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

import acp
from acp.schema import (
    AgentCapabilities,
    Implementation,
    PermissionOption,
    ToolCallUpdate,
)
from pydantic import ValidationError

log = logging.getLogger("python-scenario-agent")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class ScenarioAgent:
    def __init__(self, stdout: asyncio.StreamWriter) -> None:
        # The stdout stream the SDK writes to; used only for the one line the
        # SDK refuses to build (see _unknown_update).
        self._stdout = stdout
        self._conn: Any = None
        self._sessions = 0
        # session id -> Event set by session/cancel for the turn in progress
        self._turns: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(),
            auth_methods=[],
            agent_info=Implementation(name="python-scenario-agent", version="0.0.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        self._sessions += 1
        return acp.NewSessionResponse(session_id=f"sess-{self._sessions}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.set()

    async def _chunk(self, session_id: str, text: str) -> None:
        await self._conn.session_update(session_id=session_id, update=acp.update_agent_message_text(text))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        text = getattr(prompt[0], "text", "") if prompt else ""
        command, _, rest = text.partition(" ")
        turn = asyncio.Event()
        self._turns[session_id] = turn
        try:
            if command == "echo":
                for word in rest.split(" "):
                    await self._chunk(session_id, word)
                stop = "end_turn"
            elif command == "permission":
                stop = await self._permission(session_id)
            elif command == "fs":
                stop = await self._fs(session_id, rest)
            elif command == "wait":
                await self._chunk(session_id, "waiting")
                await turn.wait()
                stop = "cancelled"
            elif command == "unknown-update":
                await self._unknown_update(session_id)
                await self._chunk(session_id, "after-unknown")
                stop = "end_turn"
            elif command == "error":
                raise acp.RequestError(4242, "deliberate failure", {"reason": "scenario"})
            else:
                raise acp.RequestError.invalid_params({"prompt": text})
        finally:
            if self._turns.get(session_id) is turn:
                del self._turns[session_id]
        return acp.PromptResponse(stop_reason=stop)

    async def _permission(self, session_id: str) -> str:
        await self._conn.session_update(
            session_id=session_id,
            update=acp.start_tool_call("call-1", "Pretend edit", kind="edit", status="pending"),
        )
        answer = await self._conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="call-1"),
            options=[
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = answer.outcome
        picked = outcome.option_id if outcome.outcome == "selected" else "cancelled"
        await self._chunk(session_id, f"permission:{picked}")
        status = "completed" if picked == "allow" else "failed"
        await self._conn.session_update(session_id=session_id, update=acp.update_tool_call("call-1", status=status))
        return "cancelled" if picked == "cancelled" else "end_turn"

    async def _fs(self, session_id: str, path: str) -> str:
        read = await self._conn.read_text_file(session_id=session_id, path=path)
        await self._conn.write_text_file(session_id=session_id, path=path + ".out", content=read.content.upper())
        await self._chunk(session_id, f"read:{_utf16_len(read.content)}")
        return "end_turn"

    async def _unknown_update(self, session_id: str) -> None:
        update = {"sessionUpdate": "agentproto_future_update", "detail": {"n": 1}}
        try:
            # The SDK's own call validates against its closed union of updates.
            await self._conn.session_update(session_id=session_id, update=update)
            return
        except ValidationError as exc:
            log.warning("SDK refused the unknown update (%s); writing it as a raw line", exc.errors()[0]["type"])
        # The agent-side connection has no raw notification call (ext_notification
        # always prefixes "_"), so the line goes straight onto the stdout stream
        # the SDK also writes to. Nothing else of this turn is queued at this
        # point, so the line lands before "after-unknown".
        message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": update}}
        self._stdout.write((json.dumps(message, separators=(",", ":")) + "\n").encode())
        await self._stdout.drain()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        # The SDK strips the leading "_" before calling this.
        if method == "agentproto/slow":
            # Never answers on its own. SDK 0.12.1 has no $/cancel_request support,
            # so nothing can end this wait except the connection closing.
            await asyncio.Event().wait()
        raise acp.RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


async def main() -> None:
    reader, writer = await acp.stdio_streams(limit=50 * 1024 * 1024)
    await acp.run_agent(ScenarioAgent(writer), writer, reader)
    log.info("connection closed")


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[python-scenario-agent] %(message)s")
    asyncio.run(main())
