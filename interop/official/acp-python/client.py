"""Scenario client (interop/SCENARIO.md) on the official Python SDK,
agent-client-protocol 0.12.1 (module ``acp``).

    python3 interop/official/acp-python/client.py -- <agent command> [args...]

Spawns the agent, runs the steps over one connection and one session, and
prints one JSON line per step on stdout.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
)

STEP_S = 10.0
STEPS = [
    "initialize", "session_new", "prompt_echo", "permission", "fs", "cancel",
    "cancel_permission", "cancel_request", "error", "unknown_update",
]


def report(step: str, ok: bool, detail: str) -> None:
    print(json.dumps({"step": step, "ok": ok, "detail": detail}), flush=True)


def is_chunk(event: tuple[str, Any], text: str | None = None) -> bool:
    kind, update = event
    if kind != "update" or update.session_update != "agent_message_chunk" or update.content.type != "text":
        return False
    return text is None or update.content.text == text


def chunk_texts(seen: list[tuple[str, Any]]) -> list[str]:
    return [e[1].content.text for e in seen if is_chunk(e)]


class ScenarioClient:
    """The application side: records what the SDK hands it, answers requests."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self._waiters: list[tuple[int, Callable[[tuple[str, Any]], bool], asyncio.Future[Any]]] = []
        self.permission_mode = "allow"  # or "hold": the script answers later
        self.held: asyncio.Future[Any] | None = None
        # Raw messages seen by a stream observer, before the SDK parses them.
        self.wire_updates: list[Any] = []

    def record(self, event: tuple[str, Any]) -> None:
        self.events.append(event)
        for waiter in list(self._waiters):
            start, match, future = waiter
            if not future.done() and match(event):
                future.set_result(event)
                self._waiters.remove(waiter)

    async def wait_for(self, start: int, match: Callable[[tuple[str, Any]], bool], what: str) -> Any:
        for event in self.events[start:]:
            if match(event):
                return event
        future = asyncio.get_running_loop().create_future()
        waiter = (start, match, future)
        self._waiters.append(waiter)
        try:
            return await asyncio.wait_for(future, STEP_S)
        except asyncio.TimeoutError:
            raise TimeoutError(f"timed out after {STEP_S:.0f} s waiting for {what}") from None
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def observe(self, event: Any) -> None:
        message = event.message
        if event.direction.value == "incoming" and message.get("method") == "session/update":
            self.wire_updates.append((message.get("params") or {}).get("update"))
        if event.direction.value == "outgoing" and "id" in message and "method" in message:
            # Called once the request has been written to the agent's stdin.
            self.record(("sent", message["method"]))

    # --- handlers called by the SDK ---

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.record(("update", update))

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        self.record(("permission", tool_call))
        if self.permission_mode == "allow":
            return acp.RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))
        self.held = asyncio.get_running_loop().create_future()
        return await self.held

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> Any:
        return acp.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> Any:
        Path(path).write_text(content, encoding="utf-8")
        return acp.WriteTextFileResponse()


class Steps:
    def __init__(self, conn: acp.core.ClientSideConnection, app: ScenarioClient, workdir: str) -> None:
        self.conn = conn
        self.app = app
        self.dir = workdir
        self.session_id = ""
        self.slow: asyncio.Task[Any] | None = None

    def prompt(self, text: str) -> tuple[int, asyncio.Task[Any]]:
        """Starts a prompt; the task ends with (result, error, events seen before the result)."""
        start = len(self.app.events)

        def seen() -> list[tuple[str, Any]]:
            return [e for e in self.app.events[start:] if e[0] != "sent"]

        async def run() -> tuple[Any, Any, list[tuple[str, Any]]]:
            try:
                result = await self.conn.prompt(session_id=self.session_id, prompt=[acp.text_block(text)])
                return result, None, seen()
            except acp.RequestError as exc:
                return None, exc, seen()

        return start, asyncio.ensure_future(run())

    async def finish(self, task: asyncio.Task[Any], what: str = "the prompt result") -> tuple[Any, Any, list]:
        try:
            return await asyncio.wait_for(task, STEP_S)
        except asyncio.TimeoutError:
            raise TimeoutError(f"timed out after {STEP_S:.0f} s waiting for {what}") from None

    @staticmethod
    def describe(result: Any, error: Any) -> str:
        return f"prompt failed: {error}" if error is not None else f"stopReason {result.stop_reason}"

    async def initialize(self) -> tuple[bool, str]:
        r = await asyncio.wait_for(
            self.conn.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
                ),
                client_info=Implementation(name="python-scenario-client", version="0.0.0"),
            ),
            STEP_S,
        )
        name = r.agent_info.name if r.agent_info else None
        return r.protocol_version == 1, f"protocolVersion {r.protocol_version}, agent {name}"

    async def session_new(self) -> tuple[bool, str]:
        r = await asyncio.wait_for(self.conn.new_session(cwd=self.dir, mcp_servers=[]), STEP_S)
        self.session_id = r.session_id
        return bool(r.session_id), f"sessionId {r.session_id}"

    async def prompt_echo(self) -> tuple[bool, str]:
        result, error, seen = await self.finish(self.prompt("echo hello brave world")[1])
        words = chunk_texts(seen)
        ok = words == ["hello", "brave", "world"] and error is None and result.stop_reason == "end_turn"
        return ok, f"chunks before result {json.dumps(words)}, {self.describe(result, error)}"

    async def permission(self) -> tuple[bool, str]:
        self.app.permission_mode = "allow"
        result, error, seen = await self.finish(self.prompt("permission")[1])

        def at(match: Callable[[tuple[str, Any]], bool]) -> int:
            return next((i for i, e in enumerate(seen) if match(e)), -1)

        def upd(e: tuple[str, Any], kind: str) -> bool:
            return e[0] == "update" and e[1].session_update == kind

        call = at(lambda e: upd(e, "tool_call") and e[1].tool_call_id == "call-1")
        asked = at(lambda e: e[0] == "permission")
        said = at(lambda e: is_chunk(e, "permission:allow"))
        done = at(lambda e: upd(e, "tool_call_update") and e[1].status == "completed")
        ok = 0 <= call < said < done and asked >= 0 and error is None and result.stop_reason == "end_turn"
        detail = f"order tool_call={call} permission={asked} chunk={said} completed={done} (-1: missing)"
        return ok, f"{detail}, {self.describe(result, error)}"

    async def fs(self) -> tuple[bool, str]:
        source = Path(self.dir) / "in.txt"
        source.write_text("abc\n", encoding="utf-8")
        result, error, seen = await self.finish(self.prompt(f"fs {source}")[1])
        out_path = Path(f"{source}.out")
        out = out_path.read_text(encoding="utf-8") if out_path.exists() else None
        chunks = chunk_texts(seen)
        ok = out == "ABC\n" and "read:4" in chunks and error is None and result.stop_reason == "end_turn"
        return ok, f"in.txt.out {json.dumps(out)}, chunks {json.dumps(chunks)}, {self.describe(result, error)}"

    async def cancel(self) -> tuple[bool, str]:
        start, task = self.prompt("wait")
        await self.app.wait_for(start, lambda e: is_chunk(e, "waiting"), "chunk 'waiting'")
        await self.conn.cancel(session_id=self.session_id)
        result, error, _ = await self.finish(task, "the prompt result after session/cancel")
        return error is None and result.stop_reason == "cancelled", self.describe(result, error)

    async def cancel_permission(self) -> tuple[bool, str]:
        self.app.permission_mode = "hold"
        self.app.held = None
        start, task = self.prompt("permission")
        await self.app.wait_for(start, lambda e: e[0] == "permission", "session/request_permission")
        await self.conn.cancel(session_id=self.session_id)
        # The SDK leaves the held request pending on session/cancel, so the
        # script answers it as the protocol requires.
        held = self.app.held
        by = "the script (the SDK does not answer it on session/cancel)"
        if held is None or held.done():
            by = "someone other than the script"
        else:
            held.set_result(acp.RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled")))
        result, error, seen = await self.finish(task, "the prompt result after session/cancel")
        chunks = chunk_texts(seen)
        ok = "permission:cancelled" in chunks and error is None and result.stop_reason == "cancelled"
        return ok, f"permission answered cancelled by {by}; chunks {json.dumps(chunks)}, {self.describe(result, error)}"

    async def cancel_request(self) -> tuple[bool, str]:
        # ext_method adds the leading "_" itself.
        start = len(self.app.events)
        self.slow = asyncio.ensure_future(self.conn.ext_method("agentproto/slow", {}))
        await self.app.wait_for(start, lambda e: e == ("sent", "_agentproto/slow"), "_agentproto/slow to be sent")
        return False, (
            "_agentproto/slow sent and left pending: agent-client-protocol 0.12.1 cannot send "
            "$/cancel_request (no cancellation API, and ext_notification always prefixes '_')"
        )

    async def error(self) -> tuple[bool, str]:
        result, error, _ = await self.finish(self.prompt("error")[1])
        if error is None:
            return False, f"prompt succeeded: {self.describe(result, error)}"
        data = error.data if isinstance(error.data, dict) else {}
        ok = error.code == 4242 and data.get("reason") == "scenario"
        return ok, f"error code {error.code}, data {json.dumps(error.data)}"

    async def unknown_update(self) -> tuple[bool, str]:
        wire_start = len(self.app.wire_updates)
        result, error, seen = await self.finish(self.prompt("unknown-update")[1])
        unknown = next(
            (i for i, e in enumerate(seen) if e[0] == "update" and e[1].session_update == "agentproto_future_update"),
            -1,
        )
        after = next((i for i, e in enumerate(seen) if is_chunk(e, "after-unknown")), -1)
        on_wire = any(
            isinstance(u, dict) and u.get("sessionUpdate") == "agentproto_future_update"
            for u in self.app.wire_updates[wire_start:]
        )
        ok = 0 <= unknown < after and error is None and result.stop_reason == "end_turn"
        if unknown >= 0:
            got = f"delivered: {seen[unknown][1].model_dump(by_alias=True)}"
        elif on_wire:
            got = "not delivered to the application (it was on the wire; the SDK dropped it)"
        else:
            got = "not delivered to the application (not on the wire either)"
        found = "seen" if after >= 0 else "missing"
        return ok, f"unknown update {got}; after-unknown {found}; {self.describe(result, error)}"


async def run_steps(steps: Steps) -> int:
    reported = 0
    skip = False
    for name in STEPS:
        if skip:
            ok, detail = False, "skipped"
        else:
            try:
                ok, detail = await getattr(steps, name)()
            except (TimeoutError, asyncio.TimeoutError) as exc:
                ok, detail = False, str(exc) or f"timed out after {STEP_S:.0f} s"
            except Exception as exc:  # a failed step never stops the run
                ok, detail = False, f"error: {type(exc).__name__}: {exc}"
            skip = not ok and name in ("initialize", "session_new")
        report(name, ok, detail)
        reported += 1
    if steps.slow is not None:
        steps.slow.cancel()
    return reported


async def main(agent_argv: list[str]) -> int:
    app = ScenarioClient()
    reported = 0
    with tempfile.TemporaryDirectory(prefix="acp-interop-py-") as workdir:
        try:
            async with acp.spawn_agent_process(
                app,
                agent_argv[0],
                *agent_argv[1:],
                env=dict(os.environ),
                transport_kwargs={"stderr": None},  # inherit: the agent logs to our stderr
                observers=[app.observe],
            ) as (conn, _process):
                reported = await run_steps(Steps(conn, app, workdir))
            # Leaving spawn_agent_process closes the agent's stdin and waits for
            # it to exit (bounded by the SDK: 2 s, then terminate, then kill).
        except Exception as exc:
            # Closing can fail when the agent already died; that only matters
            # if steps went unreported.
            print(f"[python-scenario-client] connection error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0 if reported == len(STEPS) else 1

if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print("usage: client.py -- <agent command> [args...]", file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(argv[argv.index("--") + 1 :])))
