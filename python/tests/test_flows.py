"""Every flow vector (`vectors/acp/v1/flows/*.json`, format in `vectors/README.md`,
"Flows") through the real Python roles.

The side under test is `v1.connect_agent` or `v1.connect_client` serving one of the test
applications of `flow_apps.py`, over an in-memory pipe; the flow plays the other side
with raw NDJSON lines. Outgoing validation (strict mode) is on. Every wait is bounded by
`STEP_TIMEOUT`; nothing sleeps. Known failures are listed in
`vectors/baselines/python.json` with a reason: an unlisted failure fails, and so does a
listed flow that passes (stale), unless its reason starts with `race:`.
`AGENTPROTO_VECTORS=acp/v1/flows/client-` selects flows by id prefix.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from msgspec import UNSET

from agentproto.acp import v1
from agentproto.acp.errors import AcpError, PeerError
from agentproto.acp.options import AcpOptions
from agentproto.codec import encode
from agentproto.jsonrpc import ConnectionOptions, LineSplitter
from agentproto.jsonrpc.memory import PipeReader, PipeWriter, duplex
from tests.flow_apps import BARRIER, STEP_TIMEOUT, FlowAgent, FlowClient
from tests.test_vectors import BASELINE, same
from tests.vector_files import VECTORS, flow_files, selected


class Flow:
    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        self.path = path
        self.id: str = data["id"]
        self.role: str = data["role"]
        self.setup: dict[str, Any] = data.get("setup") or {}
        self.steps: list[dict[str, Any]] = data["steps"]


FLOWS = [Flow(p) for p in flow_files("acp")]


class StepFailed(AssertionError):
    pass


# ---------------------------------------------------------------------------
# Patterns


def var_name(text: str) -> str | None:
    match = re.fullmatch(r"\$\{(.+)\}", text)
    return match.group(1) if match else None


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    """Replaces `"${name}"` strings by the values bound to them."""
    if isinstance(value, str):
        name = var_name(value)
        if name is None:
            return value
        if name not in variables:
            raise StepFailed(f"variable {value} is not bound yet")
        return variables[name]
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def matches(pattern: Any, actual: Any, variables: dict[str, Any], at: str = "$") -> None:
    """Structural match: `"$any"` matches anything, `"${name}"` binds or must equal, an
    object with `"$partial": true` allows more members, numbers compare by value."""
    if pattern == "$any":
        return
    if isinstance(pattern, str) and var_name(pattern) is not None:
        name = var_name(pattern)
        assert name is not None
        if name in variables:
            if not same(variables[name], actual):
                raise StepFailed(f"at {at}: {pattern} is {variables[name]!r}, found {actual!r}")
        else:
            variables[name] = actual
        return
    if isinstance(pattern, dict):
        if not isinstance(actual, dict):
            raise StepFailed(f"at {at}: expected an object, found {json.dumps(actual)}")
        for key, want in pattern.items():
            if key == "$partial":
                continue
            if key not in actual:
                raise StepFailed(f"at {at}: member `{key}` is missing")
            matches(want, actual[key], variables, f"{at}.{key}")
        if pattern.get("$partial") is not True:
            extra = [k for k in actual if k not in pattern]
            if extra:
                raise StepFailed(f"at {at}: unexpected member `{extra[0]}`")
        return
    if isinstance(pattern, list):
        if not isinstance(actual, list):
            raise StepFailed(f"at {at}: expected an array, found {json.dumps(actual)}")
        if len(pattern) != len(actual):
            raise StepFailed(f"at {at}: expected {len(pattern)} items, found {len(actual)}")
        for i, (want, got) in enumerate(zip(pattern, actual, strict=True)):
            matches(want, got, variables, f"{at}[{i}]")
        return
    if not same(pattern, actual):
        raise StepFailed(f"at {at}: expected {json.dumps(pattern)}, found {json.dumps(actual)}")


def assign(
    patterns: list[Any], actual: list[Any], used: list[bool], variables: dict[str, Any]
) -> dict[str, Any] | None:
    """Matches each pattern to a different unused line (backtracking; flows use a few)."""
    if not patterns:
        return variables
    first, rest = patterns[0], patterns[1:]
    for i, line in enumerate(actual):
        if used[i]:
            continue
        attempt = dict(variables)
        try:
            matches(first, line, attempt)
        except StepFailed:
            continue
        used[i] = True
        done = assign(rest, actual, used, attempt)
        if done is not None:
            return done
        used[i] = False
    return None


# ---------------------------------------------------------------------------
# Running a flow


class Call:
    def __init__(self, method: str, task: asyncio.Task[Any]) -> None:
        self.method = method
        self.task: asyncio.Task[Any] | None = task


class Run:
    """The flow's side of the pipe and the flow's state."""

    def __init__(self, reader: PipeReader, writer: PipeWriter, agent: v1.AgentConnection | None, flow: Flow) -> None:
        self.reader = reader
        self.writer = writer
        self.splitter = LineSplitter()
        self.lines: list[bytes] = []
        self.variables: dict[str, Any] = {}
        self.calls: list[Call] = []
        self.barriers = 0
        self.agent = agent
        self.client_caps = flow.setup.get("clientCapabilities")

    async def step(self, step: dict[str, Any]) -> None:
        if len(step) != 1:
            raise StepFailed(f"a step is an object with one member, found {step}")
        ((kind, body),) = step.items()
        if kind == "send":
            await self.send(substitute(body, self.variables))
        elif kind == "expect":
            self.expect(body, await self.next_line(f"expected {json.dumps(body)}, but"))
        elif kind == "expect_unordered":
            await self.expect_unordered(body)
        elif kind == "expect_silence":
            await self.silence()
        elif kind == "call":
            self.call(body)
        elif kind == "expect_call":
            await self.expect_call(body)
        else:
            raise StepFailed(f"unknown step kind {kind!r}")

    async def send(self, message: Any) -> None:
        self.writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        try:
            await asyncio.wait_for(self.writer.drain(), STEP_TIMEOUT)
        except TimeoutError:
            raise StepFailed(f"sending {json.dumps(message)} did not complete within {STEP_TIMEOUT} s") from None

    async def next_line(self, context: str) -> bytes:
        """The next line our side writes."""
        try:
            async with asyncio.timeout(STEP_TIMEOUT):
                while not self.lines:
                    chunk = await self.reader.read(65536)
                    frames = self.splitter.feed(chunk) if chunk else self.splitter.finish()
                    self.lines += [f for f in frames if isinstance(f, bytes)]
                    if not chunk and not self.lines:
                        raise StepFailed(f"{context} our side closed its output")
        except TimeoutError:
            raise StepFailed(f"{context} nothing was written within {STEP_TIMEOUT} s") from None
        return self.lines.pop(0)

    def expect(self, pattern: Any, line: bytes) -> None:
        try:
            actual = json.loads(line)
        except ValueError:
            raise StepFailed(f"expected {json.dumps(pattern)}, got a line that is not JSON: {line!r}") from None
        variables = dict(self.variables)
        try:
            matches(pattern, actual, variables)
        except StepFailed as e:
            raise StepFailed(f"{e}\n  expected: {json.dumps(pattern)}\n  actual:   {line.decode()}") from None
        self.variables = variables

    async def expect_unordered(self, patterns: list[Any]) -> None:
        lines: list[bytes] = []
        for _ in patterns:
            lines.append(await self.next_line(f"expected {len(patterns)} message(s) in any order, got {lines}, then"))
        actual = [json.loads(line) for line in lines]
        variables = assign(patterns, actual, [False] * len(actual), dict(self.variables))
        if variables is None:
            shown = "\n    ".join(line.decode() for line in lines)
            raise StepFailed(
                f"the lines do not match the patterns in any order\n"
                f"  expected (any order): {json.dumps(patterns)}\n  actual:\n    {shown}"
            )
        self.variables = variables

    async def silence(self) -> None:
        """Sends the barrier notification and request; the next line must answer the request."""
        self.barriers += 1
        n = self.barriers
        id = f"flow-barrier-{n}"
        await self.send({"jsonrpc": "2.0", "method": BARRIER, "params": {"n": n}})
        await self.send({"jsonrpc": "2.0", "id": id, "method": BARRIER, "params": {"n": n}})
        line = await self.next_line(f"expected the answer to barrier {id}, but")
        actual = json.loads(line)
        if actual.get("id") != id:
            raise StepFailed(f"expected silence (up to barrier {id}), but our side wrote: {line.decode()}")
        error = actual.get("error")
        if "result" not in actual and not (isinstance(error, dict) and error.get("code") == -32600):
            raise StepFailed(f"barrier {id} was answered with an error: {line.decode()}")

    def call(self, body: dict[str, Any]) -> None:
        if self.agent is None:
            raise StepFailed("`call` steps are for the client role only")
        method = body["method"]
        params = substitute(body.get("params", {}), self.variables)
        if method == "initialize" and self.client_caps is not None:
            params.setdefault("clientCapabilities", self.client_caps)
        self.calls.append(Call(method, asyncio.ensure_future(start_call(self.agent, method, params))))

    async def expect_call(self, body: dict[str, Any]) -> None:
        method = body["method"]
        call = next((c for c in self.calls if c.method == method and c.task is not None), None)
        if call is None or call.task is None:
            raise StepFailed(f"no unchecked `{method}` call to check")
        task, call.task = call.task, None
        done, _ = await asyncio.wait((task,), timeout=STEP_TIMEOUT)
        if not done:
            task.cancel()
            raise StepFailed(f"the `{method}` call did not end within {STEP_TIMEOUT} s")
        error = task.exception()
        variables = dict(self.variables)
        try:
            if "ok" in body:
                if error is not None:
                    raise StepFailed("a different kind of outcome")
                matches(body["ok"], task.result(), variables, "$ok")
            elif "error" in body:
                if not isinstance(error, PeerError):
                    raise StepFailed("a different kind of outcome")
                got: dict[str, Any] = {"code": error.error.code, "message": error.error.message}
                data = error.error.data
                if not isinstance(data, type(UNSET)):
                    got["data"] = json.loads(bytes(data))
                matches(body["error"], got, variables, "$error")
            elif "local_error" in body:
                if not isinstance(error, AcpError) or isinstance(error, PeerError):
                    raise StepFailed("a different kind of outcome")
                if error.variant != body["local_error"]:
                    raise StepFailed(f"local error {error.variant} ({error})")
            else:
                raise StepFailed("expect_call needs one of `ok`, `error`, `local_error`")
        except StepFailed as e:
            raise StepFailed(
                f"the `{method}` call: {e}\n  expected: {json.dumps(body)}\n  actual:   {describe(task)}"
            ) from None
        self.variables = variables


def describe(task: asyncio.Task[Any]) -> str:
    error = task.exception()
    if error is None:
        return f"ok {json.dumps(task.result())}"
    if isinstance(error, PeerError):
        return f"error {error.error!r}"
    if isinstance(error, AcpError):
        return f"local_error {error.variant} ({error})"
    return f"raised {error!r}"


async def start_call(agent: v1.AgentConnection, method: str, params: dict[str, Any]) -> Any:
    """The typed call of `method` on the client application's handle; its result
    re-encoded (`None` for a notification)."""
    info = next((m for m in v1.METHODS if m.name == method and m.side == "agent"), None)
    if info is None:
        raise StepFailed(f"the runner cannot call `{method}`")
    typed = v1.SURFACE.decode(info.params, json.dumps(params).encode(), "$.params").value
    result = await getattr(agent, info.handler)(typed)
    return None if result is None else json.loads(encode(result))


async def run_flow(flow: Flow, events: list[Any]) -> None:
    (ours_in, ours_out), (theirs_in, theirs_out) = duplex(1 << 20)
    # Strict on, as the runner rules say; a short grace, since the flow's end leaves
    # turns waiting that only the shutdown ends.
    options = AcpOptions(strict=True, observer=events.append)
    options.connection = ConnectionOptions(allow_null_id=True, shutdown_grace=1.0)
    agent: v1.AgentConnection | None = None
    if flow.role == "agent":
        connection, _ = v1.connect_agent(FlowAgent(flow.setup), ours_in, ours_out, options)
    elif flow.role == "client":
        connection, agent = v1.connect_client(FlowClient(flow.setup), ours_in, ours_out, options)
    else:
        raise StepFailed(f"unknown role {flow.role!r}")
    running = asyncio.create_task(connection.run())
    run = Run(theirs_in, theirs_out, agent, flow)
    try:
        for index, step in enumerate(flow.steps):
            try:
                await run.step(step)
            except StepFailed as e:
                raise StepFailed(f"step {index}: {e}") from None
    finally:
        for call in run.calls:
            if call.task is not None:
                call.task.cancel()
        theirs_out.close()
        done, _ = await asyncio.wait((running, *(c.task for c in run.calls if c.task)), timeout=STEP_TIMEOUT)
        if running not in done:
            running.cancel()
            await asyncio.wait((running,))
        for task in done:
            if not task.cancelled():
                task.exception()


def run(flow: Flow) -> None:
    """Runs one flow; raises AssertionError naming the step and what differed."""
    events: list[Any] = []
    try:
        asyncio.run(asyncio.wait_for(run_flow(flow, events), 60))
    except StepFailed as e:
        shown = "\n    ".join(repr(event) for event in events)
        raise AssertionError(f"{flow.id}: {e}" + (f"\n  events of our side:\n    {shown}" if events else "")) from None


@pytest.mark.parametrize("flow", [f for f in FLOWS if selected(f.id)], ids=lambda f: f.id)
def test_flow(flow: Flow) -> None:
    reason = BASELINE.get(flow.id)
    if reason is None:
        run(flow)
        return
    try:
        run(flow)
    except AssertionError:
        return  # a known failure, listed with its reason
    if not reason.startswith("race:"):
        pytest.fail(f"stale baseline entry: {flow.id} passes now (listed as: {reason})")


def test_flows_were_found() -> None:
    assert len(FLOWS) >= 40
    for flow in FLOWS:
        assert flow.id == flow.path.relative_to(VECTORS).with_suffix("").as_posix()
