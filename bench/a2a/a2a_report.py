"""The A2A section of the benchmark report (bench/report.py calls `headline` and `tables`,
passing itself as `r` for its formatting helpers). Standard library only."""

from __future__ import annotations

import sdk_goals

OURS = "agentproto-a2a"
FLOOR = "floor"
HYPER_FLOOR = "hyper-floor"
COMMUNITY = "a2a-protocol-sdk"
OFFICIAL_RUST = "a2a-server-lf"
# The TypeScript rows issue 33 sets goals for: ours against the official @a2a-js/sdk.
TS_OURS = "agentproto-a2a-ts"
TS_OFFICIAL = "a2a-js"
# The Python rows issue 32 sets goals for: ours against the official a2a-sdk on the same uvicorn.
PY_OURS = "agentproto-a2a-python"
PY_OFFICIAL = "a2a-sdk-python"
# Per language: (our row, the official SDK's row, p50 speed-up goal, sustained sends/s goal);
# bench/sdk_goals.py's `a2a_official` reports them.
SDK_GOALS = ((TS_OURS, TS_OFFICIAL, 3, 5), (PY_OURS, PY_OFFICIAL, 5, 10))
# Issue 32 (Python) and issue 35: peak memory growth for maximum-size messages at most this many
# times the bodies in flight.
MEMORY_BOUND = 4
# The Rust peers issue 30 sets speed goals against (floor request and stream p50 ≥ 2×, 50
# concurrent sends ≥ 3×).
RUST_PEERS = (COMMUNITY, OFFICIAL_RUST)
# The 4 MiB message's text: 4 MiB less 4 KiB of `x` (the client's `large` request).
LARGE_TEXT = (4 << 20) - 4096
WORKLOAD_TITLES = {
    "floor-request": "SendMessage, seed 004's floor request (181-byte body, `hello`, EchoExecutor)",
    "echo": "echo round trip: SendMessage, 256 × `A` (EchoExecutor)",
    "noop": "minimal overhead: SendMessage to the NoopExecutor",
    "stream": "stream: SendStreamingMessage, drained until the server ends it",
    "large": "maximum-size message: SendMessage, 4 MiB less 4 KiB of `x` (EchoExecutor)",
}
COLORS = {"Rust": "#b7410e", "Python": "#3b7d3b", "TypeScript": "#3178c6"}


def _servers(a2a: dict) -> dict:
    return {s["id"]: s for s in a2a["servers"]}


def trial_stat(r, a2a: dict, server: str, workload: str, field: str) -> dict | None:
    """Statistics over trials of one field (each trial's own percentile or total)."""
    lines = a2a["runs"].get(server, {}).get(workload)
    if not lines:
        return None
    return r.stats([line[field] for line in lines])


def batch_stat(r, a2a: dict, server: str) -> dict | None:
    """Median over trials of each trial's median batch time; spread: every batch."""
    lines = a2a["runs"].get(server, {}).get("concurrent")
    if not lines:
        return None
    s = r.stats([line["batch_p50_ns"] for line in lines])
    every = [ns for line in lines for ns in line["batch_ns"]]
    return s | {"min": min(every), "max": max(every)}


def _median(r, a2a: dict, server: str, workload: str, field: str) -> float | None:
    s = trial_stat(r, a2a, server, workload, field)
    return s["median"] if s else None


def headline(r, results: dict) -> list[dict]:
    a2a = results.get("a2a")
    if not a2a:
        return []
    ids = _servers(a2a)
    rows = []

    def add(what, value, goal="—", met=None, unit="×"):
        if value is not None:
            rows.append({"what": what, "value": value, "unit": unit, "goal": goal, "met": met})

    ours = _median(r, a2a, OURS, "floor-request", "p50_ns")
    floor = _median(r, a2a, FLOOR, "floor-request", "p50_ns")
    if ours and floor:
        ratio = ours / floor
        add("A2A SendMessage p50 (seed 004's floor request): agentproto relative to the raw-socket floor",
            ratio, "≤ 1.3×", ratio <= 1.3)  # fmt: skip
        add("A2A SendMessage p50: agentproto above the floor", (ours - floor) / 1e3, unit="µs")
    hyper = _median(r, a2a, HYPER_FLOOR, "floor-request", "p50_ns")
    if ours and hyper:
        ratio = ours / hyper
        add("A2A SendMessage p50 (seed 004's floor request): agentproto relative to the hyper + serde_json floor",
            ratio, "≤ 1.5×", ratio <= 1.5)  # fmt: skip
    # Issue 30: at least 2× faster p50 than both Rust peers on the floor request and on the
    # stream, at least 3× on 50 concurrent sends (batch time).
    for peer in RUST_PEERS:
        if peer not in ids:
            continue
        for wid, what in (("floor-request", "SendMessage p50 (seed 004's floor request)"),
                          ("stream", "SendStreamingMessage p50 (the stream)")):  # fmt: skip
            mine, theirs = _median(r, a2a, OURS, wid, "p50_ns"), _median(r, a2a, peer, wid, "p50_ns")
            if mine and theirs:
                add(f"A2A {what}: agentproto speed-up over {ids[peer]['label']}", theirs / mine, "≥ 2×",
                    theirs / mine >= 2)  # fmt: skip
        mine_b, their_b = batch_stat(r, a2a, OURS), batch_stat(r, a2a, peer)
        if mine_b and their_b:
            ratio = their_b["median"] / mine_b["median"]
            add(f"A2A 50 concurrent sends (batch time): agentproto speed-up over {ids[peer]['label']}",
                ratio, "≥ 3×", ratio >= 3)  # fmt: skip
    # Issue 33 (TypeScript) and issue 32 (Python): our server against the official SDK's.
    median = lambda sid, wid, field: _median(r, a2a, sid, wid, field)  # noqa: E731
    for mine_id, theirs_id, p50_goal, rps_goal in SDK_GOALS:
        if mine_id in ids and theirs_id in ids:
            labels = (ids[mine_id]["label"], ids[theirs_id]["label"])
            sdk_goals.a2a_official(median, (mine_id, theirs_id), labels, (p50_goal, rps_goal), add)
    if PY_OURS in ids:
        grown = _median(r, a2a, PY_OURS, "memory", "growth_per_bodies")
        if grown is not None:
            at_once = a2a["runs"][PY_OURS]["memory"][0]["at_once"]
            add(f"A2A peak memory growth for {at_once} maximum-size SendMessages at once: {ids[PY_OURS]['label']}, "
                "relative to the bodies", grown, f"≤ {MEMORY_BOUND}×", grown <= MEMORY_BOUND)  # fmt: skip
    cpu_ours = _median(r, a2a, OURS, "cpu", "cpu_ns_per_request")
    cpu_hyper = _median(r, a2a, HYPER_FLOOR, "cpu", "cpu_ns_per_request")
    if cpu_ours and cpu_hyper:
        ratio = cpu_ours / cpu_hyper
        add("A2A server CPU per request (floor request): agentproto relative to the hyper + serde_json floor",
            ratio, "≤ 2×", ratio <= 2)  # fmt: skip
    # Issue 30, item 5: the same comparison in counts that noise cannot hide.
    inst = lambda sid: _count(a2a, sid, "instructions", "floor-request")  # noqa: E731
    allocs = lambda sid: _count(a2a, sid, "allocations", "floor-request")  # noqa: E731
    if inst(OURS) and inst(HYPER_FLOOR):
        ratio = inst(OURS) / inst(HYPER_FLOOR)
        add("A2A instructions per floor request (server, user space): agentproto relative to the hyper + serde_json "
            "floor", ratio, "≤ 2×", ratio <= 2)  # fmt: skip
        add("A2A instructions per floor request: agentproto", inst(OURS) / 1e3, unit="K instructions")
        add("A2A instructions per floor request: hyper + serde_json floor", inst(HYPER_FLOOR) / 1e3,
            unit="K instructions")  # fmt: skip
    if allocs(OURS) and allocs(HYPER_FLOOR):
        add("A2A allocations per floor request: agentproto relative to the hyper + serde_json floor",
            allocs(OURS) / allocs(HYPER_FLOOR))  # fmt: skip
        add("A2A allocations per floor request: agentproto", allocs(OURS), unit="allocations")
    # Issue 18: a maximum-size message handled in a few milliseconds beyond its transfer time
    # (the raw-socket floor's time for the same bytes).
    # Issue 30 keeps 5 ms for the memory store and sets 20 ms for SQLite.
    transfer = _median(r, a2a, FLOOR, "large", "p50_ns")
    for sid, limit in ((OURS, 5), ("agentproto-a2a-sqlite", 20)):
        large = _median(r, a2a, sid, "large", "p50_ns")
        if large and transfer and sid in ids:
            beyond = (large - transfer) / 1e6
            add(f"A2A 4 MiB SendMessage p50: {ids[sid]['label']} beyond the transfer time (the raw-socket floor's)",
                beyond, f"≤ {limit} ms", beyond <= limit, "ms")  # fmt: skip
    for sid in (OURS, "agentproto-a2a-sqlite"):
        large = ((a2a.get("counts") or {}).get("runs", {}).get(sid, {}).get("allocations") or {}).get("large")
        if large and sid in ids:
            add(f"A2A 4 MiB SendMessage: bytes allocated per request, in sizes of the text: {ids[sid]['label']}",
                large["bytes_per_request"] / LARGE_TEXT, unit="texts")  # fmt: skip
    batch = batch_stat(r, a2a, OURS)
    if batch:
        add("A2A 50 concurrent sends (50 connections), total time (agentproto)", batch["median"] / 1e6,
            "< 2 ms", batch["median"] < 2e6, "ms")  # fmt: skip
    # The durable stores against the memory store, on the same sustained load (issue 18 asks
    # SQLite for at least half the memory store's throughput; it names 64 connections, the
    # seed's workload has 50).
    memory_rps = _median(r, a2a, OURS, "concurrent", "sustained_rps")
    for sid, goal in (("agentproto-a2a-sqlite", 0.5), ("agentproto-a2a-pg", 0.3), ("agentproto-a2a-pg2", None)):
        rps = _median(r, a2a, sid, "concurrent", "sustained_rps")
        if memory_rps and rps and sid in ids:
            ratio = rps / memory_rps
            add(f"A2A sustained echo sends/s (50 connections): {ids[sid]['label']} relative to the memory store",
                ratio, f"≥ {goal}×" if goal else "—", ratio >= goal if goal else None)  # fmt: skip
    one, two = (
        _median(r, a2a, sid, "concurrent", "sustained_rps") for sid in ("agentproto-a2a-pg", "agentproto-a2a-pg2")
    )
    if one and two:
        add("A2A sustained echo sends/s on PostgreSQL: two replicas relative to one", two / one, "≥ 1×", two >= one)
    pg_seq = _median(r, a2a, "agentproto-a2a-pg", "floor-request", "p50_ns")
    sqlite_seq = _median(r, a2a, "agentproto-a2a-sqlite", "floor-request", "p50_ns")
    if pg_seq and sqlite_seq:
        ratio = pg_seq / sqlite_seq
        add("A2A sequential SendMessage p50 (floor request): PostgreSQL store relative to SQLite", ratio, "≤ 2×",
            ratio <= 2)  # fmt: skip
    echo = _median(r, a2a, OURS, "echo", "p50_ns")
    for other in (*RUST_PEERS, "a2a-sdk-python"):
        theirs = _median(r, a2a, other, "echo", "p50_ns")
        if echo and theirs and other in ids:
            add(f"A2A echo round trip p50: agentproto speed-up over {ids[other]['label']}", theirs / echo)
        mine_b, their_b = batch_stat(r, a2a, OURS), batch_stat(r, a2a, other)
        if mine_b and their_b and other not in RUST_PEERS:  # the Rust peers' rows have goals above
            add(f"A2A 50 concurrent sends: agentproto speed-up over {ids[other]['label']}",
                their_b["median"] / mine_b["median"])  # fmt: skip
    # The gRPC binding: ours against the official SDKs' (Rust, Python), and against our JSON-RPC.
    ours_grpc = _median(r, a2a, "agentproto-a2a-grpc", "echo", "p50_ns")
    for other in ("a2a-server-lf-grpc", "a2a-sdk-python-grpc"):
        if other not in ids:
            continue
        theirs_grpc = _median(r, a2a, other, "echo", "p50_ns")
        if ours_grpc and theirs_grpc:
            add(f"A2A echo round trip p50 over gRPC: agentproto speed-up over {ids[other]['label']}",
                theirs_grpc / ours_grpc)  # fmt: skip
        mine_b, their_b = batch_stat(r, a2a, "agentproto-a2a-grpc"), batch_stat(r, a2a, other)
        if mine_b and their_b:
            add(f"A2A 50 concurrent sends over gRPC: agentproto speed-up over {ids[other]['label']}",
                their_b["median"] / mine_b["median"])  # fmt: skip
    # Issue 30: gRPC p50 at most 1.2× JSON-RPC's, on the floor request and on the echo.
    for wid, what in (("floor-request", "SendMessage p50 (floor request)"), ("echo", "echo round trip p50")):
        mine, grpc = _median(r, a2a, OURS, wid, "p50_ns"), _median(r, a2a, "agentproto-a2a-grpc", wid, "p50_ns")
        if mine and grpc:
            add(f"A2A {what}: agentproto over gRPC relative to agentproto over JSON-RPC", grpc / mine, "≤ 1.2×",
                grpc / mine <= 1.2)  # fmt: skip
    return rows


def _count(a2a: dict, server: str, kind: str, workload: str) -> float | None:
    """Instructions or allocations per request of one workload (a2a_counts.py), if counted."""
    counts = (a2a.get("counts") or {}).get("runs", {}).get(server, {}).get(kind, {}).get(workload)
    return counts["per_request"] if counts else None


def tables(r, results: dict) -> list[dict]:
    a2a = results.get("a2a")
    if not a2a:
        return []
    ids = _servers(a2a)
    order = [s["id"] for s in a2a["servers"]]
    plan = a2a["settings"]
    out = []

    # Sequential latency.
    rows = []
    bars = []
    for wid, title in WORKLOAD_TITLES.items():
        ours = _median(r, a2a, OURS, wid, "p50_ns")
        # The floors answer the floor request and the large message; the other workloads are
        # compared with the floor request's time.
        floor_p50 = _median(r, a2a, FLOOR, wid, "p50_ns") or _median(r, a2a, FLOOR, "floor-request", "p50_ns")
        first = True
        for sid in order:
            p50 = trial_stat(r, a2a, sid, wid, "p50_ns")
            if not p50:
                continue
            p90 = trial_stat(r, a2a, sid, wid, "p90_ns")
            p99 = trial_stat(r, a2a, sid, wid, "p99_ns")
            last = a2a["runs"][sid][wid][-1]
            answer = f"{last['response_bytes']} ({last['body_bytes']})"
            if wid == "stream":
                answer += f", {last['events']} events"
            rows.append(
                [
                    title if first else "″",
                    ids[sid]["label"],
                    f"{r.fmt_time(p50['median'])} ({r.spread(p50)})",
                    r.fmt_time(p90["median"]),
                    r.fmt_time(p99["median"]),
                    r.fmt_ratio(p50["median"] / floor_p50) if floor_p50 else "—",
                    r.fmt_time(p50["median"] - floor_p50) if floor_p50 and sid != FLOOR else "—",
                    r.fmt_ratio(p50["median"] / ours) if ours else "—",
                    answer,
                ]
            )
            first = False
            if wid == "floor-request":
                bars.append(
                    {"label": ids[sid]["label"], "color": "#999" if sid == FLOOR else COLORS.get(ids[sid]["language"]),
                     "median": p50["median"], "lo": p50["min"], "hi": p50["max"]}
                )  # fmt: skip
    out.append(
        {
            "id": "a2a-latency",
            "title": "A2A: sequential latency, one warm keep-alive connection (seed 004)",
            "note": (
                f"One Rust raw-socket client (TCP_NODELAY, keep-alive) sends byte-identical requests to every "
                f"server, one at a time: {plan['warmup']} warm-up then {plan['count']} timed requests per trial "
                f"({plan['stream_warmup']} + {plan['stream_count']} for the stream), {plan['trials']} trials, each "
                "on a freshly started server, servers in an order rotated per trial. Percentiles are nearest-rank "
                "within a trial; shown: the median over trials of each trial's percentile, (min–max over trials) "
                "for p50. Every answer is checked (200, completed task, the echo artifact where due). The floor "
                "parses nothing and runs no agent: it bounds sequential latency only, and ratios of end-to-end "
                "medians understate the servers' own cost ratio, so the time above the floor is given too. "
                "Answer: bytes on the wire (body); the echo and floor requests set historyLength 0, so no server "
                "echoes the 256 bytes back. Streams: every server sends the task (SUBMITTED) first, then "
                "Working, the artifact, Completed; a2a-server-lf sends no task first (three events). The "
                "maximum-size message (a 4,194,304-byte text less 4 KiB, "
                f"{plan['large_warmup']} warm-up then {plan['large_count']} timed per trial, after the other "
                "workloads) is compared with the floors' time for the same bytes: the raw-socket floor reads "
                "them and answers, which is the time the bytes take to arrive."
            ),
            "header": ["workload", "server", "p50 (min–max)", "p90", "p99", "vs floor", "above floor",
                       "vs agentproto", "answer bytes (body)"],
            "rows": rows,
            "chart": {"title": "A2A SendMessage (floor request), p50 (log scale)", "bars": bars},
        }
    )  # fmt: skip

    # Concurrency.
    rows = []
    bars = []
    mine = batch_stat(r, a2a, OURS)
    for sid in order:
        b = batch_stat(r, a2a, sid)
        if not b:
            continue
        rps = r.stats([line["sustained_rps"] for line in a2a["runs"][sid]["concurrent"]])
        rows.append(
            [
                ids[sid]["label"],
                f"{r.fmt_time(b['median'])} ({r.spread(b)})",
                r.fmt_rate(plan["connections"] / (b["median"] / 1e9)) + " sends/s",
                f"{r.fmt_rate(rps['median'])} ({r.fmt_rate(rps['min'])}–{r.fmt_rate(rps['max'])})",
                r.fmt_ratio(b["median"] / mine["median"]) if mine else "—",
            ]
        )
        bars.append(
            {"label": ids[sid]["label"], "color": COLORS.get(ids[sid]["language"], "#777"), "median": b["median"],
             "lo": b["min"], "hi": b["max"]}
        )  # fmt: skip
    out.append(
        {
            "id": "a2a-concurrent",
            "title": f"A2A: {plan['connections']} concurrent sends ({plan['connections']} connections, echo)",
            "note": (
                f"{plan['connections']} keep-alive connections driven by one client thread (tokio, current-thread), "
                f"{plan['conc_warmup']} warm-up requests each. Batch: every connection sends the 256-byte echo at "
                f"once; the time until all {plan['connections']} answers are in, {plan['batches']} batches per trial "
                "(median of the trials' median batch; min–max over every batch). Sustained: every connection sends "
                f"{plan['per_connection']} requests back to back. The floor is left out: a thread per connection "
                "measures its own thread ceiling. Client and server share the machine's cores."
            ),
            "header": ["server", "batch of 50 (min–max)", "batch throughput", "sustained requests/s",
                       "vs agentproto (batch time)"],
            "rows": rows,
            "chart": {"title": f"A2A {plan['connections']} concurrent sends, batch time (log scale)", "bars": bars},
        }
    )  # fmt: skip

    # Peak memory for maximum-size messages.
    rows = []
    for sid in order:
        s = trial_stat(r, a2a, sid, "memory", "growth_per_bodies")
        if not s:
            continue
        last = a2a["runs"][sid]["memory"][-1]
        growth = r.stats([line["growth_bytes"] for line in a2a["runs"][sid]["memory"]])
        rows.append(
            [
                ids[sid]["label"],
                f"{growth['median'] / (1 << 20):.1f} MiB",
                f"{last['at_once'] * last['body_bytes'] / (1 << 20):.1f} MiB",
                f"{s['median']:.2f}× ({s['min']:.2f}–{s['max']:.2f})",
                f"{last['rss_before_kib'] / 1024:.1f} MiB",
            ]
        )
    if rows:
        at_once = plan.get("memory_at_once", "?")
        out.append(
            {
                "id": "a2a-memory",
                "title": f"A2A: peak memory, {at_once} maximum-size SendMessages at once",
                "note": (
                    f"Per trial, on a freshly started server: one floor request, then {at_once} maximum-size "
                    f"SendMessages (EchoExecutor) at once on {at_once} connections. Growth: the server's peak "
                    "resident memory (VmHWM, reset through /proc/<pid>/clear_refs just before) less its resident "
                    "memory before them; relative to the request bodies' total (issue 35's measure; goal for "
                    f"agentproto: ≤ {MEMORY_BOUND}×). What a store keeps of the messages counts. JSON-RPC rows with "
                    "one process; the floors are left out. Shown: median over trials (min–max)."
                ),
                "header": ["server", "peak growth", "bodies", "growth / bodies (min–max)", "resident before"],
                "rows": rows,
            }
        )

    # CPU per request.
    rows = []
    mine = _median(r, a2a, OURS, "cpu", "cpu_ns_per_request")
    for sid in order:
        s = trial_stat(r, a2a, sid, "cpu", "cpu_ns_per_request")
        if not s:
            continue
        served = r.stats([line["requests"] for line in a2a["runs"][sid]["cpu"]])
        rows.append(
            [
                ids[sid]["label"],
                f"{r.fmt_time(s['median'])} ({r.spread(s)})",
                f"{served['median']:.0f}",
                r.fmt_ratio(s["median"] / mine) if mine else "—",
            ]
        )
    out.append(
        {
            "id": "a2a-cpu",
            "title": "A2A: server CPU per request (floor request, sequential)",
            "note": (
                f"After {plan['cpu_warmup']} warm-up requests, the server process's utime + stime from "
                f"/proc/<pid>/stat (all threads; {a2a['clk_tck']} ticks/s) over {plan['cpu_seconds']:g} s of "
                "back-to-back requests on one connection, divided by the requests served; median over trials "
                "(min–max). Tick resolution: the fewer requests served, the coarser the figure."
            ),
            "header": ["server", "CPU per request (min–max)", "requests in the probe", "vs agentproto"],
            "rows": rows,
            "chart": None,
        }
    )

    counts = counts_table(r, a2a, order, ids)
    if counts:
        out.append(counts)

    # Agent card codec.
    rows = []
    card = a2a["card"]
    count = plan["card_count"]
    for label in a2a["card_inputs"]:
        mine = card.get(OURS, {}).get(label) or []
        ours_rt = None
        if mine and all(line["status"] == "ok" for line in mine):
            ours_rt = r.stats([line["roundtrip_ns"] / line["count"] for line in mine])["median"]
        for sid in order:
            lines = card.get(sid, {}).get(label)
            if not lines:
                continue
            if any(line["status"] != "ok" for line in lines):
                rows.append([ids[sid]["label"], label, "refused: " + lines[0].get("error", "?"), "", "", "—"])
                continue
            cells = []
            for op in ("decode_ns", "encode_ns", "roundtrip_ns"):
                s = r.stats([line[op] / line["count"] for line in lines])
                cells.append(f"{r.fmt_time(s['median'])} ({r.spread(s)})")
            rt = r.stats([line["roundtrip_ns"] / line["count"] for line in lines])["median"]
            ratio = r.fmt_ratio(rt / ours_rt) if ours_rt else "—"
            rows.append([ids[sid]["label"], f"{label} ({lines[0]['input_bytes']} B)", *cells, ratio])
    out.append(
        {
            "id": "a2a-card",
            "title": "A2A: agent card decode / encode, in process (seed 004's serialize_agent_card)",
            "note": (
                f"Per operation, {count:,} iterations after {max(1, count // 10):,} untimed round trips, median of "
                f"{plan['card_rounds']} process runs (min–max), implementations interleaved. Decode: agentproto's "
                "`agentproto_codec::decode_slice` into the generated `v1::AgentCard` (validating); the community "
                "SDK's `serde_json::from_slice` into `a2a_protocol_types::AgentCard`; the official Rust SDK's into "
                "`a2a::AgentCard` (a2a-lf). Encode: `serde_json::to_vec` (a fresh Vec per call) on all. Inputs: "
                "the 1.0-clean card (compact; the canonical one without its "
                "top-level `url` and with protocolVersion `1.0`), and seed 004's canonical file as published "
                "(595 B, pretty-printed, a 0.3 leftover top-level `url` that 1.0 decoders ignore as unknown, "
                "protocolVersion `1.0.0`). Each re-encodes the clean card to the same JSON as the input (checked)."
            ),
            "header": ["implementation", "input", "decode", "encode", "round trip", "round trip vs agentproto"],
            "rows": rows,
            "chart": None,
        }
    )

    # Requests.
    out.append(
        {
            "id": "a2a-requests",
            "title": "A2A: the requests (identical bytes for every server; only the port in Host differs)",
            "note": (
                "Every request: `POST / HTTP/1.1`, `Host`, `Content-Type: application/json`, `A2A-Version: 1.0`, "
                "`Accept` (`text/event-stream` for the stream), `Content-Length`. The floor request is seed 004's "
                "byte for byte (checked by the runner). A message id starting with `noop` selects the NoopExecutor "
                "on every server."
            ),
            "header": ["request", "bytes (port 0)", "body bytes", "body"],
            "rows": [
                [name, str(q["bytes"]), str(q["body_bytes"]), f"`{q['body']}`"] for name, q in a2a["requests"].items()
            ],
            "chart": None,
        }
    )
    return out


def implementations(results: dict) -> list[list[str]]:
    a2a = results.get("a2a")
    if not a2a:
        return []
    return [[f"`{s['id']}`", s["label"], s["version"], s["does"]] for s in a2a["servers"]]


def counts_table(r, a2a: dict, order: list[str], ids: dict) -> dict | None:
    """Instructions and allocations per request (a2a_counts.py) beside the time figures."""
    counts = a2a.get("counts")
    if not counts:
        return None
    plan = counts["settings"]
    hyper_i = _count(a2a, HYPER_FLOOR, "instructions", "floor-request")
    hyper_a = _count(a2a, HYPER_FLOOR, "allocations", "floor-request")

    def per(sid: str, kind: str, wid: str, digits: int = 0) -> str:
        v = _count(a2a, sid, kind, wid)
        return "—" if v is None else f"{v:,.{digits}f}"

    def vs(v: float | None, base: float | None) -> str:
        return r.fmt_ratio(v / base) if v is not None and base else "—"

    rows = []
    for sid in order:
        runs = counts["runs"].get(sid)
        if not runs:
            continue
        inst = _count(a2a, sid, "instructions", "floor-request")
        allocs = _count(a2a, sid, "allocations", "floor-request")
        floor_allocs = runs.get("allocations", {}).get("floor-request") or {}
        large = runs.get("allocations", {}).get("large") or {}
        cpu = _median(r, a2a, sid, "cpu", "cpu_ns_per_request")
        p50 = _median(r, a2a, sid, "floor-request", "p50_ns")
        rows.append(
            [
                ids[sid]["label"],
                per(sid, "instructions", "floor-request"),
                vs(inst, hyper_i),
                per(sid, "allocations", "floor-request", 1),
                vs(allocs, hyper_a),
                f"{floor_allocs['reallocs_per_request']:.1f}" if floor_allocs else "—",
                f"{floor_allocs['bytes_per_request']:,.0f}" if floor_allocs else "—",
                f"{floor_allocs['context_switches_per_request']:.2f}"
                if "context_switches_per_request" in floor_allocs
                else "—",
                r.fmt_time(cpu) if cpu else "—",
                r.fmt_time(p50) if p50 else "—",
                per(sid, "instructions", "stream"),
                per(sid, "allocations", "stream", 1),
                per(sid, "allocations", "large", 1),
                f"{large['bytes_per_request'] / LARGE_TEXT:.1f}" if large else "—",
            ]
        )
    perf = counts["perf_instructions_u"]
    how = (
        "perf's instructions:u counter was available but callgrind was used for every row"
        if perf == "yes"
        else f"the hardware counter is not available in this VM: perf stat -e instructions:u says “{perf}”"
    )
    return {
        "id": "a2a-counts",
        "title": "A2A: instructions and allocations per request (server process, one warm connection)",
        "note": (
            "Counts that machine noise cannot move, for every server row (issue 30, item 5). On a fresh server "
            "per tool, the client's warm-up runs first; the window then holds exactly the timed requests on one "
            "keep-alive connection (not start-up, warm-up, or the connection's opening and closing), and "
            "includes whatever the server does for them on other threads. Instructions: user-space "
            f"instructions of the server process, all threads, counted by valgrind's callgrind ({how}; "
            f"{plan['inst_warmup']} warm-up, {plan['inst_count']} counted requests; the Python rows, at about "
            "10 M instructions a request, at most 20 and 50). Allocations: calls into "
            "the C allocator (malloc, calloc, the aligned family, realloc of nothing) counted by an LD_PRELOAD "
            f"library (bench/a2a/counts/alloc_count.c; {plan['alloc_warmup']} warm-up, {plan['alloc_count']} "
            "counted); reallocs: growing or shrinking an existing block; bytes: requested by the allocating "
            "calls and reallocs. Context switches (voluntary and involuntary, all live threads, from "
            "/proc/<pid>/task/*/status, in the allocation window): how often the server's threads hand work "
            "to each other or wait, which instructions do not show. Every Rust row allocates through the C "
            "allocator (Rust's System allocator); "
            "the Python rows run with PYTHONMALLOC=malloc for this count so that every object is seen. The "
            "PostgreSQL rows count the server process only, not PostgreSQL's backends. Beside them, the time "
            "figures of the same run: CPU per request from the CPU probe and the floor request's p50. The "
            "floors answer only the floor request (and the 4 MiB message). The 4 MiB message (allocations only, "
            f"{plan['large_warmup']} warm-up, {plan['large_count']} counted): bytes allocated per request divided "
            "by the text's size (4,190,208 B), about how many times the server copies or re-encodes the text "
            "(buffers grown by doubling count their every size)."
        ),
        "header": [
            "server", "instructions / floor request", "vs hyper floor", "allocations / floor request",
            "vs hyper floor", "reallocs / request", "bytes allocated / request", "context switches / request",
            "CPU / request (probe)",
            "floor request p50", "instructions / stream", "allocations / stream", "allocations / 4 MiB message",
            "bytes allocated / 4 MiB message, in texts",
        ],
        "rows": rows,
        "chart": None,
    }  # fmt: skip
