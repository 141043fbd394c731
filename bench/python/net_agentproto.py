"""Network end-to-end adapter on agentproto's Python SDK (``agentproto.acp.remote``):
the stdio end-to-end agent (e2e_agentproto_agent.Streamer) served at ``/acp`` under
uvicorn (``agent_app`` + ``listen``), and the stdio end-to-end client's application
(e2e_agentproto_client.Counter) connected with ``connect`` over Streamable HTTP or,
with ``--ws``, WebSocket. Command line: net_harness.py.
"""

from __future__ import annotations

import asyncio
import sys
import time

from agentproto.acp import AcpOptions, v1
from agentproto.acp.remote import agent_app, connect, listen
from e2e_agentproto_agent import Streamer
from e2e_agentproto_client import Counter
from harness import e2e_line, outgoing_checked, with_outgoing
from net_harness import NetArgs, announce, bound_socket, parse_net_args, usage


async def agent(args: NetArgs) -> int:
    sock = bound_socket(args.host, args.port)
    announce(sock)
    await listen(agent_app(Streamer, AcpOptions(strict=outgoing_checked())), sock)
    return 0


async def client(args: NetArgs) -> int:
    app = Counter(args.count, args.tokens)
    checked = outgoing_checked()
    remote = await asyncio.wait_for(connect(args.url, app, AcpOptions(strict=checked), websocket=args.websocket), 60)
    async with remote:
        peer = remote.agent
        await asyncio.wait_for(peer.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION)), 60)
        session = await asyncio.wait_for(peer.new_session(v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])), 60)
        e2e = args.e2e()
        prompt = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContent(text=e2e.prompt)])
        start = time.perf_counter_ns()
        answer = await asyncio.wait_for(peer.prompt(prompt), 300)
        if app.received < args.count:
            try:
                await asyncio.wait_for(app.done.wait(), 30)
            except TimeoutError:
                pass
        ns = time.perf_counter_ns() - start
        if answer.stop_reason != "end_turn":
            print(f"stop reason {answer.stop_reason}", file=sys.stderr)
            return 1
        print(with_outgoing(e2e_line(e2e, app.received, ns), checked), flush=True)
    return 0 if app.received == args.count else 1


def main() -> int:
    try:
        args = parse_net_args(sys.argv[1:])
    except ValueError as exc:
        return usage(exc)
    return asyncio.run(agent(args) if args.role == "agent" else client(args))


if __name__ == "__main__":
    sys.exit(main())
