"""ACP over the network against the official Rust transport crate,
`agent-client-protocol-http` 5.0.0 (with the official SDK 5.2.0), over real sockets on
127.0.0.1: our Python client against its server (`remote-agent`) and its client
(`remote-client`) against our Python agent, over Streamable HTTP and WebSocket, two
prompt turns each with every streamed update handled before its turn's answer. Both
programs live in `interop/official/acp-rust/` (its `remote` feature) and are built into
`target/interop-official-rust`, as the Rust suite's `remote_official_rust` test does
(after it, here only checked up to date)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from agentproto.acp.remote import agent_app, connect
from agentproto.examples.echo_agent import EchoAgent
from tests.acp.remote_peers import Recorder, serving, two_turns

REPO = Path(__file__).resolve().parents[3]
TARGET = REPO / "target/interop-official-rust"


@pytest.fixture(scope="module")
def official() -> Path:
    """The directory of the built `remote-agent` and `remote-client`."""
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is needed to build interop/official/acp-rust")
    manifest = REPO / "interop/official/acp-rust/Cargo.toml"
    command = [cargo, "build", "--locked", "--quiet", "--features", "remote", "--bin", "remote-agent"]
    command += ["--bin", "remote-client", "--manifest-path", str(manifest)]
    done = subprocess.run(command, env={**os.environ, "CARGO_TARGET_DIR": str(TARGET)}, timeout=1500, check=False)
    assert done.returncode == 0, f"building the official Rust remote peers failed ({manifest})"
    return TARGET / "debug"


@asynccontextmanager
async def official_server(directory: Path) -> AsyncIterator[str]:
    child = await asyncio.create_subprocess_exec(
        str(directory / "remote-agent"), stderr=asyncio.subprocess.PIPE, start_new_session=True
    )
    try:
        assert child.stderr is not None
        line = (await asyncio.wait_for(child.stderr.readline(), 20)).decode()
        url = line[line.index("http://") :].strip()
        yield url
    finally:
        if child.returncode is None:
            os.killpg(child.pid, signal.SIGKILL)
            await child.wait()


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "ws"])
def test_our_client_against_the_official_rust_server(official: Path, websocket: bool) -> None:
    async def run() -> list[tuple[str, str, int]]:
        async with official_server(official) as url:
            recorder = Recorder()
            async with await connect(url, recorder, websocket=websocket) as remote:
                return await asyncio.wait_for(two_turns(remote.agent, recorder), 20)

    turns = asyncio.run(asyncio.wait_for(run(), 30))
    # Every update of a turn, one per word, was handled before its prompt call returned.
    assert turns == [
        ("end_turn", "one two three four five six seven eight", 8),
        ("end_turn", "now a tool please", 4),
    ]


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "ws"])
def test_the_official_rust_client_against_our_agent(official: Path, websocket: bool) -> None:
    async def run() -> bytes:
        async with serving(agent_app(lambda: EchoAgent(0.0))) as url:
            args = [url, "--ws"] if websocket else [url]
            child = await asyncio.create_subprocess_exec(
                str(official / "remote-client"), *args, stdout=asyncio.subprocess.PIPE, start_new_session=True
            )
            try:
                out, _ = await asyncio.wait_for(child.communicate(), 20)
            finally:
                if child.returncode is None:
                    os.killpg(child.pid, signal.SIGKILL)
                    await child.wait()
            assert child.returncode == 0
            return out

    out = asyncio.run(asyncio.wait_for(run(), 30))
    # Every update of a turn was handled before its prompt call returned.
    assert out == b'["end_turn","alpha beta gamma delta"]\n["end_turn","epsilon zeta"]\n'
