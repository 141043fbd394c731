"""The network part of the benchmark report (issue 31 item 7): the end-to-end prompt turn
over WebSocket and over Streamable HTTP, agent and client of the same SDK on 127.0.0.1,
and the agent's memory per idle WebSocket connection. bench/report.py calls `headline`
and `tables`, passing itself as `r` for its statistics and formatting helpers.

Goal: over WebSocket, agentproto at least 3× the official SDK's messages/s in each
language (the official Rust SDK over its network crate, agent-client-protocol-http 5.0.0).
"""

from __future__ import annotations

# (language, ours, official) in the order the rows are shown.
LANGUAGES = [
    ("Rust", "agentproto-rust", "official-rust"),
    ("TypeScript", "agentproto-ts", "official-ts"),
    ("Python", "agentproto-python", "official-python"),
]
TRANSPORT_NAMES = {"ws": "WebSocket", "http": "Streamable HTTP"}


def _rate(r, net: dict, impl: str, transport: str) -> float | None:
    pair = net["pairs"].get(f"{impl}:{transport}")
    if not pair or not pair["runs"]:
        return None
    return r.stats([run["msgs_per_sec"] for run in pair["runs"]])["median"]


def headline(r, results: dict) -> list[dict]:
    net = results.get("net")
    if not net:
        return []
    rows = []
    for language, ours, official in LANGUAGES:
        for transport in ("ws", "http"):
            mine, theirs = _rate(r, net, ours, transport), _rate(r, net, official, transport)
            if mine is None or theirs is None:
                continue
            ratio = mine / theirs
            goal, met = ("≥ 3×", ratio >= 3) if transport == "ws" else ("—", None)
            what = (
                f"end to end over {TRANSPORT_NAMES[transport]}, messages/s: agentproto ({language}) "
                f"speed-up over the official {language} SDK"
            )
            rows.append({"what": what, "value": ratio, "unit": "×", "goal": goal, "met": met})
    for _, ours, _ in LANGUAGES:
        idle = net["idle"].get(ours)
        if idle:
            what = f"agent memory per idle WebSocket connection, {r.impl_map(results)[ours]['label']}"
            rows.append({"what": what, "value": idle["per_connection_kb"], "unit": "KiB", "goal": "—", "met": None})
    return rows


def tables(r, results: dict) -> list[dict]:
    net = results.get("net")
    if not net:
        return []
    ids = r.impl_map(results)
    rows, bars = [], []
    for language, ours, official in LANGUAGES:
        for impl in (ours, official):
            if f"{impl}:ws" not in net["pairs"]:
                continue
            cells = [ids[impl]["label"]]
            for transport in ("ws", "http"):
                pair = net["pairs"][f"{impl}:{transport}"]
                rate = r.stats([run["msgs_per_sec"] for run in pair["runs"]])
                cells.append(f"{r.fmt_rate(rate['median'])} ({r.fmt_rate(rate['min'])}–{r.fmt_rate(rate['max'])})")
                bars.append(
                    {
                        "label": f"{ids[impl]['label']}, {TRANSPORT_NAMES[transport]}",
                        "color": r.COLORS.get(language, "#777"),
                        "median": rate["median"],
                        "lo": rate["min"],
                        "hi": rate["max"],
                        "fmt": "rate",
                    }
                )
            idle = net["idle"].get(impl)
            cells.append(f"{idle['per_connection_kb']:.1f} KiB" if idle else "—")
            cells.append(f"{idle['rss_before_kb'] / 1024:.1f} MiB" if idle else "—")
            rows.append(cells)
    note = (
        f"The end-to-end turn ({net['count']:,} `session/update` × {net['tokens']} tokens) with agent and client "
        "of the same SDK in two processes over 127.0.0.1: the agent serves `/acp` with the SDK's own server, "
        "the client connects with the SDK's own client. Median of "
        f"{net['runs']} runs (min–max) per transport, the SDKs and transports interleaved. Idle memory: a fresh "
        f"agent's VmRSS before and after {net['idle_connections']} WebSocket connections that each sent "
        "`initialize` and read its answer, divided by their number (the baseline is the agent's RSS after one "
        "connection). The official Rust SDK's row is its network crate, agent-client-protocol-http 5.0.0 "
        "(`AcpHttpServer` under `axum::serve` / `HttpClient`)."
    )
    return [
        {
            "id": "net",
            "title": "End to end over the network: WebSocket and Streamable HTTP",
            "note": note,
            "header": ["SDK", "WebSocket, msgs/s", "Streamable HTTP, msgs/s", "per idle connection", "agent RSS"],
            "rows": rows,
            "chart": {"title": "over the network, messages per second (higher is better, log scale)", "bars": bars},
        }
    ]
