"""The README's examples run: the agent (driven by a client in memory), the client
snippet (against that agent, spawned), the decoding example, and the terminal example
(both sides, in memory, with a real command)."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

from agentproto.acp import Terminals, v1
from agentproto.jsonrpc.memory import duplex

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)


def run_block(text: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(text, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    return namespace


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


def test_the_readme_has_its_four_examples() -> None:
    assert len(BLOCKS) == 4


async def test_the_agent_example_streams_the_prompt_back() -> None:
    echo = run_block(BLOCKS[0])["Echo"]
    (a_in, a_out), (c_in, c_out) = duplex()
    agent_side, _ = v1.connect_agent(echo(), a_in, a_out)
    client = Collect()
    client_side, agent = v1.connect_client(client, c_in, c_out)
    tasks = [asyncio.create_task(agent_side.run()), asyncio.create_task(client_side.run())]
    await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
    session = await agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
    prompt: list[v1.ContentBlock] = [v1.TextContent(text="hello"), v1.TextContent(text="world")]
    answer = await agent.prompt(v1.PromptRequest(session_id=session.session_id, prompt=prompt))
    assert (answer.stop_reason, client.chunks) == ("end_turn", ["hello", "world"])
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks)


async def test_the_client_example_runs_against_the_agent_example(tmp_path: Path) -> None:
    (tmp_path / "echo.py").write_text(BLOCKS[0])
    text = BLOCKS[1].replace('["python", "echo.py"]', f"[{sys.executable!r}, {str(tmp_path / 'echo.py')!r}]")
    main = run_block("from agentproto.acp import v1\n" + text)["main"]
    client = Collect()
    await main(client)
    assert client.chunks == ["hello"]


def test_the_decoding_example_runs() -> None:
    run_block(BLOCKS[2])


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
    namespace = run_block(BLOCKS[3])
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
