"""Runs `async def` tests on a fresh event loop, each bounded by `TEST_TIMEOUT`.

No plugin is needed (pytest-asyncio is not a dependency): a coroutine test is awaited
under `asyncio.wait_for`, so a test that hangs fails instead of stalling the suite.
Lines registered with `tests.report` are printed at the end of the run.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

TEST_TIMEOUT = 30.0


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    function = pyfuncitem.obj
    if not inspect.iscoroutinefunction(function):
        return None
    arguments: dict[str, Any] = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(asyncio.wait_for(function(**arguments), TEST_TIMEOUT))
    return True


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from tests import report

    for line in report.lines():
        terminalreporter.write_line(line)
