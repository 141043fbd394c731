"""The TypeScript SDK's part of the benchmark report: the goals set for agentproto's
TypeScript SDK (issue 13, item 7), in the headline. bench/report.py calls `headline`,
passing itself as `r` for its statistics helpers. Standard library only.

Goals, measured side by side in one run:
- codec loop, in-loop warmed: at least 2× faster than the official TypeScript SDK, and at
  most 1.3× the time of `JSON.parse` alone;
- cold codec loop (the seed's 10,000 iterations, no warm-up): at least 5× faster than the
  official TypeScript SDK;
- cold start (spawn → first response line) at most 1.2× the bare `JSON.parse` program's;
- end to end (messages/s) at least 3× the official TypeScript SDK.
"""

from __future__ import annotations

import sdk_goals

OURS = "agentproto-ts"
RAW = "json-parse"
OFFICIAL = "official-ts"


def headline(r, results: dict) -> list[dict]:
    rows = []

    def add(what, value, goal="—", met=None, unit="×"):
        if value is not None:
            rows.append({"what": what, "value": value, "unit": unit, "goal": goal, "met": met})

    ids = {i["id"] for i in results.get("implementations", [])}
    if OURS not in ids:
        return rows

    def loop(view: str, mode: str, impl: str) -> float:
        return r.per_op(results, view, mode, impl)["median"]

    if results.get("in_loop"):
        if OFFICIAL in ids:
            ratio = loop("in_loop", "codec", OFFICIAL) / loop("in_loop", "codec", OURS)
            add("codec loop, in-loop warmed: agentproto (TypeScript) speed-up over the official TypeScript SDK",
                ratio, "≥ 2×", ratio >= 2)  # fmt: skip
            for mode, what in (("throughput", "the four seed messages"), ("tokens", "the 100-token update")):
                add(
                    f"decode loop ({what}, in-loop warmed): agentproto (TypeScript) speed-up over the official "
                    "TypeScript SDK",
                    loop("in_loop", mode, OFFICIAL) / loop("in_loop", mode, OURS),
                )
        if RAW in ids:
            ratio = loop("in_loop", "codec", OURS) / loop("in_loop", "codec", RAW)
            add("codec loop, in-loop warmed: agentproto (TypeScript) time relative to JSON.parse (< 1× = faster)",
                ratio, "≤ 1.3×", ratio <= 1.3)  # fmt: skip
            for mode, what in (("throughput", "the four seed messages"), ("tokens", "the 100-token update")):
                add(
                    f"validating decode per message ({what}, in-loop warmed): agentproto (TypeScript) time "
                    "relative to JSON.parse alone",
                    loop("in_loop", mode, OURS) / loop("in_loop", mode, RAW),
                )
    whole = results.get("whole_process")
    if whole:
        if OFFICIAL in ids:
            ratio = loop("whole_process", "codec", OFFICIAL) / loop("whole_process", "codec", OURS)
            add("cold codec loop (the seed's 10,000 iterations, no warm-up): agentproto (TypeScript) speed-up over "
                "the official TypeScript SDK", ratio, "≥ 5×", ratio >= 5)  # fmt: skip
            add(
                "cold tokens loop (10,000 updates of 100 tokens, no warm-up): agentproto (TypeScript) speed-up over "
                "the official TypeScript SDK",
                loop("whole_process", "tokens", OFFICIAL) / loop("whole_process", "tokens", OURS),
            )
    names = ("agentproto (TypeScript)", "agentproto's TypeScript adapter", "JSON.parse")
    sdk_goals.cold_start(r, results, OURS, RAW, names, 1.2, add)
    sdk_goals.end_to_end(r, results, OURS, OFFICIAL, ("agentproto (TypeScript)", "the official TypeScript SDK"), add)
    return rows
