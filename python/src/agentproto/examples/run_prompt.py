"""An ACP client that spawns any agent command, runs one prompt and prints the updates
as they stream in.

    python -m agentproto.examples.run_prompt [--allow | --reject] [--prompt TEXT] -- <agent command> [args…]
    python -m agentproto.examples.run_prompt [--allow | --reject] [--prompt TEXT] --url http://HOST:PORT/acp [--ws]

With `--url` it connects to an agent served over the network instead of spawning one:
over Streamable HTTP, or over WebSocket with `--ws`.

Message chunks go to stdout, everything else (tool calls, permissions, the stop reason)
to stderr. Permission requests are answered from the flag: `--allow` picks the first
"allow" option, `--reject` (the default) the first "reject" one. Ctrl-C sends
`session/cancel`. Files are served from the current directory only. The agent, and
whatever it started in its process group, is gone when this program exits, whichever
way it exits (exit status 1 when the prompt failed); on Linux even a SIGKILL of this
program takes the agent along (`AcpOptions.die_with_parent`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from agentproto import __version__
from agentproto.acp import v1
from agentproto.acp.fs import FsRoots
from agentproto.acp.options import AcpOptions
from agentproto.codec import Unknown, encode


class Printer(v1.Client):
    def __init__(self, allow: bool, files: FsRoots) -> None:
        self.allow = allow
        self.files = files

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        wanted = ("allow_once", "allow_always") if self.allow else ("reject_once", "reject_always")
        choice = next((o for o in params.options if o.kind in wanted), None)
        shown = "cancelled" if choice is None else choice.name
        print(f"[permission] {params.tool_call.tool_call_id} -> {shown}", file=sys.stderr)
        outcome: v1.RequestPermissionOutcome
        if choice is None:
            outcome = v1.RequestPermissionOutcomeCancelled()
        else:
            outcome = v1.SelectedPermissionOutcome(option_id=choice.option_id)
        return v1.RequestPermissionResponse(outcome=outcome)

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = params.update
        if isinstance(update, v1.SessionUpdateAgentMessageChunk) and isinstance(update.content, v1.TextContent):
            sys.stdout.write(update.content.text)
            sys.stdout.flush()
        elif isinstance(update, v1.ToolCall):
            print(f"[tool] {update.tool_call_id} {update.title}", file=sys.stderr)
        elif isinstance(update, Unknown):
            print(f"[unknown update] {bytes(update.raw).decode()}", file=sys.stderr)
        else:
            print(f"[update] {encode(update).decode()}", file=sys.stderr)

    async def read_text_file(self, cx: v1.ClientContext, params: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        return await self.files.read_text_file(params)

    async def write_text_file(self, cx: v1.ClientContext, params: v1.WriteTextFileRequest) -> v1.WriteTextFileResponse:
        return await self.files.write_text_file(params)


async def run(agent: v1.AgentConnection, cwd: str, text: str) -> str:
    """Initializes, opens a session and runs one prompt; Ctrl-C cancels it. Returns the stop reason."""
    caps = v1.ClientCapabilities(fs=v1.FileSystemCapabilities(read_text_file=True, write_text_file=True))
    info = v1.Implementation(name="run-prompt", version=__version__)
    await agent.initialize(
        v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION, client_capabilities=caps, client_info=info)
    )
    session = (await agent.new_session(v1.NewSessionRequest(cwd=cwd, mcp_servers=[]))).session_id
    prompt = v1.PromptRequest(session_id=session, prompt=[v1.TextContent(text=text)])
    loop = asyncio.get_running_loop()
    cancels: set[asyncio.Task[None]] = set()

    def interrupted() -> None:
        # The turn goes on until the agent answers it (`cancelled`).
        cancels.add(loop.create_task(agent.cancel(v1.CancelNotification(session_id=session))))

    loop.add_signal_handler(signal.SIGINT, interrupted)
    try:
        response = await agent.prompt(prompt)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    return response.stop_reason


async def amain_remote(allow: bool, text: str, url: str, websocket: bool) -> int:
    from agentproto.acp.remote import connect

    cwd = os.getcwd()
    try:
        remote = await connect(url, Printer(allow, FsRoots([cwd])), websocket=websocket)
    except (OSError, ValueError) as e:
        print(f"run-prompt: cannot connect to {url}: {e}", file=sys.stderr)
        return 1
    async with remote:
        try:
            stop = await run(remote.agent, cwd, text)
        except Exception as e:  # noqa: BLE001 - a command-line tool reports and exits
            print(f"\nrun-prompt: {e}", file=sys.stderr)
            return 1
    print()
    print(f"[stop] {stop}", file=sys.stderr)
    return 0


async def amain(allow: bool, text: str, command: list[str]) -> int:
    cwd = os.getcwd()
    options = AcpOptions(die_with_parent=sys.platform.startswith("linux"))
    agent, process = await v1.spawn_agent(command, Printer(allow, FsRoots([cwd])), options)
    # `async with`: on every way out the agent goes, with whatever it started.
    async with process:
        try:
            stop = await run(agent, cwd, text)
        except Exception as e:  # noqa: BLE001 - a command-line tool reports and exits
            print(f"\nrun-prompt: {e}", file=sys.stderr)
            return 1
    print()
    print(f"[stop] {stop}", file=sys.stderr)
    return 0


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="run_prompt",
        usage="%(prog)s [-h] [--allow | --reject] [--prompt TEXT] (-- AGENT_COMMAND [ARG ...] | --url URL [--ws])",
        description="Spawns an ACP agent (or connects to one served at --url), runs one prompt and prints the"
        " agent's message on stdout (tool calls, permissions and other updates on stderr). Ctrl-C cancels the turn.",
        epilog="example: %(prog)s --allow -- python -m agentproto.examples.echo_agent",
    )
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--allow", action="store_true", help="allow permission requests")
    choice.add_argument("--reject", action="store_true", help="reject permission requests (the default)")
    parser.add_argument("--prompt", metavar="TEXT", default="hello from run-prompt", help="the prompt text")
    parser.add_argument("--url", metavar="URL", help="connect to the agent at URL (http://HOST:PORT/acp)")
    parser.add_argument("--ws", action="store_true", help="with --url: over WebSocket, not Streamable HTTP")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # What follows `--` is the agent's command line, its flags included.
    split = args.index("--") if "--" in args else len(args)
    command = args[split + 1 :]
    flags = parser()
    options = flags.parse_args(args[:split])  # `--help` prints the usage and exits 0
    if options.url is not None:
        if command:
            flags.error("give either --url or an agent command after --, not both")
        return asyncio.run(amain_remote(options.allow, options.prompt, options.url, options.ws))
    if options.ws:
        flags.error("--ws needs --url")
    if not command:
        flags.error("no agent command: give it after -- (or --url)")  # exits 2
    try:
        return asyncio.run(amain(options.allow, options.prompt, command))
    except OSError as e:
        print(f"run-prompt: cannot start the agent: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
