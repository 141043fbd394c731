"""The README's examples run: the agent (driven by a client in memory), the client
snippet (against that agent, spawned), and the decoding example."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

from agentproto.acp import v1
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


def test_the_readme_has_its_three_examples() -> None:
    assert len(BLOCKS) == 3


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
