"""What every Python adapter shares: seed 000's command line, its messages (byte for
byte the same as bench/rust/harness), the timed loops and the one-line JSON report.

An adapter supplies ``decode(kind, line) -> bool`` and two encoders; the loops, the
clock and the output are this module's, as in the Rust and JavaScript harnesses.

    python3 <adapter>.py --mode cold-start|roundtrip|throughput|codec|tokens|messages|reject
                         [--count N] [--tokens T] [--warmup W]

Lines are ``str``, as in the seed's Python program, but compact (the seed's Python
messages had ``json.dumps``' default separators and were 10 % larger). The step from
bytes to text is left out on every Python side alike.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

MESSAGES = [
    '{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"benchmark","version":"1.0.0"}},"id":1}',  # noqa: E501
    '{"jsonrpc":"2.0","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]},"id":1}',
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-001","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello, this is a test message."}}}}',  # noqa: E501
    '{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"sess-001","prompt":[{"type":"text","text":"What is 2+2?"}]},"id":2}',  # noqa: E501
]

# A session/prompt whose text is a number: valid JSON-RPC, invalid ACP. ``--mode
# reject`` says whether the adapter refuses it (a validating one must).
INVALID_PROMPT = '{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"sess-001","prompt":[{"type":"text","text":5}]},"id":2}'  # noqa: E501

# What each message is; session/update is received by a client, the rest by an agent.
KINDS = ["initialize", "session/new", "session/update", "session/prompt"]


def token_message(tokens: int) -> str:
    text = "word " * tokens
    return (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-001",'
        '"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"' + text + '"}}}}'
    )


@dataclass
class Adapter:
    """One implementation under test."""

    decode: Callable[[str, str], bool]
    encode_session_result: Callable[[int, str], object]
    encode_initialize_result: Callable[[int], str]


def _ms(ns: int) -> int:
    return round(ns / 1e6)


def _rate(items: int, ns: int) -> int:
    return round(items * 1e9 / ns) if ns > 0 else 0


def _parse_args(argv: list[str]) -> dict:
    args: dict = {"mode": "roundtrip", "count": 100, "tokens": 100, "warmup": 0}
    if len(argv) % 2:
        raise ValueError(f"{argv[-1]} needs a value")
    for flag, value in zip(argv[::2], argv[1::2], strict=False):
        if flag == "--mode":
            args["mode"] = value
        elif flag in ("--count", "--tokens", "--warmup"):
            args[flag[2:]] = int(value)
        else:
            raise ValueError(f"unknown flag {flag}")
    return args


def _line(**fields: object) -> str:
    return json.dumps(fields, separators=(",", ":"))


def main(adapter: Adapter) -> None:
    try:
        args = _parse_args(sys.argv[1:])
    except ValueError as exc:
        print(f"usage error: {exc}", file=sys.stderr)
        sys.exit(2)
    mode, count, tokens, warmup = args["mode"], args["count"], args["tokens"], args["warmup"]
    decode, encode = adapter.decode, adapter.encode_session_result
    now = time.perf_counter_ns
    failed = 0
    if mode == "messages":
        print("\n".join([*MESSAGES, token_message(tokens)]))
        return
    if mode == "reject":
        print(_line(status="ok", mode=mode, refused=not decode("session/prompt", INVALID_PROMPT)), flush=True)
        return
    if mode == "cold-start":
        start = now()
        failed += not decode(KINDS[0], MESSAGES[0])
        out = adapter.encode_initialize_result(1)
        ns = now() - start
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
        line = _line(
            status="ok" if not failed else "error", mode=mode, elapsed_ms=_ms(ns), elapsed_ns=ns, failed=failed
        )
    elif mode == "roundtrip":
        start = now()
        failed += not decode(KINDS[1], MESSAGES[1])
        encode(1, "sess-benchmark")
        ns = now() - start
        line = _line(
            status="ok" if not failed else "error", mode=mode, elapsed_ms=_ms(ns), elapsed_ns=ns, failed=failed
        )
    elif mode == "throughput":

        def throughput(n: int) -> int:
            bad = 0
            for i in range(n):
                k = i % 4
                bad += not decode(KINDS[k], MESSAGES[k])
            return bad

        throughput(warmup)
        start = now()
        failed += throughput(count)
        ns = now() - start
        line = _line(
            status="ok" if not failed else "error",
            mode=mode,
            count=count,
            elapsed_ms=_ms(ns),
            msgs_per_sec=_rate(count, ns),
            elapsed_ns=ns,
            warmup=warmup,
            failed=failed,
        )
    elif mode == "codec":

        def codec(n: int) -> int:
            bad = 0
            for i in range(n):
                k = i % 4
                bad += not decode(KINDS[k], MESSAGES[k])
                encode(i, "sess-bench")
            return bad

        codec(warmup)
        start = now()
        failed += codec(count)
        ns = now() - start
        ops = 2 * count
        line = _line(
            status="ok" if not failed else "error",
            mode=mode,
            ops=ops,
            elapsed_ms=_ms(ns),
            ops_per_sec=_rate(ops, ns),
            elapsed_ns=ns,
            warmup=warmup,
            failed=failed,
        )
    elif mode == "tokens":
        message = token_message(tokens)

        def token_pass(n: int) -> int:
            bad = 0
            total = 0
            for _ in range(n):
                bad += not decode("session/update", message)
                total += tokens
            return bad

        token_pass(warmup)
        start = now()
        failed += token_pass(count)
        ns = now() - start
        line = _line(
            status="ok" if not failed else "error",
            mode=mode,
            messages=count,
            tokens_per_msg=tokens,
            total_tokens=count * tokens,
            elapsed_ms=_ms(ns),
            tokens_per_sec=_rate(count * tokens, ns),
            msgs_per_sec=_rate(count, ns),
            elapsed_ns=ns,
            warmup=warmup,
            failed=failed,
        )
    else:
        print(f"usage error: unknown mode {mode!r}", file=sys.stderr)
        sys.exit(2)
    print(line, flush=True)
    if failed:
        sys.exit(1)


# ---------------------------------------------------------------------------
# End to end: the client's command line and output line (bench/rust/harness has
# the same).


@dataclass
class E2eArgs:
    count: int
    tokens: int
    agent: list[str]

    @property
    def prompt(self) -> str:
        return f"{self.count} {self.tokens}"


def parse_e2e_args(argv: list[str]) -> E2eArgs:
    if "--" not in argv:
        raise ValueError("no agent command after --")
    split = argv.index("--")
    flags = dict(zip(argv[:split:2], argv[1:split:2], strict=False))
    unknown = set(flags) - {"--count", "--tokens"}
    if unknown:
        raise ValueError(f"unknown flags {sorted(unknown)}")
    agent = argv[split + 1 :]
    if not agent:
        raise ValueError("no agent command after --")
    return E2eArgs(int(flags.get("--count", 10000)), int(flags.get("--tokens", 100)), agent)


def parse_e2e_prompt(text: str) -> tuple[int, int] | None:
    words = text.split()
    try:
        return int(words[0]), int(words[1])
    except (IndexError, ValueError):
        return None


def outgoing_checked() -> bool:
    """Whether an SDK that can switch off the check of what it sends keeps it on: the runner
    sets AGENTPROTO_BENCH_OUTGOING=unchecked for both processes of the pair that measures it."""
    return os.environ.get("AGENTPROTO_BENCH_OUTGOING") != "unchecked"


def with_outgoing(line: str, checked: bool) -> str:
    """An e2e line with the `outgoing` field (checked or unchecked) the runner verifies."""
    fields = json.loads(line)
    fields["outgoing"] = "checked" if checked else "unchecked"
    return json.dumps(fields, separators=(",", ":"))


def e2e_line(args: E2eArgs, received: int, ns: int) -> str:
    n, t = args.count, args.tokens
    return _line(
        status="ok" if received == n else "error",
        mode="e2e",
        messages=n,
        tokens_per_msg=t,
        total_tokens=n * t,
        elapsed_ms=_ms(ns),
        msgs_per_sec=_rate(n, ns),
        tokens_per_sec=_rate(n * t, ns),
        elapsed_ns=ns,
        received=received,
    )
