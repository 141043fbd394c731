"""What the network end-to-end adapters share (bench/net_bench.py drives them): the
command line of both roles and the agent's one announcement line.

    python3 net_<sdk>.py agent --listen HOST:PORT     # prints {"listening": URL}, serves until SIGTERM
    python3 net_<sdk>.py client --url URL [--ws] [--count N] [--tokens T]   # prints an e2e line

The client times one prompt turn of ``--count`` updates of ``--tokens`` tokens, as the
stdio end-to-end clients do (their agent classes are reused: the agent and client
applications are the same, only the transport differs).
"""

from __future__ import annotations

import json
import socket
import sys
from dataclasses import dataclass

from harness import E2eArgs


@dataclass
class NetArgs:
    role: str
    host: str = "127.0.0.1"
    port: int = 0
    url: str = ""
    websocket: bool = False
    count: int = 10000
    tokens: int = 100

    def e2e(self) -> E2eArgs:
        return E2eArgs(self.count, self.tokens, [self.url])


def parse_net_args(argv: list[str]) -> NetArgs:
    if not argv or argv[0] not in ("agent", "client"):
        raise ValueError("first argument: agent or client")
    args = NetArgs(argv[0])
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        if flag == "--ws":
            args.websocket = True
            continue
        if not rest:
            raise ValueError(f"{flag} needs a value")
        value = rest.pop(0)
        if flag == "--listen":
            host, _, port = value.rpartition(":")
            args.host, args.port = host, int(port)
        elif flag == "--url":
            args.url = value
        elif flag in ("--count", "--tokens"):
            setattr(args, flag[2:], int(value))
        else:
            raise ValueError(f"unknown flag {flag}")
    if args.role == "client" and not args.url:
        raise ValueError("client needs --url")
    return args


def bound_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket (TCP_NODELAY on accepted connections needs IPPROTO_TCP)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    return sock


def announce(sock: socket.socket) -> None:
    host, port = sock.getsockname()[:2]
    print(json.dumps({"listening": f"http://{host}:{port}/acp"}), flush=True)


def usage(exc: Exception) -> int:
    print(f"usage error: {exc}", file=sys.stderr)
    return 2
