"""The network contract of the examples, as the README states it: `echo_agent --listen
HOST:PORT` serves at `http://HOST:PORT/acp`; `run_prompt --url URL [--ws]` runs a prompt
against it. Real processes, real sockets on 127.0.0.1; the agent is ended on every path."""

from __future__ import annotations

import re
import select
import subprocess
import sys
from collections.abc import Iterator

import pytest

TIMEOUT = 30.0


@pytest.fixture
def agent_url() -> Iterator[str]:
    command = [sys.executable, "-m", "agentproto.examples.echo_agent", "--listen", "127.0.0.1:0", "--delay", "0"]
    agent = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert agent.stderr is not None
        # The line comes once the socket is bound: connections queue until it accepts them.
        ready, _, _ = select.select([agent.stderr], [], [], TIMEOUT)
        assert ready, "the agent printed nothing"
        line = agent.stderr.readline().decode()
        found = re.search(r"listening on (http://\S+/acp)", line)
        assert found, line
        yield found.group(1)
    finally:
        agent.terminate()
        try:
            agent.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait(TIMEOUT)
        if agent.stderr is not None:
            agent.stderr.close()


@pytest.mark.parametrize("ws", [[], ["--ws"]], ids=["http", "ws"])
def test_run_prompt_reaches_the_echo_agent_over_the_network(agent_url: str, ws: list[str]) -> None:
    command = [sys.executable, "-m", "agentproto.examples.run_prompt", "--allow", "--url", agent_url, *ws]
    done = subprocess.run(
        [*command, "--prompt", "hello over the tool network"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello over the tool network\n"
    assert "[permission] echo-tool -> Allow" in done.stderr
    assert done.stderr.rstrip().endswith("[stop] end_turn")


def test_run_prompt_reports_an_unreachable_url() -> None:
    command = [sys.executable, "-m", "agentproto.examples.run_prompt", "--url", "http://127.0.0.1:1/acp", "--ws"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 1 and "cannot connect" in done.stderr
