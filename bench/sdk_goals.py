"""Headline rows every SDK's report section shares (bench/python_report.py,
bench/ts_report.py): cold start against the language's raw-parse program, and the
end-to-end turn against the official SDK. Standard library only."""

from __future__ import annotations

from collections.abc import Callable


def cold_start(r, results: dict, ours: str, raw: str, names: tuple[str, str, str], limit: float, add: Callable) -> None:
    """Spawn → first response line, ours relative to the raw-parse program (`names`: our
    implementation, our adapter, the raw program), with the two absolute times."""
    whole = results.get("whole_process")
    if not whole:
        return
    cold = whole["cases"]["cold-start"]
    if ours not in cold or raw not in cold:
        return
    mine = r.stats(cold[ours]["first_line_ns"])["median"]
    theirs = r.stats(cold[raw]["first_line_ns"])["median"]
    add(f"cold start, spawn → first response line: {names[0]} relative to the {names[2]} program",
        mine / theirs, f"≤ {limit:g}×", mine / theirs <= limit)  # fmt: skip
    add(f"cold start of {names[1]}", mine / 1e6, "—", None, "ms")
    add(f"cold start of the {names[2]} program", theirs / 1e6, "—", None, "ms")


def end_to_end(r, results: dict, ours: str, official: str, names: tuple[str, str], add: Callable) -> None:
    """Messages/s of the end-to-end turn, ours over the official SDK (goal ≥ 3×)."""
    pairs = (results.get("e2e") or {}).get("pairs", {})
    mine, theirs = pairs.get(f"{ours}<-{ours}"), pairs.get(f"{official}<-{official}")
    if not (mine and theirs):
        return
    m = r.stats([x["msgs_per_sec"] for x in mine["runs"]])["median"]
    t = r.stats([x["msgs_per_sec"] for x in theirs["runs"]])["median"]
    add(f"end to end, messages/s: {names[0]} speed-up over {names[1]}", m / t, "≥ 3×", m >= 3 * t)
