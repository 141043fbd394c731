"""Network end-to-end adapter on the official Python SDK (agent-client-protocol 0.12.1,
its ``http`` extra): the stdio end-to-end agent (e2e_agent.Streamer) as the agent of the
SDK's ASGI app (``acp.http.asgi.create_asgi_app``, one agent per connection) under
uvicorn with the same settings as agentproto's server, and the stdio end-to-end client's
application (e2e_client.Counter) on the SDK's Streamable HTTP transport
(``acp.http.client.create_http_stream``) or, with ``--ws``, its WebSocket transport
(``acp.ws.client.create_websocket_stream``). Command line: net_harness.py.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import acp
import uvicorn
from e2e_agent import Streamer
from e2e_client import Counter
from harness import e2e_line
from net_harness import NetArgs, announce, bound_socket, parse_net_args, usage


def streamer(conn: Any) -> Streamer:
    """The SDK's agent factory: called with the connection the agent streams to."""
    agent = Streamer()
    agent.on_connect(conn)
    return agent


async def agent(args: NetArgs) -> int:
    from acp.http.asgi import create_asgi_app

    sock = bound_socket(args.host, args.port)
    announce(sock)
    config = uvicorn.Config(
        create_asgi_app(streamer),  # type: ignore[arg-type]
        log_level="warning",
        ws="websockets-sansio",
        ws_per_message_deflate=False,
        ws_max_size=50 * 1024 * 1024,
        timeout_graceful_shutdown=2,
    )
    await uvicorn.Server(config).serve(sockets=[sock])
    return 0


async def client(args: NetArgs) -> int:
    if args.websocket:
        from acp.ws.client import create_websocket_stream

        transport = await asyncio.wait_for(create_websocket_stream(args.url.replace("http://", "ws://")), 60)
    else:
        from acp.http.client import create_http_stream

        transport = create_http_stream(args.url)
    app = Counter(args.count, args.tokens)
    conn = acp.connect_to_agent(app, transport)
    try:
        await asyncio.wait_for(conn.initialize(protocol_version=1), 60)
        session = await asyncio.wait_for(conn.new_session(cwd="/tmp", mcp_servers=[]), 60)
        e2e = args.e2e()
        start = time.perf_counter_ns()
        answer = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block(e2e.prompt)]), 300
        )
        if app.received < args.count:
            try:
                await asyncio.wait_for(app.done.wait(), 30)
            except TimeoutError:
                pass
        ns = time.perf_counter_ns() - start
    finally:
        await asyncio.wait_for(conn.close(), 30)
    if answer.stop_reason != "end_turn":
        print(f"stop reason {answer.stop_reason}", file=sys.stderr)
        return 1
    print(e2e_line(e2e, app.received, ns), flush=True)
    return 0 if app.received == args.count else 1


def main() -> int:
    try:
        args = parse_net_args(sys.argv[1:])
    except ValueError as exc:
        return usage(exc)
    return asyncio.run(agent(args) if args.role == "agent" else client(args))


if __name__ == "__main__":
    sys.exit(main())
