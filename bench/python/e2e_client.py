"""End-to-end benchmark client on the official Python SDK (agent-client-protocol
0.12.1): spawns the agent command, initializes, opens a session and times one prompt
turn in which the agent streams ``--count`` updates of ``--tokens`` tokens. Every
update is validated by the SDK (pydantic) and handed to ``session_update``. The clock
stops when the prompt's answer has arrived and every update has been handled.

    python3 e2e_client.py --count N --tokens T -- <agent command...>
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

import acp
from harness import e2e_line, parse_e2e_args


class Counter:
    def __init__(self, count: int, tokens: int) -> None:
        self.received = 0
        self._count = count
        self._length = 5 * tokens
        self.done = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        if update.session_update == "agent_message_chunk" and len(getattr(content, "text", "")) == self._length:
            self.received += 1
            if self.received >= self._count:
                self.done.set()

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


async def main() -> int:
    try:
        args = parse_e2e_args(sys.argv[1:])
    except ValueError as exc:
        print(f"usage error: {exc}", file=sys.stderr)
        return 2
    app = Counter(args.count, args.tokens)
    async with acp.spawn_agent_process(
        app, args.agent[0], *args.agent[1:], env=dict(os.environ), transport_kwargs={"stderr": None}
    ) as (conn, _process):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd="/tmp", mcp_servers=[])
        start = time.perf_counter_ns()
        answer = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(args.prompt)])
        if app.received < args.count:
            try:
                await asyncio.wait_for(app.done.wait(), 30)
            except TimeoutError:
                pass
        ns = time.perf_counter_ns() - start
        if answer.stop_reason != "end_turn":
            print(f"stop reason {answer.stop_reason}", file=sys.stderr)
            return 1
        print(e2e_line(args, app.received, ns), flush=True)
    return 0 if app.received == args.count else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
