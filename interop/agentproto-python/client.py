"""The scenario client of `interop/SCENARIO.md`, on agentproto's Python SDK.

    python3 interop/agentproto-python/client.py -- <agent command> [args…]

Spawns the agent (its stderr goes to this program's stderr), runs the steps in order
over one connection and one session, and prints one JSON line per step on stdout.
Exits 0 once every step is printed, 2 when the command line is wrong or the agent
cannot be started.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from agentproto.acp import AcpOptions, v1
from agentproto.acp.errors import PeerError
from agentproto.acp.fs import FsRoots
from agentproto.acp.options import AcpEvent
from agentproto.codec import Raw, Unknown
from agentproto.jsonrpc import CancellationToken, ConnectionEvent, ErrorCode

NAME = "agentproto-python-scenario-client"
STEP_SECONDS = 10.0
STEPS = (
    "initialize",
    "session_new",
    "prompt_echo",
    "permission",
    "fs",
    "cancel",
    "cancel_permission",
    "cancel_request",
    "error",
    "unknown_update",
)

T = TypeVar("T")


class StepFailed(Exception):
    """A step's outcome is a failure; the message is its detail."""


@dataclass(frozen=True, slots=True)
class Seen:
    """Something the application was handed, in arrival order."""

    kind: Literal["chunk", "tool_call", "tool_call_status", "unknown", "permission_asked", "permission_released"]
    value: str = ""

    def __str__(self) -> str:
        return f"{self.kind}({self.value})" if self.value else self.kind


class Journal:
    """What the application saw, with a way to wait for one thing to arrive."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self._changed = asyncio.Event()

    def add(self, seen: Seen) -> None:
        self.seen.append(seen)
        self._changed.set()

    def since(self, start: int) -> list[Seen]:
        return self.seen[start:]

    async def wait_for(self, start: int, want: Callable[[Seen], bool]) -> Seen:
        """The first thing seen at or after `start` that `want` accepts (unbounded: the
        step's time limit bounds it)."""
        while True:
            hit = next((s for s in self.seen[start:] if want(s)), None)
            if hit is not None:
                return hit
            self._changed.clear()
            await self._changed.wait()


class ScenarioClient(v1.Client):
    def __init__(self, journal: Journal, files: FsRoots) -> None:
        self.journal = journal
        self.files = files
        self.answer: str | None = "allow"
        """The option permission requests are answered with; `None` leaves them pending."""

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.journal.add(Seen("permission_asked"))
        if self.answer is not None:
            return v1.RequestPermissionResponse(outcome=v1.SelectedPermissionOutcome(option_id=self.answer))
        try:
            # Left pending: sending `session/cancel` makes the connection answer it
            # `cancelled` for this handler, and fire the handler's token and stop it.
            await cx.cancellation_token.wait()
        finally:
            if cx.is_cancelled:
                self.journal.add(Seen("permission_released"))
        # Not sent: the connection has answered already.
        return v1.RequestPermissionResponse(outcome=v1.RequestPermissionOutcomeCancelled())

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = params.update
        if isinstance(update, v1.SessionUpdateAgentMessageChunk):
            content = update.content
            text = content.text if isinstance(content, v1.TextContent) else repr(content)
            self.journal.add(Seen("chunk", text))
        elif isinstance(update, v1.ToolCall):
            self.journal.add(Seen("tool_call", update.tool_call_id))
        elif isinstance(update, v1.SessionUpdateToolCallUpdate):
            if isinstance(update.status, str):
                self.journal.add(Seen("tool_call_status", update.status))
        elif isinstance(update, Unknown):
            self.journal.add(Seen("unknown", bytes(update.raw).decode()))

    async def read_text_file(self, cx: v1.ClientContext, params: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        return await self.files.read_text_file(params)

    async def write_text_file(self, cx: v1.ClientContext, params: v1.WriteTextFileRequest) -> v1.WriteTextFileResponse:
        return await self.files.write_text_file(params)


def chunks(seen: list[Seen]) -> list[str]:
    return [s.value for s in seen if s.kind == "chunk"]


def position(seen: list[Seen], kind: str, value: str) -> int:
    """Where `kind(value)` first is in `seen`; -1 when it is not."""
    return next((i for i, s in enumerate(seen) if s.kind == kind and s.value == value), -1)


def shown(seen: list[Seen]) -> str:
    return "[" + ", ".join(str(s) for s in seen) + "]"


class Run:
    """The steps after `initialize` and `session/new`, over one session."""

    def __init__(self, agent: v1.AgentConnection, app: ScenarioClient, session: str, directory: Path) -> None:
        self.agent = agent
        self.app = app
        self.journal = app.journal
        self.session = session
        self.directory = directory
        self.tasks: list[asyncio.Task[Any]] = []

    def start(self, call: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Runs a call in the background; whatever is left of it when the step ends is cancelled."""
        task = asyncio.ensure_future(call)
        self.tasks.append(task)
        return task

    def end_step(self) -> None:
        for task in self.tasks:
            task.cancel()
        self.tasks.clear()

    def request(self, text: str) -> v1.PromptRequest:
        return v1.PromptRequest(session_id=self.session, prompt=[v1.TextContent(text=text)])

    async def prompt(self, text: str) -> str:
        """Runs a prompt turn to its end; its stop reason."""
        return (await self.agent.prompt(self.request(text))).stop_reason

    async def prompt_echo(self) -> str:
        start = len(self.journal.seen)
        stop = await self.prompt("echo hello brave world")
        words = chunks(self.journal.since(start))
        detail = f"chunks {words}, {stop}"
        if words != ["hello", "brave", "world"] or stop != "end_turn":
            raise StepFailed(detail)
        return detail

    async def permission(self) -> str:
        self.app.answer = "allow"
        start = len(self.journal.seen)
        stop = await self.prompt("permission")
        seen = self.journal.since(start)
        call = position(seen, "tool_call", "call-1")
        said = position(seen, "chunk", "permission:allow")
        done = position(seen, "tool_call_status", "completed")
        detail = f"{shown(seen)}, {stop}"
        if not (0 <= call < said < done and stop == "end_turn"):
            raise StepFailed(detail)
        return detail

    async def fs(self) -> str:
        source = self.directory / "in.txt"
        source.write_text("abc\n", encoding="utf-8")
        start = len(self.journal.seen)
        stop = await self.prompt(f"fs {source}")
        target = self.directory / "in.txt.out"
        out = target.read_text(encoding="utf-8") if target.exists() else None
        read = position(self.journal.since(start), "chunk", "read:4") >= 0
        detail = f"in.txt.out = {json.dumps(out)}, chunk read:4 seen: {read}, {stop}"
        if out != "ABC\n" or not read or stop != "end_turn":
            raise StepFailed(detail)
        return detail

    async def cancel(self) -> str:
        start = len(self.journal.seen)
        turn = self.start(self.prompt("wait"))
        await self.journal.wait_for(start, lambda s: s.kind == "chunk" and s.value == "waiting")
        await self.agent.cancel(v1.CancelNotification(session_id=self.session))
        stop = await turn
        if stop != "cancelled":
            raise StepFailed(f"stopReason {stop}")
        return "stopReason cancelled"

    async def cancel_permission(self) -> str:
        self.app.answer = None
        start = len(self.journal.seen)
        turn = self.start(self.prompt("permission"))
        await self.journal.wait_for(start, lambda s: s.kind == "permission_asked")
        await self.agent.cancel(v1.CancelNotification(session_id=self.session))
        stop = await turn
        seen = self.journal.since(start)
        released = position(seen, "permission_released", "") >= 0
        said = position(seen, "chunk", "permission:cancelled") >= 0
        by = (
            "by the SDK (it released the held handler)" if released else "not by the SDK (the handler was not released)"
        )
        detail = f"permission answered cancelled {by}; chunk permission:cancelled seen: {said}; stopReason {stop}"
        if not (released and said and stop == "cancelled"):
            raise StepFailed(detail)
        return detail

    async def cancel_request(self) -> str:
        token = CancellationToken()
        slow = self.start(self.agent.with_cancellation(token).ext_method("_agentproto/slow", b"{}"))
        # One loop turn lets the call queue its request; the flush puts it on the wire.
        # (The SDK would order the cancel after the request anyway.)
        await asyncio.sleep(0)
        await self.agent.flush()
        token.cancel()  # the SDK sends `$/cancel_request` and keeps waiting for the answer
        try:
            result = await slow
        except PeerError as e:
            detail = (
                f"$/cancel_request sent by the SDK (with_cancellation); answered {e.error.code} {e.error.message!r}"
            )
            if e.error.code != ErrorCode.REQUEST_CANCELLED:
                raise StepFailed(detail) from None
            return detail
        raise StepFailed(f"$/cancel_request sent by the SDK (with_cancellation); answered {bytes(result).decode()}")

    async def error(self) -> str:
        try:
            stop = await self.prompt("error")
        except PeerError as e:
            data = e.error.data
            members = json.loads(bytes(data)) if isinstance(data, Raw) else None
            reason = members.get("reason") if isinstance(members, dict) else None
            detail = f"error {e.error.code} {e.error.message!r}, data.reason {reason!r}"
            if e.error.code != 4242 or reason != "scenario":
                raise StepFailed(detail) from None
            return detail
        raise StepFailed(f"answered {stop}")

    async def unknown_update(self) -> str:
        start = len(self.journal.seen)
        stop = await self.prompt("unknown-update")
        seen = self.journal.since(start)
        unknown = next(
            (i for i, s in enumerate(seen) if s.kind == "unknown" and '"agentproto_future_update"' in s.value), -1
        )
        after = position(seen, "chunk", "after-unknown")
        detail = f"{shown(seen)}, {stop}"
        if not (0 <= unknown < after and stop == "end_turn"):
            raise StepFailed(detail)
        return detail


def report(step: str, ok: bool, detail: str) -> None:
    print(json.dumps({"step": step, "ok": ok, "detail": detail}), flush=True)


async def bounded_step(step: str, run: Callable[[], Awaitable[str]]) -> bool:
    """Runs one step within its time limit and prints its line; whether it passed."""
    try:
        async with asyncio.timeout(STEP_SECONDS):
            detail = await run()
    except TimeoutError:
        report(step, False, f"timed out after {STEP_SECONDS:.0f} s")
        return False
    except StepFailed as e:
        report(step, False, str(e))
        return False
    except Exception as e:  # noqa: BLE001 - a failed step never stops the run
        report(step, False, f"{type(e).__name__}: {e}")
        return False
    report(step, True, detail)
    return True


async def scenario(agent: v1.AgentConnection, app: ScenarioClient, directory: Path) -> None:
    async def initialize() -> str:
        fs = v1.FileSystemCapabilities(read_text_file=True, write_text_file=True)
        request = v1.InitializeRequest(
            protocol_version=1,
            client_capabilities=v1.ClientCapabilities(fs=fs),
            client_info=v1.Implementation(name=NAME, version="0.0.0"),
        )
        response = await agent.initialize(request)
        info = response.agent_info
        detail = f"protocolVersion {response.protocol_version}, agent {info.name if info else None}"
        if response.protocol_version != 1:
            raise StepFailed(detail)
        return detail

    session = ""

    async def session_new() -> str:
        nonlocal session
        response = await agent.new_session(v1.NewSessionRequest(cwd=str(directory), mcp_servers=[]))
        session = response.session_id
        if not session:
            raise StepFailed("empty sessionId")
        return f"sessionId {session}"

    if not await bounded_step("initialize", initialize):
        for step in STEPS[1:]:
            report(step, False, "skipped")
        return
    if not await bounded_step("session_new", session_new):
        for step in STEPS[2:]:
            report(step, False, "skipped")
        return
    run = Run(agent, app, session, directory)
    steps: list[tuple[str, Callable[[], Awaitable[str]]]] = [
        ("prompt_echo", run.prompt_echo),
        ("permission", run.permission),
        ("fs", run.fs),
        ("cancel", run.cancel),
        ("cancel_permission", run.cancel_permission),
        ("cancel_request", run.cancel_request),
        ("error", run.error),
        ("unknown_update", run.unknown_update),
    ]
    for step, body in steps:
        try:
            await bounded_step(step, body)
        finally:
            run.end_step()


def log(event: ConnectionEvent | AcpEvent) -> None:
    print(f"[{NAME}] {event!r}", file=sys.stderr, flush=True)


async def main(command: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="agentproto-python-scenario-") as temp:
        directory = Path(temp).resolve()
        app = ScenarioClient(Journal(), FsRoots([directory]))
        try:
            agent, process = await v1.spawn_agent(command, app, AcpOptions(observer=log))
        except OSError as e:
            print(f"[{NAME}] cannot start {command[0]}: {e}", file=sys.stderr)
            return 2
        # Leaving `async with` closes the agent's stdin, waits (bounded) for it to exit,
        # then ends whatever is left of its process group.
        async with process:
            await scenario(agent, app, directory)
        print(f"[{NAME}] agent exited with {process.returncode}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if "--" not in arguments or arguments.index("--") == len(arguments) - 1:
        print("usage: client.py -- <agent command> [args…]", file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(arguments[arguments.index("--") + 1 :])))
