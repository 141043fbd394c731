"""The examples of the README and of docs/reference.md run as written.

README: the quick start's agent and client (the client spawning the agent, its output
the README's), the streamed turn and the in-process test (against that agent, in
memory), the `on_error` options, the A2A quick start (served on 127.0.0.1, asked
through the client). The reference: the decoding example and the terminal
example (both sides, in memory, with a real command). The same quick start runs from
the built wheel in a fresh environment in `package_check.py`.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from agentproto.acp import Terminals, v1
from agentproto.acp.options import HandlerFailure
from agentproto.acp.session import SessionClient, open_session
from agentproto.jsonrpc.memory import duplex

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
MARKED = dict(re.findall(r"<!-- package-test: ([\w.]+) -->\n```\w*\n(.*?)```", README, re.DOTALL))
REFERENCE = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "reference.md").read_text(), re.DOTALL)
RUN_TIMEOUT = 60.0


def run_block(text: str, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    namespace = {"__name__": "readme", **(namespace or {})}
    exec(compile(text, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    return namespace


def agent_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The quick start's `agent.py`, importable as `agent` for the duration of a test."""
    module = types.ModuleType("agent")
    module.__dict__.update(run_block(MARKED["agent.py"]))
    monkeypatch.setitem(sys.modules, "agent", module)
    return module


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) == 7 and len(REFERENCE) == 2
    assert BLOCKS[0] == MARKED["agent.py"] and BLOCKS[1] == MARKED["client.py"]
    assert MARKED["output"] == "You said: Hello, agent\n"


def test_the_quick_start_client_spawns_the_agent_and_prints_the_reply(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(MARKED["agent.py"])
    (tmp_path / "client.py").write_text(MARKED["client.py"])
    done = subprocess.run(
        [sys.executable, "client.py"],
        cwd=tmp_path,
        check=False,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, MARKED["output"], "")


async def test_the_streaming_example_prints_the_turn_as_it_comes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = run_block(BLOCKS[2])["stream"]
    async with v1.connect_pair(agent_module(monkeypatch).Echo(), SessionClient()) as pair:
        await pair.agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
        await stream(await open_session(pair.agent, cwd="/"))
    assert capsys.readouterr().out == "You said: Summarise the notes\n[end_turn]\n"


async def test_the_in_process_test_example_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    agent_module(monkeypatch)
    await run_block(BLOCKS[3])["test_echo_says_it_back"]()


async def test_the_in_process_test_example_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    module = agent_module(monkeypatch)
    echo: type[v1.Agent] = module.__dict__["Echo"]

    class Mute(echo):  # type: ignore[misc,valid-type]  # a class made at run time
        async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
            return v1.PromptResponse(stop_reason="end_turn")

    module.__dict__["Echo"] = Mute
    with pytest.raises(AssertionError):
        await run_block(BLOCKS[3])["test_echo_says_it_back"]()


def test_the_on_error_example_builds_options_that_report(capsys: pytest.CaptureFixture[str]) -> None:
    options = run_block(BLOCKS[5])["options"]
    assert options.on_error is not None
    options.on_error(HandlerFailure("session/prompt", 7, ValueError("boom")))
    assert capsys.readouterr().out == "session/prompt 7 boom\n"


class Collect(v1.Client):
    def __init__(self) -> None:
        self.chunks: list[str] = []

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        raise AssertionError("the example asks nothing")

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = params.update
        if isinstance(update, v1.SessionUpdateAgentMessageChunk) and isinstance(update.content, v1.TextContent):
            self.chunks.append(update.content.text)


async def test_the_quick_start_agent_streams_word_by_word() -> None:
    echo = run_block(MARKED["agent.py"])["Echo"]
    client = Collect()
    async with v1.connect_pair(echo(), client) as pair:
        await pair.agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
        session = await pair.agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
        prompt: list[v1.ContentBlock] = [v1.TextContent(text="hello"), v1.TextContent(text="world")]
        answer = await pair.agent.prompt(v1.PromptRequest(session_id=session.session_id, prompt=prompt))
    assert (answer.stop_reason, client.chunks) == ("end_turn", ["You ", "said: ", "hello ", "world"])


def test_the_decoding_example_runs() -> None:
    run_block(REFERENCE[0])


class Quiet(v1.Client):
    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        raise AssertionError("the example asks nothing")

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        pass


class Runner(v1.Agent):
    """Runs `printf hi` through the README's `run` in each prompt turn."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self.outputs: list[str] = []

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=v1.PROTOCOL_VERSION)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s-1")

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        self.outputs.append(await self.run(cx, params.session_id, "printf", "hi"))
        return v1.PromptResponse(stop_reason="end_turn")


async def test_the_terminal_example_runs_a_command_from_the_agent_on_the_client() -> None:
    namespace = run_block(REFERENCE[1])
    # The README's `Editor` forwards `terminal/create`; the other four forward the same way.
    forwards: dict[str, Any] = {
        "terminal_output": lambda self, cx, params: self.terminals.output(params),
        "wait_for_terminal_exit": lambda self, cx, params: self.terminals.wait_for_exit(params),
        "kill_terminal": lambda self, cx, params: self.terminals.kill(params),
        "release_terminal": lambda self, cx, params: self.terminals.release(params),
    }
    editor_type = type("Editor", (namespace["Editor"], Quiet), forwards)
    agent = Runner(namespace["run"])
    async with Terminals() as terminals:
        (a_in, a_out), (c_in, c_out) = duplex()
        agent_side, _ = v1.connect_agent(agent, a_in, a_out)
        client_side, to_agent = v1.connect_client(editor_type(terminals), c_in, c_out)
        tasks = [asyncio.create_task(agent_side.run()), asyncio.create_task(client_side.run())]
        try:
            capabilities = v1.ClientCapabilities(terminal=True)
            init = v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION, client_capabilities=capabilities)
            await asyncio.wait_for(to_agent.initialize(init), 10)
            session = await asyncio.wait_for(to_agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[])), 10)
            prompt = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContent(text="go")])
            assert (await asyncio.wait_for(to_agent.prompt(prompt), 10)).stop_reason == "end_turn"
            assert agent.outputs == ["hi"] and len(terminals) == 0  # read, then released
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)


async def test_the_network_example_serves_and_asks_over_both_transports(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.acp.remote_peers import serving

    agent_module(monkeypatch)
    example = run_block(BLOCKS[4])
    async with serving(example["app"]) as url:
        await example["ask"](url)
    assert capsys.readouterr().out == "You said: hi\n"


def test_the_a2a_quick_start_serves_and_answers(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.a2a.servers import ServerThread

    block = BLOCKS[6]
    assert "create_app" in block
    found: dict[str, Any] = {}

    def make(base: str) -> Any:
        found.update(run_block(block.replace("http://127.0.0.1:8080", base)))
        return found["app"]

    with ServerThread(make) as server:
        asyncio.run(asyncio.wait_for(found["ask"](server.base), RUN_TIMEOUT))
    assert capsys.readouterr().out == "HELLO\n"
