"""The servers of every language, shared by the session (the TypeScript one is compiled
once, into a directory removed at the end)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sync.support import FixtureServers


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureServers]:
    yield FixtureServers(tmp_path_factory.mktemp("ts-fixture"))
