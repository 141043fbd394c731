"""The end-to-end prompt turn over the network (issue 31 item 7), driven by bench/run.py:
agent and client of the same SDK over 127.0.0.1, over WebSocket and over Streamable HTTP,
and the agent's memory per idle WebSocket connection. Standard library only.

Each implementation's ``net`` entry in bench/adapters.json is one command line with two
roles (bench/python/net_harness.py describes it): ``<cmd> agent --listen 127.0.0.1:0``
prints ``{"listening": URL}`` and serves until SIGTERM; ``<cmd> client --url URL [--ws]
--count N --tokens T`` times one prompt turn and prints the same line as the stdio
end-to-end clients.

Idle memory: a fresh agent answers one connection (so that what is loaded lazily is
loaded), then its VmRSS (/proc/<pid>/status) is read, ``n`` WebSocket connections are
opened and each sends ``initialize`` and reads its answer, VmRSS is read again, and the
difference is divided by ``n``. The connections stay open (idle) until both reads.
"""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

TRANSPORTS = ("ws", "http")
IDLE = {"full": 200, "quick": 50, "smoke": 4}
# (warm-up rounds, measured rounds): a median needs several runs even in a quick run.
ROUNDS = {"full": (1, 5), "quick": (0, 3)}
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'


@dataclass
class Env:
    """What bench/run.py lends: argv expansion, the failure type, progress, the profile and
    its one-process runner (`run_process(argv, timeout, env)`)."""

    expand: Callable[[list[str], str], list[str]]
    failure: type[Exception]
    progress: Callable[..., None]
    profile: str
    run_process: Callable[..., dict]
    summary_line: Callable[[dict, list[str]], dict]


def selected(impls: list[dict]) -> list[dict]:
    return [i for i in impls if "net" in i]


# ---------------------------------------------------------------------------
# One agent process


class Agent:
    """An agent serving at 127.0.0.1 on a port it picks; ended (SIGTERM, then SIGKILL
    after 5 s) on leaving the `with`."""

    def __init__(self, env: Env, impl: dict) -> None:
        self.env = env
        self.argv = env.expand(impl["net"], env.profile) + ["agent", "--listen", "127.0.0.1:0"]
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def __enter__(self) -> Agent:
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        line = b""
        deadline = time.monotonic() + 60
        while b"\n" not in line:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.__exit__()
                raise self.env.failure(f"no announcement within 60 s: {' '.join(self.argv)}")
            chunk = os.read(fd, 4096)
            if not chunk:
                self.__exit__()
                raise self.env.failure(f"agent exited before announcing: {' '.join(self.argv)}")
            line += chunk
        try:
            self.url = json.loads(line.split(b"\n")[0])["listening"]
        except (ValueError, KeyError) as exc:
            self.__exit__()
            raise self.env.failure(f"{' '.join(self.argv)}: bad announcement {line[:200]!r}") from exc
        return self

    def __exit__(self, *_: object) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def rss_kb(self) -> int:
        assert self.proc is not None
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise self.env.failure(f"no VmRSS for {self.argv[0]}")


def run_client(env: Env, impl: dict, url: str, transport: str, count: int, tokens: int) -> dict:
    argv = env.expand(impl["net"], env.profile) + ["client", "--url", url]
    argv += ["--count", str(count), "--tokens", str(tokens)]
    argv += ["--ws"] if transport == "ws" else []
    result = env.run_process(argv, timeout=600)
    line = env.summary_line(result, argv)
    if result["code"] != 0 or line.get("status") != "ok" or line.get("received") != count:
        raise env.failure(f"{' '.join(argv)}: exit {result['code']}: {line} {result['stderr']}")
    line["wall_ns"] = result["wall_ns"]
    return line


# ---------------------------------------------------------------------------
# Idle WebSocket connections (RFC 6455 client, only what this needs)


def ws_open(url: str, timeout: float = 30) -> socket.socket:
    """A WebSocket to `url` that has sent `initialize` and read its answer."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    sock.sendall(request.encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            raise OSError("closed during the handshake")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise OSError(f"handshake refused: {head[:80]!r}")
    rest = head.split(b"\r\n\r\n", 1)[1]
    mask = os.urandom(4)
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(INITIALIZE))
    sock.sendall(bytes([0x81, 0x80 | len(INITIALIZE)]) + mask + payload)
    _read_text_frame(sock, rest)
    return sock


def _read_text_frame(sock: socket.socket, buffered: bytes) -> bytes:
    data = buffered

    def need(n: int) -> None:
        nonlocal data
        while len(data) < n:
            chunk = sock.recv(65536)
            if not chunk:
                raise OSError("closed before the answer")
            data += chunk

    while True:
        need(2)
        opcode, size, at = data[0] & 0x0F, data[1] & 0x7F, 2
        if size == 126:
            need(4)
            size, at = struct.unpack(">H", data[2:4])[0], 4
        elif size == 127:
            need(10)
            size, at = struct.unpack(">Q", data[2:10])[0], 10
        need(at + size)
        frame, data = data[at : at + size], data[at + size :]
        if opcode == 1:
            return frame


def idle_memory(env: Env, impl: dict, n: int) -> dict:
    with Agent(env, impl) as agent:
        ws_open(agent.url).close()  # the first connection loads what is loaded lazily
        before = agent.rss_kb()
        sockets = []
        try:
            for _ in range(n):
                sockets.append(ws_open(agent.url))
            after = agent.rss_kb()
        finally:
            for sock in sockets:
                sock.close()
    return {"connections": n, "rss_before_kb": before, "rss_after_kb": after, "per_connection_kb": (after - before) / n}


# ---------------------------------------------------------------------------
# The two entry points


def smoke(env: Env, impls: list[dict]) -> None:
    for impl in selected(impls):
        env.progress(f"smoke: network turn, {impl['id']}")
        with Agent(env, impl) as agent:
            for transport in TRANSPORTS:
                line = run_client(env, impl, agent.url, transport, 20, 3)
                if line.get("messages") != 20 or line.get("total_tokens") != 60:
                    raise env.failure(f"{impl['id']} over {transport}: {line}")
        idle = idle_memory(env, impl, IDLE["smoke"])
        if idle["rss_after_kb"] <= 0:
            raise env.failure(f"{impl['id']}: idle memory {idle}")


def measure(env: Env, impls: list[dict], plan: dict, quick: bool) -> dict | None:
    sdks = selected(impls)
    if not sdks:
        return None
    count, tokens = plan["e2e_count"], 100
    warmup, runs = ROUNDS["quick" if quick else "full"]
    pairs = [(impl, t) for impl in sdks for t in TRANSPORTS]
    out = {f"{i['id']}:{t}": {"impl": i["id"], "transport": t, "runs": []} for i, t in pairs}
    agents = {impl["id"]: Agent(env, impl) for impl in sdks}
    total, step = (warmup + runs) * len(pairs), 0
    try:
        for agent in agents.values():
            agent.__enter__()
        for round_no in range(warmup + runs):
            k = round_no % len(pairs)
            for impl, transport in pairs[k:] + pairs[:k]:
                step += 1
                env.progress(f"network: {impl['id']} over {transport} [{step}/{total}]")
                line = run_client(env, impl, agents[impl["id"]].url, transport, count, tokens)
                if round_no >= warmup:
                    out[f"{impl['id']}:{transport}"]["runs"].append(line)
    finally:
        for agent in agents.values():
            agent.__exit__()
    n = IDLE["quick" if quick else "full"]
    idle = {}
    for impl in sdks:
        env.progress(f"network: {impl['id']}, {n} idle WebSocket connections")
        idle[impl["id"]] = idle_memory(env, impl, n)
    env.progress(f"network: done ({runs} runs of {count} x {tokens} tokens per SDK and transport)", done=True)
    return {"count": count, "tokens": tokens, "runs": runs, "idle_connections": n, "pairs": out, "idle": idle}
