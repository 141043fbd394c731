"""A throwaway PostgreSQL server for the tests, started once per test session.

The cluster is the benchmark's (`bench/a2a/a2a_pg.py`: `initdb` in a temporary directory,
a Unix socket in it, no TCP port), loaded from the checkout, with durability off. It starts on first use
(`database()`), and stops at the end of the session (the `postgres_session` fixture,
autouse in the modules that import it) or at interpreter exit, whichever comes first.
Tests skip only when the PostgreSQL binaries are not installed at all.
"""

from __future__ import annotations

import atexit
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_BENCH = Path(__file__).resolve().parents[3] / "bench" / "a2a" / "a2a_pg.py"


class ClusterFailure(Exception):
    pass


def _module() -> Any:
    name = "agentproto_test_a2a_pg"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _BENCH)
    if spec is None or spec.loader is None:
        raise ClusterFailure(f"cannot load {_BENCH}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_cluster: Any = None

_FAST = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")
"""No flush to disk: the tests kill servers of ours, never PostgreSQL, and run on a shared
machine (the benchmark's cluster keeps the default durability)."""


def available() -> bool:
    """Whether the PostgreSQL binaries are installed."""
    return _BENCH.exists() and _module().bin_dir() is not None


def database() -> str:
    """A fresh empty database on the session's server, as a `postgresql://` URL; skips
    the test when PostgreSQL is not installed."""
    global _cluster
    if not available():
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    if _cluster is None:
        _cluster = _module().Cluster(ClusterFailure, settings=_FAST)
        atexit.register(stop)
    words = dict(word.split("=", 1) for word in _cluster.database().split())
    return f"postgresql://{words['user']}@/{words['dbname']}?host={words['host']}&port={words['port']}"


def stop() -> None:
    global _cluster
    cluster, _cluster = _cluster, None
    if cluster is not None:
        cluster.stop()


@pytest.fixture(scope="session", autouse=True)
def postgres_session() -> Iterator[None]:
    """Stops the session's server when the session ends (however it ends)."""
    try:
        yield
    finally:
        stop()
