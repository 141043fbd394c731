"""pytest settings for seed 001's benchmark.

pytest-benchmark 5.2.3 (the seed's version, pinned in .ci/requirements.txt) reads the
private ``node._nodeid`` of a test item, which pytest 9 no longer sets; each collected
item gets it here, from the public ``nodeid``, so that the seed's version runs
unchanged under the pytest the project pins.
"""

from __future__ import annotations

from typing import Any


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        if not hasattr(item, "_nodeid"):
            item._nodeid = item.nodeid
