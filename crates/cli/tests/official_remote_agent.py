"""An echo agent on the official Python SDK (agent-client-protocol 0.12.1, its `http`
extra: `acp.http.asgi.create_asgi_app`, one agent per ACP connection), served under
uvicorn on 127.0.0.1 at a free port; prints `listening on http://127.0.0.1:PORT/acp` on
stderr. Each prompt's words are streamed back as message chunks. Stops on SIGTERM.

Usage: python3 official_remote_agent.py
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import acp
import uvicorn
from acp.http.asgi import create_asgi_app


class OfficialEcho:
    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._sessions = 0

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        return acp.InitializeResponse(protocol_version=1)

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        self._sessions += 1
        return acp.NewSessionResponse(session_id=f"official-{self._sessions}")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        text = "".join(getattr(block, "text", "") for block in prompt)
        for word in text.split(" "):
            update = acp.update_agent_message_text(word + " ")
            await self._conn.session_update(session_id=session_id, update=update)
        return acp.PromptResponse(stop_reason="end_turn")


def main() -> None:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    print(
        f"official agent: listening on http://127.0.0.1:{port}/acp",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        create_asgi_app(OfficialEcho),  # type: ignore[arg-type]
        log_level="warning",
        ws="websockets-sansio",
        timeout_graceful_shutdown=1,
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
