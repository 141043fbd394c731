"""The Python SDK's part of the benchmark report: the goals set for agentproto's Python
SDK (issue 12, item 7) and seed 001's S/M/L table. bench/report.py calls `headline` and
`tables`, passing itself as `r` for its statistics and formatting helpers. Standard
library only.

Goals, measured side by side in one run:
- seed 001: at least 5× faster than the official Python SDK in every S/M/L cell;
- a validating decode per message no slower than `json.loads` alone (in-loop, warmed);
- cold start (spawn → first response line) at most 2× the `json.loads` program's;
- end to end (messages/s) at least 3× the official Python SDK.
"""

from __future__ import annotations

import sdk_goals

OURS = "agentproto-python"
RAW = "json-loads"
OFFICIAL = "official-python"
OPERATION_TITLES = {"serialize": "serialize", "deserialize": "deserialize", "roundtrip": "JSON round trip"}
SIZE_TITLES = {"small": "Small", "medium": "Medium (2 objects)", "large": "Large (20 items)"}


def _cell(seed001: dict, operation: str, size: str, side: str) -> dict | None:
    return next((x for x in seed001["rows"] if (x["operation"], x["size"], x["side"]) == (operation, size, side)), None)


def speedups(seed001: dict, side: str, stat: str = "median_ns") -> dict[tuple[str, str], float]:
    """Time of the official SDK over the side's, per (operation, size)."""
    out = {}
    for operation in OPERATION_TITLES:
        for size in SIZE_TITLES:
            mine, theirs = _cell(seed001, operation, size, side), _cell(seed001, operation, size, "official")
            if mine and theirs:
                out[(operation, size)] = theirs[stat] / mine[stat]
    return out


def headline(r, results: dict) -> list[dict]:
    rows = []

    def add(what, value, goal="—", met=None, unit="×"):
        if value is not None:
            rows.append({"what": what, "value": value, "unit": unit, "goal": goal, "met": met})

    ids = {i["id"] for i in results.get("implementations", [])}
    seed001 = results.get("seed001")
    if seed001:
        for side, name in (("agentproto", "object ↔ dict, validating"), ("agentproto_json", "object ↔ JSON bytes")):
            ratios = speedups(seed001, side)
            if ratios:
                (operation, size), worst = min(ratios.items(), key=lambda kv: kv[1])
                met = sum(v >= 5 for v in ratios.values())
                add(
                    f"seed 001, agentproto ({name}) speed-up over the official Python SDK, median: smallest of the "
                    f"{len(ratios)} cells ({OPERATION_TITLES[operation]} {size}); {met} of {len(ratios)} cells ≥ 5×",
                    worst,
                    "≥ 5× in every cell",
                    worst >= 5,
                )
    if OURS in ids and results.get("in_loop"):

        def loop(mode: str, impl: str) -> float:
            return r.per_op(results, "in_loop", mode, impl)["median"]

        if RAW in ids:
            for mode, what in (("throughput", "the four seed messages"), ("tokens", "the 100-token update")):
                ratio = loop(mode, OURS) / loop(mode, RAW)
                add(
                    f"validating decode per message ({what}, in-loop warmed): agentproto (Python) time relative "
                    "to json.loads alone (< 1× = faster)",
                    ratio,
                    "≤ 1×",
                    ratio <= 1,
                )
        if OFFICIAL in ids:
            add(
                "codec loop, in-loop warmed: agentproto (Python) speed-up over the official Python SDK",
                loop("codec", OFFICIAL) / loop("codec", OURS),
            )
    names = ("agentproto (Python)", "agentproto's Python adapter", "json.loads")
    if OURS in ids:
        sdk_goals.cold_start(r, results, OURS, RAW, names, 2, add)
    sdk_goals.end_to_end(r, results, OURS, OFFICIAL, ("agentproto (Python)", "the official Python SDK"), add)
    return rows


def tables(r, results: dict) -> list[dict]:
    seed001 = results.get("seed001")
    if not seed001:
        return []
    sides = [s for s in seed001["sides"] if any(x["side"] == s for x in seed001["rows"])]
    header = ["operation", "size"]
    for side in sides:
        header.append(seed001["sides"][side]["label"] + ": median (mean)")
        if side != "official":
            header.append("vs official: median (mean)")
    rows = []
    for operation, op_title in OPERATION_TITLES.items():
        for size, size_title in SIZE_TITLES.items():
            row = [op_title, size_title]
            theirs = _cell(seed001, operation, size, "official")
            for side in sides:
                mine = _cell(seed001, operation, size, side)
                if mine is None:
                    row += ["—"] + ([] if side == "official" else ["—"])
                    continue
                row.append(f"{r.fmt_time(mine['median_ns'])} ({r.fmt_time(mine['mean_ns'])})")
                if side != "official":
                    if theirs:
                        med = theirs["median_ns"] / mine["median_ns"]
                        mean = theirs["mean_ns"] / mine["mean_ns"]
                        row.append(f"{r.fmt_ratio(med)} ({r.fmt_ratio(mean)})")
                    else:
                        row.append("—")
            rows.append(row)
    described = "; ".join(
        f"{seed001['sides'][s]['label']}: {'validating' if seed001['sides'][s]['validating'] else 'NOT validating'}, "
        f"{seed001['sides'][s]['does']}"
        for s in seed001["sides"]
    )
    zerodep = seed001["zerodep"]
    note = (
        "Seed 001's nine operations on its payloads (bench/python/seed001: the seed's dicts, the same objects built "
        "in each library's types; Medium is two objects per call, Large 20 items), timed by pytest-benchmark "
        f"{seed001.get('pytest_benchmark')} ({', '.join(seed001['settings'])}). Per call: median, then mean in "
        "parentheses (the seed reported the mean); ratios are the official SDK's time over the row's (> 1× = "
        "faster than the official SDK). The round trip is serialize, json.dumps, json.loads, deserialize for the "
        "dict-based sides, object → bytes → object for agentproto's fastest path. Tests run one after another, "
        f"not interleaved. {described}."
    )
    if not zerodep["measured"]:
        note += " " + zerodep["why"]
    return [
        {
            "id": "seed001",
            "title": "Seed 001: serialize / deserialize / JSON round trip, Small / Medium / Large (Python)",
            "note": note,
            "header": header,
            "rows": rows,
            "chart": None,
        }
    ]
