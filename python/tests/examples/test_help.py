"""`--help` on both example programs: the usage on stdout, exit status 0; a missing agent
command is a usage error (status 2), not a crash."""

from __future__ import annotations

import subprocess
import sys

import pytest

TIMEOUT = 30.0  # seconds for a process that only parses its arguments


def run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", f"agentproto.examples.{module}", *args]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize(
    ("module", "usage"),
    [
        ("echo_agent", "usage: echo_agent [-h] [--delay SECONDS] [--listen HOST:PORT]"),
        (
            "run_prompt",
            "usage: run_prompt [-h] [--allow | --reject] [--prompt TEXT] (-- AGENT_COMMAND [ARG ...] | --url URL [--ws])",
        ),
    ],
)
def test_help_prints_the_usage_and_exits_0(module: str, usage: str) -> None:
    done = run(module, "--help")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(usage + "\n")
    assert "example: " in done.stdout


def test_run_prompt_help_after_other_flags_still_exits_0() -> None:
    done = run("run_prompt", "--allow", "--prompt", "hi", "-h")
    assert done.returncode == 0 and done.stdout.startswith("usage: run_prompt")


@pytest.mark.parametrize("args", [[], ["--allow"], ["--allow", "--"]])
def test_run_prompt_without_an_agent_command_is_a_usage_error(args: list[str]) -> None:
    done = run("run_prompt", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.endswith("run_prompt: error: no agent command: give it after -- (or --url)\n")


def test_flags_after_the_double_dash_belong_to_the_agent() -> None:
    # `--help` after `--` is the agent's: run_prompt starts it (here a command that
    # does not exist) instead of printing its own usage.
    done = run("run_prompt", "--", "/nonexistent/agent", "--help")
    assert done.returncode == 1 and done.stdout == ""
    assert "run-prompt: cannot start the agent" in done.stderr
