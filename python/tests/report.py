"""Lines test modules want shown at the end of a pytest run (`conftest.py` prints them)."""

from __future__ import annotations

from collections.abc import Callable

_SOURCES: list[Callable[[], str | None]] = []


def register(source: Callable[[], str | None]) -> None:
    """`source` is called once the run is over; the line it returns (if any) is printed."""
    _SOURCES.append(source)


def lines() -> list[str]:
    return [line for line in (source() for source in _SOURCES) if line]
