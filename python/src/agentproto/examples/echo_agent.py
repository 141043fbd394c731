"""An ACP agent that echoes the prompt back, word by word.

It streams each word as an `agent_message_chunk`, asks permission for a pretend tool
call when the prompt mentions "tool", and stops with `cancelled` when the client sends
`session/cancel` (the connection ends the turn; this handler is simply stopped). Run it
under any ACP client, e.g.

    python -m agentproto.examples.run_prompt --allow -- python -m agentproto.examples.echo_agent

`--delay SECONDS` paces the stream like a model would (default 0.05; 0 streams as fast
as the client reads). The agent exits when its stdin closes.

With `--listen HOST:PORT` it serves itself over the network instead, at
`http://HOST:PORT/acp` (Streamable HTTP and WebSocket, one agent per ACP connection;
needs the `agentproto[http]` extra), and prints that URL on stderr once it accepts
connections (port 0 picks a free port). Ctrl-C or SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys

from agentproto import __version__
from agentproto.acp import v1
from agentproto.acp.builders import start_tool_call, update_agent_message_text, update_tool_call


class EchoAgent(v1.Agent):
    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.sessions = 0

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        info = v1.Implementation(name="echo-agent", version=__version__)
        return v1.InitializeResponse(protocol_version=v1.PROTOCOL_VERSION, agent_info=info)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        # Every session gets its own id.
        self.sessions += 1
        return v1.NewSessionResponse(session_id=f"echo-{self.sessions}")

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        session = params.session_id
        text = "".join(block.text for block in params.prompt if isinstance(block, v1.TextContent))

        if "tool" in text:
            await cx.peer.session_update(session, start_tool_call("echo-tool", "Pretend to edit a file"))
            options = [
                v1.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                v1.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ]
            ask = v1.RequestPermissionRequest(
                session_id=session, tool_call=v1.ToolCallUpdate(tool_call_id="echo-tool"), options=options
            )
            answer = await cx.peer.request_permission(ask)
            chosen = answer.outcome
            allowed = isinstance(chosen, v1.SelectedPermissionOutcome) and chosen.option_id == "yes"
            status: v1.ToolCallStatus = "completed" if allowed else "failed"
            await cx.peer.session_update(session, update_tool_call("echo-tool", status=status))
        # Words with the spaces after them, so the chunks join back into the prompt.
        for word in (w for w in re.split(r"(?<= )", text) if w):
            await cx.peer.session_update(session, update_agent_message_text(word))
            # Also where the turn can be cancelled: sending alone need not yield.
            await asyncio.sleep(self.delay)
        return v1.PromptResponse(stop_reason="end_turn")


async def serve_network(host: str, port: int, delay: float) -> None:
    from agentproto.acp.remote import agent_app, bind, listen

    sock = bind(host, port)
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    print(f"echo-agent: listening on http://{shown}:{bound[1]}/acp", file=sys.stderr, flush=True)
    await listen(agent_app(lambda: EchoAgent(delay)), sock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="echo_agent",
        description="An ACP agent on stdin/stdout that streams the prompt back word by word, asks permission"
        " when the prompt mentions 'tool' and honours session/cancel. It exits when stdin closes.",
        epilog="example: python -m agentproto.examples.run_prompt --allow -- python -m agentproto.examples.echo_agent",
    )
    parser.add_argument(
        "--delay", type=float, default=0.05, metavar="SECONDS", help="seconds between two words (default 0.05)"
    )
    parser.add_argument("--listen", metavar="HOST:PORT", help="serve at http://HOST:PORT/acp instead of stdin/stdout")
    args = parser.parse_args(argv)
    delay = max(0.0, args.delay)
    try:
        if args.listen is not None:
            host, sep, port = args.listen.rpartition(":")
            if not sep or not port.isdigit():
                parser.error(f"--listen wants HOST:PORT, got {args.listen!r}")
            asyncio.run(serve_network(host.strip("[]") or "127.0.0.1", int(port), delay))
        else:
            asyncio.run(v1.serve_agent_stdio(EchoAgent(delay)))
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - a command-line tool reports and exits
        print(f"echo-agent: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
