"""Our Python client against the official TypeScript SDK's `AcpServer` (@agentclientprotocol/sdk
2.4.0, `interop/official/acp-ts/remote.mjs`) over real sockets, on both transports: two prompt
turns, the second with a permission request. That server routes (and refuses without) the
`Acp-Session-Id` of a reply to a request that came on a session's stream."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from agentproto.acp.remote import connect
from tests.acp.remote_peers import Recorder, two_turns

OFFICIAL = Path(__file__).resolve().parents[3] / "interop/official/acp-ts"
SERVE = """
import(process.argv[1]).then(async ({ serveOfficial }) => {
  const server = await serveOfficial();
  console.log(server.url);
  process.stdin.resume();
  process.stdin.on("end", () => server.close().then(() => process.exit(0)));
});
"""


@asynccontextmanager
async def official_server() -> AsyncIterator[str]:
    if not (OFFICIAL / "node_modules/@agentclientprotocol/sdk").is_dir():
        pytest.skip("interop/official/acp-ts is not installed (npm ci --prefix interop/official/acp-ts)")
    child = await asyncio.create_subprocess_exec(
        "node", "-e", SERVE, str(OFFICIAL / "remote.mjs"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdin is not None
        url = (await asyncio.wait_for(child.stdout.readline(), 20)).decode().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
        child.stdin.close()
        await asyncio.wait_for(child.wait(), 10)
    finally:
        if child.returncode is None:
            os.killpg(child.pid, signal.SIGKILL)
            await child.wait()


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "ws"])
async def test_our_client_against_the_official_typescript_server(websocket: bool) -> None:
    async with official_server() as url:
        recorder = Recorder()
        async with await connect(url, recorder, websocket=websocket) as remote:
            turns = await asyncio.wait_for(two_turns(remote.agent, recorder), 20)
    assert turns == [
        ("end_turn", "one two three four five six seven eight ", 8),
        ("end_turn", "now a tool please ", 4),
    ]
    assert recorder.permissions == 1
