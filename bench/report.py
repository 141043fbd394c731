"""Renders bench/run.py's results: JSON (everything measured), a Markdown summary, an
HTML page with inline SVG charts, and the results table in the README. Standard
library only.

    python3 bench/report.py bench/results/<file>.json    # re-render a saved run
"""

from __future__ import annotations

import html
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "a2a"))
import a2a_report  # noqa: E402  (bench/a2a/a2a_report.py: the A2A section)

sys.path.insert(0, str(Path(__file__).resolve().parent / "sync"))
import sync_report  # noqa: E402  (bench/sync/sync_report.py: the sync-channel section, seed 002)

sys.path.insert(0, str(Path(__file__).resolve().parent / "net"))
import net_report  # noqa: E402  (bench/net/net_report.py: the end-to-end turn over the network)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import python_report  # noqa: E402  (bench/python_report.py: the Python goals, seed 001's table)
import ts_report  # noqa: E402  (bench/ts_report.py: the TypeScript goals)

README_BEGIN = "<!-- bench:results:begin -->"
README_END = "<!-- bench:results:end -->"

MODE_TITLES = {
    "cold-start": "cold start (decode `initialize`, encode the answer)",
    "roundtrip": "roundtrip (decode `session/new`, encode the answer)",
    "throughput": "throughput, 1,000 messages (decode only)",
    "codec": "codec, 10,000 iterations (decode + encode = 20,000 ops)",
    "tokens": "tokens, 10,000 messages x 100 tokens (decode only)",
}
LOOP_TITLES = {
    "throughput": "throughput (decode only)",
    "codec": "codec (decode + encode, 2 ops per iteration)",
    "tokens": "tokens, messages of 100 tokens (decode only)",
}
PER = {"throughput": ("message", 1000), "codec": ("op", 20000), "tokens": ("message", 10000)}
COLORS = {"Rust": "#b7410e", "TypeScript": "#3178c6", "Python": "#3b7d3b"}


# ---------------------------------------------------------------------------
# Numbers


def stats(values: list[float]) -> dict:
    values = sorted(values)
    if not values:
        return {"n": 0}
    q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    return {
        "n": len(values),
        "median": statistics.median(values),
        "min": values[0],
        "max": values[-1],
        "q1": q[0],
        "q3": q[2],
    }


def fmt_time(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms" if ns < 1e8 else f"{ns / 1e6:.0f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} µs"
    return f"{ns:.3g} ns" if ns < 100 else f"{ns:.0f} ns"


def fmt_rate(per_second: float) -> str:
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " K")):
        if per_second >= scale:
            return f"{per_second / scale:.3g}{suffix}"
    return f"{per_second:.3g}"


def fmt_ratio(x: float) -> str:
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×" if x < 100 else f"{x:.0f}×"


def spread(s: dict, fmt=fmt_time) -> str:
    return f"{fmt(s['min'])}–{fmt(s['max'])}"


def impl_map(results: dict) -> dict:
    return {i["id"]: i for i in results["implementations"]}


def baseline_of(results: dict, language: str) -> str | None:
    return next((i["id"] for i in results["implementations"] if i.get("baseline_for") == language), None)


def per_op(results: dict, view: str, mode: str, impl_id: str) -> dict:
    """In-loop nanoseconds per item (message or op) of `mode` for one implementation."""
    slot = results[view]["cases"][mode][impl_id]
    items = slot.get("items", PER[mode][1])
    return stats([ns / items for ns in slot["elapsed_ns"]])


def headline(results: dict) -> list[dict]:
    """The ratios the issue set goals for, computed from this run (the sync and A2A rows last)."""
    acp = acp_headline(results) if results.get("whole_process") else []
    python = python_report.headline(sys.modules[__name__], results)
    ts = ts_report.headline(sys.modules[__name__], results)
    ts += net_report.headline(sys.modules[__name__], results)
    sync = sync_report.headline(sys.modules[__name__], results)
    return acp + python + ts + sync + a2a_report.headline(sys.modules[__name__], results)


def acp_headline(results: dict) -> list[dict]:
    rows = []
    ids = impl_map(results)
    ours = "agentproto-rust"
    if ours not in ids:
        return rows

    def loop(mode: str, impl_id: str) -> float | None:
        if impl_id not in ids:
            return None
        return per_op(results, "in_loop", mode, impl_id)["median"]

    def add(what: str, value: float | None, goal: str, met: bool | None, unit: str = "×") -> None:
        if value is not None:
            rows.append({"what": what, "value": value, "unit": unit, "goal": goal, "met": met})

    if "official-rust" in ids:
        r = loop("codec", "official-rust") / loop("codec", ours)
        add("codec loop, in-loop warmed: agentproto speed-up over the official Rust SDK", r, "≥ 3×", r >= 3)
        r = loop("throughput", "official-rust") / loop("throughput", ours)
        add("decode loop (throughput): agentproto speed-up over the official Rust SDK", r, "—", None)
    if "serde-value" in ids:
        r = loop("codec", "serde-value") / loop("codec", ours)
        add("codec loop: agentproto speed relative to raw serde_json Value (> 1× = faster)", r, "> 1× (faster)", r > 1)
        r = loop("throughput", "serde-value") / loop("throughput", ours)
        add("decode loop (throughput): agentproto speed relative to raw serde_json Value", r, "> 1×", r > 1)
        r = loop("tokens", "serde-value") / loop("tokens", ours)
        add("tokens loop: agentproto speed relative to raw serde_json Value", r, "≥ 1× (raw-parse speed)", r >= 1)
    cold = stats(results["whole_process"]["cases"]["cold-start"][ours]["first_line_ns"])
    met = cold["median"] <= 1e6
    add("cold start, spawn → first response line (agentproto)", cold["median"] / 1e6, "≤ 1 ms", met, "ms")
    floor = results["whole_process"]["cases"]["cold-start"].get("_floor")
    if floor:
        f = stats(floor["first_line_ns"])["median"]
        add("cold start of `echo` on the same machine (the spawn floor)", f / 1e6, "—", None, "ms")
        add("agentproto cold start above that floor", (cold["median"] - f) / 1e6, "—", None, "ms")
    pairs = results["e2e"]["pairs"]
    mine = pairs.get(f"{ours}<-{ours}")
    if mine:
        m = stats([r["msgs_per_sec"] for r in mine["runs"]])["median"]
        for other in ("official-rust", "official-ts", "official-python"):
            theirs = pairs.get(f"{other}<-{other}")
            if theirs:
                t = stats([r["msgs_per_sec"] for r in theirs["runs"]])["median"]
                add(f"end to end, messages/s: agentproto speed-up over the {ids[other]['label']}", m / t, "—", None)
    for key, pair in pairs.items():  # the cost of checking outgoing messages, per language
        checked = pairs.get(key.removesuffix(":unchecked"))
        if pair.get("unchecked") and checked and pair["runs"] and checked["runs"]:
            c = stats([r["msgs_per_sec"] for r in checked["runs"]])["median"]
            u = stats([r["msgs_per_sec"] for r in pair["runs"]])["median"]
            label = ids[pair["client"]]["label"]
            what = f"end to end, {label}: messages/s with outgoing messages checked, relative to unchecked"
            add(what, c / u, "—", None)
    return rows


def headline_text(results: dict) -> str:
    lines = [f"headline ({results['date']}, {results['machine']['cpu']}, {results['plan']} run):"]
    for row in headline(results):
        value = fmt_ratio(row["value"]) if row["unit"] == "×" else f"{row['value']:.2f} {row['unit']}"
        met = "" if row["met"] is None else ("  goal met" if row["met"] else "  GOAL MISSED")
        lines.append(f"  {row['what']}: {value}  (goal {row['goal']}){met}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Tables (shared by Markdown and HTML): (title, note, header, rows, chart)


def tables(results: dict) -> list[dict]:
    acp = acp_tables(results) if results.get("whole_process") else []
    acp += net_report.tables(sys.modules[__name__], results)
    python = python_report.tables(sys.modules[__name__], results)
    sync = sync_report.tables(sys.modules[__name__], results)
    return acp + python + sync + a2a_report.tables(sys.modules[__name__], results)


def acp_tables(results: dict) -> list[dict]:
    ids = impl_map(results)
    order = [i["id"] for i in results["implementations"]]
    out = []

    # Seed 000 as published: whole-process wall time.
    whole = results["whole_process"]
    header = ["workload"] + [ids[i]["label"] for i in order]
    rows = []
    for mode, per_impl in whole["cases"].items():
        per_impl = {k: v for k, v in per_impl.items() if not k.startswith("_")}
        row = [MODE_TITLES[mode]]
        for i in order:
            s = stats(per_impl[i]["wall_ns"])
            cell = f"{fmt_time(s['median'])} ({spread(s)})"
            if mode in PER:
                unit, items = PER[mode]
                cell += f"; {fmt_rate(items / (s['median'] / 1e9))} {unit}s/s"
            row.append(cell)
        rows.append(row)
    out.append(
        {
            "id": "seed000-whole",
            "title": "Seed 000 as published: whole-process wall time",
            "note": (
                f"Spawn to exit, measured by the runner; median of {whole['runs']} runs after "
                f"{whole['warmup_rounds']} warm-up rounds, (min–max); rates derived from the wall time as the "
                "seed did. Start-up dominates every column: this ranks runtimes more than codecs."
            ),
            "header": header,
            "rows": rows,
            "chart": {
                "title": "codec, 10,000 iterations: whole-process wall time (log scale)",
                "bars": [bar(ids[i], stats(whole["cases"]["codec"][i]["wall_ns"])) for i in order],
            },
        }
    )

    # Cold start.
    rows = []
    bars = []
    for i in order:
        s = stats(whole["cases"]["cold-start"][i]["first_line_ns"])
        w = stats(whole["cases"]["cold-start"][i]["wall_ns"])
        rows.append(
            [ids[i]["label"], fmt_time(s["median"]), f"{fmt_time(s['q1'])}–{fmt_time(s['q3'])}", spread(s)]
            + [fmt_time(w["median"])]
        )
        bars.append(bar(ids[i], s))
    floor = whole["cases"]["cold-start"].get("_floor")
    if floor:
        s = stats(floor["first_line_ns"])
        rows.append(["spawn floor: `echo` (prints one line)", fmt_time(s["median"]), "", spread(s), ""])
        bars.append(
            {"label": "spawn floor (echo)", "color": "#999", "median": s["median"], "lo": s["min"], "hi": s["max"]}
        )
    out.append(
        {
            "id": "cold-start",
            "title": "Cold start: spawn → first response line on stdout",
            "note": (
                "The adapter decodes `initialize` and writes its answer; the runner times from before "
                "spawning to reading that line. Includes process creation and the runtime's start-up; "
                "`echo`, run in the same rounds, is the spawn floor of the machine."
            ),
            "header": ["implementation", "median", "quartiles", "min–max", "whole process (median)"],
            "rows": rows,
            "chart": {"title": "cold start, spawn → first response (log scale)", "bars": bars},
        }
    )

    # In-loop per operation.
    loop = results["in_loop"]
    for mode in loop["cases"]:
        unit, _ = PER[mode]
        rows = []
        bars = []
        ours = per_op(results, "in_loop", mode, "agentproto-rust")["median"] if "agentproto-rust" in ids else None
        for i in order:
            cold = per_op(results, "whole_process", mode, i)
            warm = per_op(results, "in_loop", mode, i)
            base = baseline_of(results, ids[i]["language"])
            vs_base = "—"
            if base and base != i:
                vs_base = fmt_ratio(warm["median"] / per_op(results, "in_loop", mode, base)["median"])
            extra = ""
            if mode == "tokens":
                extra = f"; {fmt_rate(100 * 1e9 / warm['median'])} tokens/s"
            rows.append(
                [
                    ids[i]["label"],
                    "yes" if ids[i]["validating"] else "**no**",
                    fmt_time(warm["median"]) + extra,
                    f"{fmt_time(warm['q1'])}–{fmt_time(warm['q3'])}",
                    fmt_time(cold["median"]),
                    fmt_ratio(warm["median"] / ours) if ours else "—",
                    vs_base,
                ]
            )
            bars.append(bar(ids[i], warm))
        out.append(
            {
                "id": f"loop-{mode}",
                "title": f"In-loop time per {unit}: {LOOP_TITLES[mode]}",
                "note": (
                    f"The adapter's own clock around the loop only (no start-up), per {unit}. Warmed: "
                    f"median of {loop['runs']} runs of 10,000 iterations, each after as many untimed ones in the "
                    "same process (quartiles shown). Cold: the seed's runs, no warm-up (JIT and caches cold). "
                    "Ratios are time ratios (> 1× = slower than the reference)."
                ),
                "header": [
                    "implementation", "validating", f"warmed, per {unit}", "quartiles", "cold loop",
                    "vs agentproto", "vs same-language raw parse",
                ],
                "rows": rows,
                "chart": {"title": f"{mode}: in-loop time per {unit}, warmed (log scale)", "bars": bars},
            }
        )  # fmt: skip

    # Seed 003 analogue.
    s003 = results.get("seed003")
    if s003:
        for op, title, note in (
            (
                "encode",
                "Seed 003 analogue: encode buffer policy (agentproto codec)",
                "Typed params of each message encoded per call: into one reused `Vec` (baseline), a fresh "
                "`Vec` per call, a reused `Vec` behind `&mut dyn io::Write`, or a `BufWriter` over `io::sink()`.",
            ),
            (
                "decode",
                "Seed 003 analogue: decode source (agentproto, validating, whole line)",
                "`receive::classify` on a slice in memory (baseline), on lines read with `BufRead::read_until` "
                "into a reused buffer, and on lines from the connection's async `FrameReader`.",
            ),
            (
                "stages",
                "Where a validating decode goes (agentproto): `classify` and its two-pass route",
                "`classify`: envelope and params in one pass (these messages name `method` before `params`); "
                "the two passes it falls back to for anything else, and that the connections take: "
                "`envelope`: `Message::decode_with` (params kept raw); `params`: params decoded by method; "
                "`value`: serde_json `Value` of the whole line (not validating, for scale); `prescan`: the "
                "nesting bound the envelope checks before parsing (`nesting_exceeds`).",
            ),
        ):
            variants = list(dict.fromkeys(r["variant"] for r in s003["rows"] if r["op"] == op))
            messages = list(dict.fromkeys(r["message"] for r in s003["rows"] if r["op"] == op))
            rows = []
            for m in messages:
                cells = {r["variant"]: r for r in s003["rows"] if r["op"] == op and r["message"] == m}
                size = next(iter(cells.values()))["bytes"]
                row = [f"{m} ({size} B)"]
                for v in variants:
                    r = cells[v]
                    row.append(f"{fmt_time(r['ns_per_op'])} ({r['ratio']:.2f})")
                rows.append(row)
            out.append(
                {
                    "id": f"seed003-{op}",
                    "title": title,
                    "note": note + f" Per operation, median of {s003['rounds']} rounds of {s003['count']}; "
                    "(ratio to the first column).",
                    "header": ["message"] + variants,
                    "rows": rows,
                    "chart": None,
                }
            )

    # End to end.
    e2e = results["e2e"]
    rows = []
    bars = []
    for pair in e2e["pairs"].values():
        rate = stats([r["msgs_per_sec"] for r in pair["runs"]])
        turn = stats([r["elapsed_ns"] for r in pair["runs"]])
        wall = stats([r["wall_ns"] for r in pair["runs"]])
        same = pair["client"] == pair["agent"]
        label = (
            ids[pair["client"]]["label"]
            if same
            else (f"{ids[pair['client']]['label']} client ← {ids[pair['agent']]['label']} agent")
        )
        if pair.get("unchecked"):
            label += ", outgoing messages not checked"
        rows.append(
            [
                label,
                f"{fmt_rate(rate['median'])} ({fmt_rate(rate['min'])}–{fmt_rate(rate['max'])})",
                fmt_rate(rate["median"] * e2e["tokens"]),
                f"{fmt_time(turn['median'])} ({spread(turn)})",
                fmt_time(wall["median"]),
            ]
        )
        if same:
            bars.append(
                {
                    "label": label,
                    "color": COLORS.get(ids[pair["client"]]["language"], "#777"),
                    "median": rate["median"],
                    "lo": rate["min"],
                    "hi": rate["max"],
                    "fmt": "rate",
                }
            )
    out.append(
        {
            "id": "e2e",
            "title": (
                f"End to end: one prompt turn streaming {e2e['count']:,} `session/update` × {e2e['tokens']} tokens"
            ),
            "note": (
                "Two processes on a real pipe; the client spawns the agent; each SDK plays both sides with its "
                "own agent and client API, and every update is decoded and validated by the receiving SDK and "
                "handed to the application. Turn time: from sending `session/prompt` until its answer arrived and "
                f"every update was handled; median of {e2e['runs']} runs (min–max). Rows with an arrow mix two "
                "SDKs, to show which side sets the pace. agentproto checks every message it sends against its "
                "method's schema by default; the rows marked 'outgoing messages not checked' switch that off on "
                "both sides (the hot-path opt-out), so the pair of rows shows what the check costs."
            ),
            "header": ["SDK (client ← agent)", "messages/s", "tokens/s", "turn", "whole process"],
            "rows": rows,
            "chart": {"title": "end to end, messages per second (higher is better, log scale)", "bars": bars},
        }
    )
    return out


def bar(impl: dict, s: dict) -> dict:
    return {
        "label": impl["label"],
        "color": COLORS.get(impl["language"], "#777"),
        "median": s["median"],
        "lo": s["min"],
        "hi": s["max"],
        "q1": s.get("q1"),
        "q3": s.get("q3"),
        "hatched": not impl["validating"],
    }


# ---------------------------------------------------------------------------
# Markdown


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def machine_lines(results: dict) -> list[str]:
    m = results["machine"]
    lines = [
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory']}, {m['os']} ({m['arch']})",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()),
    ]
    sync_versions = (results.get("sync") or {}).get("versions")
    if sync_versions:
        lines.append("- Sync-channel versions: " + ", ".join(f"{k} {v}" for k, v in sync_versions.items()))
    a2a_versions = (results.get("a2a") or {}).get("versions")
    if a2a_versions:
        lines.append("- A2A versions: " + ", ".join(f"{k} {v}" for k, v in a2a_versions.items()))
    return lines


def markdown(results: dict) -> str:
    ids = impl_map(results)
    parts = [
        f"# Benchmark results, {results['date']} ({results['plan']} run)",
        "",
        *machine_lines(results),
        f"- Run: {results['time']}, {results['seconds']} s of measurement; Rust profile `{results['profile']}`.",
        "",
        "## Headline",
        "",
        md_table(
            ["ratio", "this run", "goal"],
            [
                [
                    r["what"],
                    (fmt_ratio(r["value"]) if r["unit"] == "×" else f"{r['value']:.2f} {r['unit']}")
                    + ("" if r["met"] is None else " ✓" if r["met"] else " ✗ (missed)"),
                    r["goal"],
                ]
                for r in headline(results)
            ],
        ),
    ]
    if ids:
        parts += [
            "",
            "## Implementations",
            "",
            md_table(
                ["id", "implementation", "version", "validating", "what it does"],
                [
                    [f"`{i['id']}`", i["label"], i["version"], "yes" if i["validating"] else "**no**", i["does"]]
                    for i in ids.values()
                ],
            ),
        ]
    if results.get("sync"):
        parts += [
            "",
            "## Sync-channel implementations",
            "",
            md_table(["id", "implementation", "version", "what it does"], sync_report.implementations(results)),
        ]
    if results.get("a2a"):
        parts += [
            "",
            "## A2A servers",
            "",
            md_table(["id", "server", "version", "what it does"], a2a_report.implementations(results)),
        ]
    for t in tables(results):
        parts += ["", f"## {t['title']}", "", t["note"], "", md_table(t["header"], t["rows"])]
    return "\n".join(parts) + "\n"


def readme_block(results: dict, stem: str) -> str:
    by_id = {t["id"]: t for t in tables(results)}
    rows = [
        [
            r["what"],
            (fmt_ratio(r["value"]) if r["unit"] == "×" else f"{r['value']:.2f} {r['unit']}")
            + ("" if r["met"] is None else " ✓" if r["met"] else " ✗"),
            r["goal"],
        ]
        for r in headline(results)
    ]
    loop = by_id["loop-codec"]
    m = results["machine"]
    return "\n".join(
        [
            README_BEGIN,
            f"Latest full run: {results['date']} on {m['cpu']} ({m['cores']} cores, {m['os']}); "
            f"report: [`bench/results/{stem}.md`](bench/results/{stem}.md) "
            f"([HTML](bench/results/{stem}.html), [JSON](bench/results/{stem}.json)).",
            "",
            md_table(["ratio (one run)", "measured", "goal"], rows),
            "",
            f"{loop['title']} (lower is better; ratios are time ratios):",
            "",
            md_table(loop["header"], loop["rows"]),
            README_END,
        ]
    )


def update_readmes(results: dict, readme: Path, bench_readme: Path, stem: str) -> None:
    for path in (readme, bench_readme):
        if not path.exists():
            continue
        text = path.read_text()
        if README_BEGIN in text and README_END in text:
            head, rest = text.split(README_BEGIN, 1)
            _, tail = rest.split(README_END, 1)
            block = readme_block(results, stem)
            if path.parent != readme.parent:  # links relative to bench/
                block = block.replace("](bench/", "](")
            path.write_text(head + block + tail)


HISTORY = "history.md"
HISTORY_INTRO = """# Headline figures of past full runs

One section per full `make bench` run, newest first, written by `bench/run.py` when it replaces
the previous full run's report in this folder (only the latest full run's JSON, Markdown and HTML
are kept). Quick and partial runs are written to `bench/results/local/`, which git ignores.
"""


def history_section(results: dict, stem: str) -> str:
    """The headline of one full run, as a Markdown section of `history.md`."""
    m = results["machine"]
    commit = results.get("versions", {}).get("agentproto", "")
    lines = [f"## {results['date']} ({stem}; {m['cpu']}, {m['cores']} cores{'; ' + commit if commit else ''})", ""]
    for r in headline(results):
        value = fmt_ratio(r["value"]) if r["unit"] == "×" else f"{r['value']:.2f} {r['unit']}"
        met = "" if r["met"] is None else " ✓" if r["met"] else " ✗"
        lines.append(f"- {r['what']}: {value}{met} (goal {r['goal']})")
    return "\n".join(lines) + "\n"


def keep_latest(results: dict, directory: Path, stem: str) -> Path:
    """Moves earlier full runs out of `directory`: the headline of each (and of this run) goes
    into `history.md`, newest first, and their JSON, Markdown and HTML files are removed.
    Called before this run's files are written; returns the history file's path."""
    history = directory / HISTORY
    text = history.read_text() if history.exists() else HISTORY_INTRO
    intro, _, past = text.partition("\n## ")
    sections = {}  # first line -> section, in file order
    for body in ("## " + past).split("\n## ") if past else []:
        body = body if body.startswith("## ") else "## " + body
        sections[body.split("\n", 1)[0]] = body.rstrip("\n") + "\n"
    runs = [(results, stem)]
    for old in sorted(directory.glob("*.json")):
        if old.stem != stem:
            runs.append((json.loads(old.read_text()), old.stem))
    for run, run_stem in runs:
        section = history_section(run, run_stem)
        sections.setdefault(section.split("\n", 1)[0], section)
    ordered = sorted(sections.values(), key=lambda s: s.split("\n", 1)[0][3:13], reverse=True)
    history.write_text(intro.rstrip("\n") + "\n\n" + "\n".join(ordered))
    for _, run_stem in runs[1:]:
        for suffix in (".json", ".md", ".html"):
            (directory / (run_stem + suffix)).unlink(missing_ok=True)
    return history


# ---------------------------------------------------------------------------
# HTML with inline SVG


def svg_chart(chart: dict) -> str:
    bars = [b for b in chart["bars"] if b["median"] > 0]
    if not bars:
        return ""
    width, left, right, row_h, top = 760, 220, 150, 26, 30
    lo = min(min(b["lo"], b["median"]) for b in bars)
    hi = max(max(b["hi"], b["median"]) for b in bars)
    lo_log, hi_log = math.log10(lo) - 0.05, math.log10(hi) + 0.05
    span = max(hi_log - lo_log, 1e-9)

    def x(v: float) -> float:
        return left + (math.log10(v) - lo_log) / span * (width - left - right)

    height = top + row_h * len(bars) + 10
    fmt = fmt_rate if bars[0].get("fmt") == "rate" else fmt_time
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{html.escape(chart["title"])}" font-family="sans-serif" font-size="12">',
        '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="white"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="3"/></pattern></defs>',
        f'<text x="{left}" y="16" font-weight="bold">{html.escape(chart["title"])}</text>',
    ]
    for k, b in enumerate(bars):
        y = top + k * row_h
        fill = "url(#hatch)" if b.get("hatched") else b["color"]
        stroke = f' stroke="{b["color"]}" stroke-width="2"' if b.get("hatched") else ""
        out.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{html.escape(b["label"])}</text>')
        out.append(
            f'<rect x="{left}" y="{y + 4}" width="{max(x(b["median"]) - left, 1):.1f}" height="14" '
            f'fill="{fill}"{stroke}/>'
        )
        x1, x2, ym = x(b["lo"]), x(b["hi"]), y + 11
        out.append(
            f'<path d="M{x1:.1f},{ym} H{x2:.1f} M{x1:.1f},{ym - 5} V{ym + 5} M{x2:.1f},{ym - 5} V{ym + 5}" '
            'stroke="#222" stroke-width="1.2" fill="none"/>'
        )
        out.append(f'<text x="{max(x2, x(b["median"])) + 6:.1f}" y="{y + 15}">{fmt(b["median"])}</text>')
    out.append("</svg>")
    return "\n".join(out)


def html_table(header: list[str], rows: list[list[str]]) -> str:
    def cell(text: str) -> str:
        text = html.escape(text)
        return text.replace("**", "")

    head = "".join(f"<th>{cell(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_page(results: dict) -> str:
    ids = impl_map(results)
    css = (
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:3px 8px;"
        "font-size:13px;text-align:left;vertical-align:top}th{background:#f2f2f2}"
        ".note{color:#555;font-size:14px}code{background:#f4f4f4}"
    )
    head_rows = [
        [
            r["what"],
            (fmt_ratio(r["value"]) if r["unit"] == "×" else f"{r['value']:.2f} {r['unit']}")
            + ("" if r["met"] is None else " ✓" if r["met"] else " ✗ (missed)"),
            r["goal"],
        ]
        for r in headline(results)
    ]
    m = results["machine"]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>agentproto benchmark {results['date']}</title><style>{css}</style></head><body>",
        f"<h1>agentproto benchmark, {results['date']} ({results['plan']} run)</h1>",
        f"<p class='note'>{html.escape(m['cpu'])}, {m['cores']} cores, {html.escape(m['memory'])}, "
        f"{html.escape(m['os'])}. Bars: median; whiskers: min–max; hatched bars do not validate. "
        "Colours: Rust, TypeScript, Python.</p>",
        "<h2>Headline</h2>",
        html_table(["ratio", "this run", "goal"], head_rows),
        "<h2>Implementations</h2>",
        html_table(
            ["id", "implementation", "version", "validating", "what it does"],
            [[i["id"], i["label"], i["version"], "yes" if i["validating"] else "NO", i["does"]] for i in ids.values()],
        ),
    ]
    if results.get("sync"):
        parts.append("<h2>Sync-channel implementations</h2>")
        parts.append(
            html_table(["id", "implementation", "version", "what it does"], sync_report.implementations(results))
        )
    if results.get("a2a"):
        parts.append("<h2>A2A servers</h2>")
        parts.append(html_table(["id", "server", "version", "what it does"], a2a_report.implementations(results)))
    for t in tables(results):
        parts.append(f"<h2>{html.escape(t['title'])}</h2><p class='note'>{html.escape(t['note'])}</p>")
        if t.get("chart"):
            parts.append(svg_chart(t["chart"]))
        parts.append(html_table(t["header"], t["rows"]))
    parts.append("<h2>Versions</h2>")
    versions = results["versions"] | ((results.get("sync") or {}).get("versions") or {})
    versions |= (results.get("a2a") or {}).get("versions") or {}
    parts.append(html_table(["component", "version"], [[k, str(v)] for k, v in versions.items()]))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_all(results: dict, stem: Path) -> list[Path]:
    paths = [stem.parent / (stem.name + suffix) for suffix in (".json", ".md", ".html")]
    paths[0].write_text(json.dumps(results, indent=1) + "\n")
    paths[1].write_text(markdown(results))
    paths[2].write_text(html_page(results))
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py <results.json>")
    source = Path(sys.argv[1])
    data = json.loads(source.read_text())
    for p in write_all(data, source.parent / source.name.removesuffix(".json")):
        print(p)
