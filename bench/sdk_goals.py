"""Headline rows every SDK's report section shares (bench/python_report.py,
bench/ts_report.py, bench/a2a/a2a_report.py): cold start against the language's raw-parse
program, the end-to-end turn against the official SDK, and each language's A2A server against
the official SDK's. Standard library only."""

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


def a2a_official(median: Callable, rows: tuple[str, str], labels: tuple[str, str], goals: tuple[float, float],
                 add: Callable) -> None:  # fmt: skip
    """An A2A server of ours against the official SDK's server in the same language (issue 33:
    TypeScript, issue 32: Python): p50 speed-up on SendMessage (seed 004's floor request) and
    on the stream (goal `goals[0]`), sustained sends/s at 50 connections (goal `goals[1]`).
    `median(row, workload, field)`: the median over trials, or None; `rows`, `labels`: ours,
    then theirs."""
    (mine_id, theirs_id), (name, label), (p50_goal, rps_goal) = rows, labels, goals
    for wid, what in (("floor-request", "SendMessage p50 (seed 004's floor request)"),
                      ("stream", "SendStreamingMessage p50 (the stream)")):  # fmt: skip
        mine, theirs = median(mine_id, wid, "p50_ns"), median(theirs_id, wid, "p50_ns")
        if mine and theirs:
            add(f"A2A {what}: {name} speed-up over {label}", theirs / mine, f"≥ {p50_goal:g}×",
                theirs / mine >= p50_goal)  # fmt: skip
    mine_rps = median(mine_id, "concurrent", "sustained_rps")
    their_rps = median(theirs_id, "concurrent", "sustained_rps")
    if mine_rps and their_rps:
        add(f"A2A sustained sends/s at 50 connections: {name} relative to {label}", mine_rps / their_rps,
            f"≥ {rps_goal:g}×", mine_rps / their_rps >= rps_goal)  # fmt: skip
