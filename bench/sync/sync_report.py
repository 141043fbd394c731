"""The sync-channel section of the benchmark report (seed 002; bench/report.py calls
`headline`, `tables` and `implementations`, passing itself as `r` for its formatting
helpers). Standard library only.

One section per server (`tsc --api` of typescript 7.0.2, then 7.1.0-beta), each compared
within itself, and a table of each later server's medians relative to the first one's.
Results written before there were two servers (one run, no `servers` list) read as 7.0.2.

Goals (issue 14, item 4), per server, all time ratios against the official sync client on
the same binary, project and run unless said otherwise:
- agentproto TypeScript ≤ 1.0× on every workload, ≤ 0.8× on the echo round trip;
- agentproto Rust ≤ 0.6× on the echo round trip, and within 1.1× of the raw pipe floor on
  the ~2 MB transfer;
- agentproto Python ≤ 2× on the echo round trip and ≤ 1.1× on large transfers.

Beside the goals: the raw tuple client's split of each transfer into the server's own
time (request → first byte) and moving the bytes, which says how much of a transfer any
client can still save.
"""

from __future__ import annotations

RUST = "sync-agentproto-rust"
TS = "sync-agentproto-ts"
PYTHON = "sync-agentproto-python"
OFFICIAL = "sync-official"
ASYNC = "sync-official-async"
FLOOR = "sync-pipe-floor"
RAW = "sync-raw-client"
LARGE_TRANSFERS = ("transfer-large", "transfer-medium")
COLORS = {"Rust": "#b7410e", "TypeScript": "#3178c6", "Python": "#3b7d3b"}


def servers(results: dict) -> list[dict]:
    """The per-server runs of the sync part, first server first ([] without one)."""
    sync = results.get("sync")
    if not sync:
        return []
    return sync["servers"] if "servers" in sync else [sync]


def release(sync: dict) -> str:
    """The server release of one per-server run."""
    return (sync.get("server") or {}).get("release", "7.0.2")


def _median(sync: dict, impl: str, workload: str) -> float | None:
    entry = sync["runs"].get(impl, {}).get(workload)
    if not entry or entry.get("status") != "ok":
        return None
    return entry["stats"]["median"]


def _ratio(sync: dict, impl: str, other: str, workload: str) -> float | None:
    mine, theirs = _median(sync, impl, workload), _median(sync, other, workload)
    return mine / theirs if mine is not None and theirs else None


def _file_label(sync: dict, size: str) -> str:
    name = sync["project"]["lib_files"][size]
    info = sync["project"]["files"][name]
    return f"{name}, {info['bytes']:,} B"


def headline(r, results: dict) -> list[dict]:
    """The first server's rows as they always were; for each later server its goal rows, named
    with its release."""
    rows = []
    for index, sync in enumerate(servers(results)):
        if sync.get("plan") == "smoke":
            return []
        if index == 0:
            rows += _headline(sync)
        else:
            rows += [
                row | {"what": f"sync ({release(sync)}){row['what'].removeprefix('sync')}"}
                for row in _headline(sync)
                if row["goal"] != "—"
            ]
    return rows


def _headline(sync: dict) -> list[dict]:
    rows = []

    def add(what, value, goal="—", met=None, unit="×"):
        if value is not None:
            rows.append({"what": what, "value": value, "unit": unit, "goal": goal, "met": met})

    large = _file_label(sync, "large")
    ratio = _ratio(sync, TS, OFFICIAL, "echo")
    if ratio is not None:
        add("sync echo round trip: agentproto (TypeScript) time relative to the official sync client",
            ratio, "≤ 0.8×", ratio <= 0.8)  # fmt: skip
    ratios = {w["id"]: _ratio(sync, TS, OFFICIAL, w["id"]) for w in sync["workloads"]}
    ratios = {w: x for w, x in ratios.items() if x is not None}
    if ratios:
        worst = max(ratios, key=ratios.get)
        missed = [w for w, x in ratios.items() if x > 1.0]
        detail = f"{len(missed)} of {len(ratios)} over" + (f": {', '.join(missed)}" if missed else "")
        add(f"sync, every workload: agentproto (TypeScript) relative to the official sync client, worst "
            f"({worst}; {detail})", ratios[worst], "≤ 1.0× on every workload", not missed)  # fmt: skip
    ratio = _ratio(sync, RUST, OFFICIAL, "echo")
    if ratio is not None:
        add("sync echo round trip: agentproto (Rust) time relative to the official sync client",
            ratio, "≤ 0.6×", ratio <= 0.6)  # fmt: skip
    ratio = _ratio(sync, RUST, FLOOR, "transfer-large")
    if ratio is not None:
        add(f"sync transfer ~2 MB ({large}): agentproto (Rust) relative to the raw pipe floor moving the same bytes",
            ratio, "≤ 1.1×", ratio <= 1.1)  # fmt: skip
        add("sync transfer ~2 MB: agentproto (Rust), median", _median(sync, RUST, "transfer-large") / 1e6, unit="ms")
        add("sync transfer ~2 MB: raw pipe floor moving the same bytes, median",
            _median(sync, FLOOR, "transfer-large") / 1e6, unit="ms")  # fmt: skip
        first = _first_byte(sync, "transfer-large")
        if first is not None:
            add("sync transfer ~2 MB: the server's own time before the first byte of its answer (raw tuple client), "
                "which no client can save", first / 1e6, unit="ms")  # fmt: skip
        ratio = _ratio(sync, RUST, RAW, "transfer-large")
        if ratio is not None:
            add("sync transfer ~2 MB: agentproto (Rust) relative to the raw tuple client on the same server", ratio)
    ratio = _ratio(sync, PYTHON, OFFICIAL, "echo")
    if ratio is not None:
        add("sync echo round trip: agentproto (Python) time relative to the official sync client (JS)",
            ratio, "≤ 2×", ratio <= 2)  # fmt: skip
    for workload in LARGE_TRANSFERS:
        ratio = _ratio(sync, PYTHON, OFFICIAL, workload)
        if ratio is not None:
            size = workload.split("-")[1]
            add(f"sync {workload} ({_file_label(sync, size)}): agentproto (Python) relative to the official sync "
                "client (JS)", ratio, "≤ 1.1×", ratio <= 1.1)  # fmt: skip
    for impl, label in ((RUST, "Rust"), (TS, "TypeScript"), (PYTHON, "Python")):
        ratio = _ratio(sync, ASYNC, impl, "echo")
        if ratio is not None:
            add(f"sync echo round trip: agentproto ({label}) speed-up over the official async client", ratio)
    return rows


def _first_byte(sync: dict, workload: str) -> float | None:
    entry = sync["runs"].get(RAW, {}).get(workload) or {}
    return (entry.get("first_byte") or {}).get("median")


def _cell(r, entry: dict | None, workload: str, sync: dict) -> str:
    if not entry:
        return "—"
    if entry.get("status") != "ok":
        return "—"
    s = entry["stats"]
    text = f"{r.fmt_time(s['median'])} ({r.fmt_time(s['q1'])}–{r.fmt_time(s['q3'])})"
    if workload == "symbol-each":
        calls = entry["detail"].get("calls") or 1
        text += f"; {r.fmt_time(s['median'] / calls)}/call"
    return text


def tables(r, results: dict) -> list[dict]:
    runs = servers(results)
    out = []
    for index, sync in enumerate(runs):
        out += _tables(r, sync, "" if index == 0 else f"-{release(sync)}")
    if len(runs) > 1:
        out.append(_across(r, runs))
    return out


def _across(r, runs: list[dict]) -> dict:
    """Each later server's medians relative to the first server's, per implementation."""
    first = runs[0]
    ids = [i["id"] for i in first["implementations"]]
    labels = {i["id"]: i["label"] for i in first["implementations"]}
    rows = []
    for later in runs[1:]:
        for w in first["workloads"]:
            wid = w["id"]
            row = [f"{w['title'].split(':')[0]} ({release(later)} / {release(first)})"]
            for impl in ids:
                mine, theirs = _median(later, impl, wid), _median(first, impl, wid)
                row.append(r.fmt_ratio(mine / theirs) if mine is not None and theirs else "—")
            rows.append(row)
    names = ", ".join(release(s) for s in runs[1:])
    return {
        "id": "sync-servers",
        "title": f"Sync channel: {names} relative to {release(first)}, per implementation",
        "note": (
            "Each implementation's median on the later server divided by its median on the first (time ratios: "
            "< 1× is faster on the later server). Both servers get the same project files and the same "
            "questions; the servers run one after the other, so the machine's load may differ between them. "
            "What differs: the method that opens the project (`updateSnapshot` on 7.0.2, `createSnapshot` on "
            "7.1: opening it again, load warm, is a no-change hit on 7.0.2 and a new snapshot on 7.1), the "
            "official clients' code (each release ships its own), and the binary AST (format 5, 44-byte header, "
            "on 7.0.2; format 9, 64-byte header, on 7.1: the payloads differ by a few bytes)."
        ),
        "header": ["workload (later / first)"] + [labels[i] for i in ids],
        "rows": rows,
        "chart": None,
    }


def _tables(r, sync: dict, suffix: str) -> list[dict]:
    """The medians, ratios and inputs tables of one server; `suffix` names the ids of a later one."""
    server = release(sync)
    opens = (sync.get("server") or {}).get("opens_with", "updateSnapshot")
    files = len(sync["project"]["files"])
    impls = sync["implementations"]
    ids = [i["id"] for i in impls]
    labels = {i["id"]: i["label"] for i in impls}
    languages = {i["id"]: i["language"] for i in impls}
    plan = sync["settings"]
    counts = plan["counts"]
    out = []

    # Medians.
    rows = []
    footnotes = {}
    for w in sync["workloads"]:
        wid = w["id"]
        warm, timed = counts[wid]
        row = [f"{w['title']} ({warm} + {timed} × {plan['rounds']})"]
        for impl in ids:
            entry = sync["runs"].get(impl, {}).get(wid)
            cell = _cell(r, entry, wid, sync)
            if entry and entry.get("status") == "unsupported":
                mark = footnotes.setdefault(entry["reason"], "*" * (len(footnotes) + 1))
                cell = f"—{mark}"
            row.append(cell)
        rows.append(row)
        if _first_byte(sync, wid) is not None:
            first = sync["runs"][RAW][wid]["first_byte"]
            row = ["″ request → first byte of the answer (the server's own time)"]
            row += [f"{r.fmt_time(first['median'])} ({r.fmt_time(first['q1'])}–{r.fmt_time(first['q3'])})"
                    if impl == RAW else "" for impl in ids]  # fmt: skip
            rows.append(row)
        if wid == "spawn":
            row = ["″ the spawn call alone returned (what the seed timed as spawn)"]
            for impl in ids:
                entry = sync["runs"].get(impl, {}).get("spawn", {})
                s = entry.get("spawn_call")
                row.append(f"{r.fmt_time(s['median'])}" + ("²" if impl == ASYNC else "") if s else "—")
            rows.append(row)
    notes = " ".join(f"{mark} {reason}." for reason, mark in footnotes.items())
    large = _file_label(sync, "large")
    out.append(
        {
            "id": f"sync-medians{suffix}",
            "title": f"Sync channel (seed 002): median per operation, `tsc --api` of typescript {server}",
            "note": (
                "Every implementation on the same `tsc` binary and the same project (below), in one run: one "
                f"driver process per implementation per round, {plan['rounds']} rounds, order rotated. Each "
                "iteration is timed on its own by the driver (untimed warm-up iterations first, in the same "
                "process; counts: "
                "warm-up + timed × rounds); median of every timed iteration of every round, (quartiles). Spawn: "
                "from before the client's spawn call until the first `echo` answer (a fresh server each time; "
                f"closing and reaping it is not timed). Load cold: `{opens}` opening the project on a "
                f"fresh, initialized server (the server reads and parses the {files} files and builds their program: "
                "the seed's 58 µs was a warm hit); load warm: the same call again on a server that has it open "
                "(nothing changed; the previous snapshot released untimed"
                + (
                    ""
                    if opens == "updateSnapshot"
                    else f"; `{opens}` builds a new snapshot each time, where 7.0.2's `updateSnapshot` found nothing "
                    "changed: this release's no-change path is `updateSnapshot` on a base snapshot, not measured here"
                )
                + "). Transfer: `getSourceFile` until the "
                "bytes are in hand (agentproto: a view of the client's reused buffer; official: its "
                "`RemoteSourceFile`, after clearing its source-file cache untimed so that the request is made). "
                "Materialize: on bytes fetched untimed, agentproto builds its reader (header and every node link "
                "checked) and walks every node; the official clients walk a freshly fetched `RemoteSourceFile` "
                "with `forEachChild` (materializing each node object). Symbols: positions of every identifier "
                f"of `{sync['project']['symbol_file']}`; once: the middle one. "
                "The raw tuple client writes requests by hand and reads answers whole with "
                "no library (the least a client of this server can take; its first-byte time is the server's own "
                "part; the server's own time varies with its heap, Go's collector running more often in a small "
                "one, so each session's server gets the same requests before its transfers: load warm, then "
                "echo). The pipe floor moves the same number of bytes between two processes with no server and "
                f"no protocol. ~2 MB is {large}. "
                + notes
                + " ² The async client's `new API()` spawns nothing; its server "
                "starts on the first request, inside the spawn → first answer time."
            ),
            "header": ["workload (warm-up + timed × rounds)"] + [labels[i] for i in ids],
            "rows": rows,
            "chart": {
                "title": "echo round trip, median (log scale)",
                "bars": [
                    {
                        "label": labels[i],
                        "color": "#999" if i == FLOOR else COLORS.get(languages[i]),
                        "median": e["stats"]["median"],
                        "lo": e["stats"]["q1"],
                        "hi": e["stats"]["q3"],
                    }
                    for i in ids
                    if (e := sync["runs"].get(i, {}).get("echo")) and e.get("status") == "ok"
                ],
            },
        }
    )

    # Ratios and goals.
    def goal_cell(value: float | None, limit: float | None) -> str:
        if value is None:
            return "—"
        text = r.fmt_ratio(value)
        if limit is not None:
            text += f" {'✓' if value <= limit else '✗'} (≤ {limit:g}×)"
        return text

    rows = []
    for w in sync["workloads"]:
        wid = w["id"]
        ts_goal = 0.8 if wid == "echo" else 1.0
        rust_goal = 0.6 if wid == "echo" else None
        py_goal = 2.0 if wid == "echo" else 1.1 if wid in LARGE_TRANSFERS else None
        floor_goal = 1.1 if wid == "transfer-large" else None
        rows.append(
            [
                w["title"],
                goal_cell(_ratio(sync, TS, OFFICIAL, wid), ts_goal),
                goal_cell(_ratio(sync, RUST, OFFICIAL, wid), rust_goal),
                goal_cell(_ratio(sync, PYTHON, OFFICIAL, wid), py_goal),
                goal_cell(_ratio(sync, ASYNC, OFFICIAL, wid), None),
                goal_cell(_ratio(sync, RUST, RAW, wid), None),
                goal_cell(_ratio(sync, RUST, FLOOR, wid), floor_goal),
            ]
        )
    out.append(
        {
            "id": f"sync-ratios{suffix}",
            "title": f"Sync channel ({server}): time relative to the official sync client, and the goals",
            "note": (
                "Ratios of the medians above (time ratios: < 1× is faster than the reference). Goals (issue 14): "
                "agentproto TypeScript ≤ 1.0× the official sync client on every workload and ≤ 0.8× on the echo "
                "round trip; Rust ≤ 0.6× on the echo round trip and ≤ 1.1× the raw pipe floor on the ~2 MB "
                "transfer; Python ≤ 2× on the echo round trip and ≤ 1.1× on the large transfers (the ~2 MB and "
                "the medium file). The server's own work (parsing, checking, encoding the AST) is inside every "
                "number and the same for every client: it compresses the ratios of the heavy workloads towards "
                "1×. The last two columns compare agentproto's Rust client with the raw tuple client on the same "
                "server (what a client library costs) and with the pipe floor (what the server and the protocol "
                "cost on top of moving the bytes)."
            ),
            "header": ["workload", "agentproto TS", "agentproto Rust", "agentproto Python", "official async",
                       "agentproto Rust vs the raw client", "agentproto Rust vs the pipe floor"],
            "rows": rows,
            "chart": None,
        }
    )  # fmt: skip

    # Inputs.
    rows = []
    project = sync["project"]
    walked = {}
    for size in project["lib_files"]:
        entry = sync["runs"].get(RUST, {}).get(f"materialize-{size}") or {}
        walked[project["lib_files"][size]] = entry.get("detail", {}).get("nodes")
    roles = {name: f"{size} file" for size, name in project["lib_files"].items()}
    roles[project["symbol_file"]] = "symbol workloads"
    for name, info in project["files"].items():
        size = next((s for s, n in project["lib_files"].items() if n == name), None)
        server_ns = _first_byte(sync, f"transfer-{size}") if size else None
        rows.append(
            [
                f"`{name}`",
                roles.get(name, "project source"),
                f"{info['bytes']:,}",
                info["sha256"][:12],
                f"{info['payload_bytes']:,}" if "payload_bytes" in info else "",
                f"{walked[name]:,}" if walked.get(name) else "",
                f"{info['identifiers']:,}" if "identifiers" in info else "",
                r.fmt_time(server_ns) if server_ns else "",
            ]
        )
    options = ", ".join(f"{k}: {v}" for k, v in project["tsconfig"]["compilerOptions"].items())
    lib_from = project.get("lib_from") or sync["tsc"].rsplit("/", 1)[0]
    out.append(
        {
            "id": f"sync-inputs{suffix}",
            "title": f"Sync channel ({server}): the project and its files",
            "note": (
                "Written to a temporary directory at run time: the three lib files shipped with the compiler "
                f"(`{lib_from}`, the same for every server; the size classes of the seed's debug.ts, program.ts and "
                "checker.ts) "
                f"and agentproto's own TypeScript sync module (`{project['sources_from']}/*.ts`, copied) as the "
                f"project's real .ts files, all listed in its tsconfig.json ({options}). Payload: the "
                "`getSourceFile` result (text, string table, node records). Nodes: what every walk visits "
                "(every implementation found the same number). Identifiers: the positions of the symbol workloads "
                f"(once: position {sync['symbol_position']}). Server time: the raw tuple client's median time from "
                "writing `getSourceFile` to the first byte of the answer (the server encodes the whole AST before "
                f"it writes), the part of a transfer that no client can save. Echo payload: `{sync['echo_payload']}`."
            ),
            "header": ["file", "role", "bytes", "sha256", "payload bytes", "nodes", "identifiers", "server time"],
            "rows": rows,
            "chart": None,
        }
    )
    return out


def implementations(results: dict) -> list[list[str]]:
    """Every implementation on every server (the official clients' code and the opening method differ)."""
    return [
        [f"`{i['id']}` on {release(sync)}", i["label"], i["version"], i["does"]]
        for sync in servers(results)
        for i in sync["implementations"]
    ]
