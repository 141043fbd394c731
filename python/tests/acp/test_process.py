"""Stdio for both sides with real processes: `spawn_agent` and `AgentProcess.close`
(the whole process group goes), `serve_agent_stdio` (the agent exits when stdin
closes), and the two example programs other tools rely on. Every wait is bounded; the
death of a process is awaited through a pidfd, not polled."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from agentproto.acp import v1
from agentproto.acp.options import AcpOptions
from tests.acp.test_roles import INIT, NEW, Client, text_prompt

WAIT = 20.0  # process start-up included
PYTHON = sys.executable
ECHO = [PYTHON, "-m", "agentproto.examples.echo_agent", "--delay", "0"]
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux)")


async def exited(pid: int) -> None:
    """Returns once the process `pid` has ended (a pidfd becomes readable)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # already ended and reaped (an orphan's parent, init, reaps it at once)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not done.done():
            done.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)


class Chunks(Client):
    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = params.update
        if isinstance(update, v1.SessionUpdateAgentMessageChunk) and isinstance(update.content, v1.TextContent):
            self.updates.append(update.content.text)


async def test_a_spawned_agent_runs_a_turn_and_exits_when_its_stdin_closes() -> None:
    client = Chunks()
    agent, process = await v1.spawn_agent(ECHO, client, env=ENV)
    async with process:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        session = (await asyncio.wait_for(agent.new_session(NEW), WAIT)).session_id
        answer = await asyncio.wait_for(agent.prompt(text_prompt(session, "one two three")), WAIT)
        assert answer.stop_reason == "end_turn"
        assert "".join(client.updates) == "one two three"
    assert process.returncode == 0  # it left on its own when stdin closed


async def test_closing_ends_the_agents_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    # A launcher that leaves a child behind, then becomes the agent.
    launcher = ["sh", "-c", f'sleep 300 </dev/null & echo $! > "{pidfile}"; exec "$@"', "sh", *ECHO]
    agent, process = await v1.spawn_agent(launcher, Chunks(), env=ENV)
    async with process:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        straggler = int(pidfile.read_text())
    await asyncio.wait_for(exited(straggler), WAIT)


async def test_an_agent_that_ignores_its_stdin_is_killed_after_the_grace() -> None:
    _, process = await v1.spawn_agent(["sleep", "300"], Chunks(), AcpOptions(exit_grace=0.2))
    status = await asyncio.wait_for(process.close(), WAIT)
    assert status == -signal.SIGKILL


async def test_an_agent_that_dies_fails_the_pending_call() -> None:
    agent, process = await v1.spawn_agent([PYTHON, "-c", "import sys; sys.stdin.readline()"], Chunks())
    async with process:
        call = asyncio.create_task(agent.initialize(INIT))
        with pytest.raises(Exception) as raised:
            await asyncio.wait_for(call, WAIT)
        assert raised.value.__class__.__name__ == "ConnectionFailed"


async def test_spawning_a_missing_program_raises() -> None:
    with pytest.raises(FileNotFoundError):
        await v1.spawn_agent(["/nonexistent/agent"], Chunks())


async def run_prompt(agent: list[str], *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        PYTHON,
        "-m",
        "agentproto.examples.run_prompt",
        *args,
        "--",
        *agent,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=ENV,
    )


async def test_the_run_prompt_example_drives_the_echo_agent() -> None:
    process = await run_prompt(ECHO, "--allow", "--prompt", "use a tool now")
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 0, err.decode()
    assert out.decode() == "use a tool now\n"
    assert "[permission] echo-tool -> Allow" in err.decode()
    assert "[stop] end_turn" in err.decode()


async def test_ctrl_c_in_run_prompt_cancels_the_turn() -> None:
    # The echo agent paces its words (0.05 s each, its default): the turn is still
    # running when the first word arrives.
    words = " ".join(f"w{i}" for i in range(400))
    process = await run_prompt(ECHO[:3], "--prompt", words)
    assert process.stdout is not None and process.stderr is not None
    first = await asyncio.wait_for(process.stdout.read(2), WAIT)
    assert first == b"w0"
    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 0, err.decode()
    assert "[stop] cancelled" in err.decode()
    assert len(out.split()) < 400


# A client that spawns `sleep 300` as its "agent" (it never reads stdin, so the end of
# its input does not end it), prints the agent's pid, then waits to be killed.
ORPHANING_CLIENT = """
import asyncio, sys
from agentproto.acp import v1
from agentproto.acp.options import AcpOptions

class Quiet(v1.Client):
    async def request_permission(self, cx, params):
        raise NotImplementedError
    async def session_update(self, cx, params):
        pass

async def main():
    options = AcpOptions(die_with_parent=sys.argv[1] == "on")
    _, process = await v1.spawn_agent(["sleep", "300"], Quiet(), options)
    print(process.pid, flush=True)
    await asyncio.get_running_loop().create_future()

asyncio.run(main())
"""


async def killed_client_leaves(die_with_parent: bool) -> int:
    """Starts `ORPHANING_CLIENT`, SIGKILLs it once its agent runs, and returns the agent's pid."""
    client = await asyncio.create_subprocess_exec(
        PYTHON, "-c", ORPHANING_CLIENT, "on" if die_with_parent else "off", stdout=asyncio.subprocess.PIPE, env=ENV
    )
    assert client.stdout is not None
    try:
        agent = int(await asyncio.wait_for(client.stdout.readline(), WAIT))
    finally:
        client.kill()
        await asyncio.wait_for(client.wait(), WAIT)
    return agent


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
async def test_with_die_with_parent_a_killed_client_takes_its_agent_along() -> None:
    agent = await killed_client_leaves(die_with_parent=True)
    await asyncio.wait_for(exited(agent), WAIT)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
async def test_without_die_with_parent_the_agent_of_a_killed_client_lives_on() -> None:
    agent = await killed_client_leaves(die_with_parent=False)
    try:
        # The client is dead and reaped; nothing was sent to the agent.
        os.kill(agent, 0)
    finally:
        os.killpg(agent, signal.SIGKILL)
    await asyncio.wait_for(exited(agent), WAIT)
