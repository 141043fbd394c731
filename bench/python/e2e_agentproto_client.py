"""End-to-end benchmark client on agentproto's Python SDK (``agentproto.acp.v1``):
spawns the agent command (``spawn_agent``: its own process group, ended on every way
out), initializes, opens a session and times one prompt turn in which the agent
streams ``--count`` updates of ``--tokens`` tokens. Every update is read, validated
and decoded by the SDK's receive path and handed to ``session_update``. The clock
stops when the prompt's answer has arrived and every update has been handled.

    python3 e2e_agentproto_client.py --count N --tokens T -- <agent command...>
"""

from __future__ import annotations

import asyncio
import sys
import time

from agentproto.acp import AcpOptions, v1
from harness import e2e_line, outgoing_checked, parse_e2e_args, with_outgoing


class Counter(v1.Client):
    def __init__(self, count: int, tokens: int) -> None:
        self.received = 0
        self._count = count
        self._length = 5 * tokens
        self.done = asyncio.Event()

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = params.update
        if (
            isinstance(update, v1.SessionUpdateAgentMessageChunk)
            and isinstance(update.content, v1.TextContent)
            and len(update.content.text) == self._length
        ):
            self.received += 1
            if self.received >= self._count:
                self.done.set()

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        return v1.RequestPermissionResponse(outcome=v1.RequestPermissionOutcomeCancelled())


async def main() -> int:
    try:
        args = parse_e2e_args(sys.argv[1:])
    except ValueError as exc:
        print(f"usage error: {exc}", file=sys.stderr)
        return 2
    app = Counter(args.count, args.tokens)
    checked = outgoing_checked()
    agent, process = await v1.spawn_agent(args.agent, app, AcpOptions(strict=checked))
    # `async with`: the agent's process group is ended on every way out. Every wait is bounded.
    async with process:
        await asyncio.wait_for(agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION)), 60)
        session = await asyncio.wait_for(agent.new_session(v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])), 60)
        prompt = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContent(text=args.prompt)])
        start = time.perf_counter_ns()
        answer = await asyncio.wait_for(agent.prompt(prompt), 300)
        if app.received < args.count:
            try:
                await asyncio.wait_for(app.done.wait(), 30)
            except TimeoutError:
                pass
        ns = time.perf_counter_ns() - start
        if answer.stop_reason != "end_turn":
            print(f"stop reason {answer.stop_reason}", file=sys.stderr)
            return 1
        print(with_outgoing(e2e_line(args, app.received, ns), checked), flush=True)
    return 0 if app.received == args.count else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
