"""Peak memory of `agentproto serve` holding unread streams of one large event.

Issue 35, item 1: N clients subscribe to one task (`SubscribeToTask`, JSON-RPC) and
never read; then one message of about 4 MiB continues the task, whose echo (an
artifact with the same text) is an event of that size for every subscriber. The
figures are the server's resident memory before the message and its peak after,
read from /proc/<pid>/status (Linux only).

    python3 bench/a2a/unread_streams.py --bin target/release/agentproto --streams 100
    python3 bench/a2a/unread_streams.py --streams 100 -- --stream-budget-mib 8

Arguments after `--` go to `agentproto serve`. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import time

BODY = 4 << 20


def kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def post(addr: tuple[str, int], body: bytes) -> bytes:
    """One JSON-RPC call on its own connection; the whole answer."""
    with socket.create_connection(addr, timeout=60) as conn:
        head = (
            f"POST / HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n"
            f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        conn.sendall(head.encode() + body)
        chunks = []
        while chunk := conn.recv(1 << 16):
            chunks.append(chunk)
    return b"".join(chunks)


def rpc(method: str, params: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default="target/release/agentproto")
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds to wait for the peak")
    parser.add_argument("serve_args", nargs="*")
    args = parser.parse_args()

    cmd = [args.bin, "serve", "--addr", "127.0.0.1:0", "--memory", *args.serve_args]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    held: list[socket.socket] = []
    try:
        assert server.stdout is not None
        line = server.stdout.readline().decode()
        host, port = line.split("http://", 1)[1].split()[0].rsplit(":", 1)
        addr = (host, int(port))
        message = {"messageId": "tck-input-required-1", "role": "ROLE_USER", "parts": [{"text": "more?"}]}
        answer = post(addr, rpc("SendMessage", {"message": message}))
        task = json.loads(answer.split(b"\r\n\r\n", 1)[1])["result"]["task"]["id"]
        subscribe = rpc("SubscribeToTask", {"id": task})
        for _ in range(args.streams):
            conn = socket.socket()
            # A small receive buffer: the reader that stopped reading, not the kernel,
            # should be what holds the event.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            conn.connect(addr)
            head = (
                f"POST / HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(subscribe)}\r\n\r\n"
            )
            conn.sendall(head.encode() + subscribe)
            held.append(conn)
        time.sleep(1.0)
        before = kib(server.pid, "VmRSS:")
        text = "x" * (BODY - 512)
        follow = {"messageId": "follow-1", "taskId": task, "role": "ROLE_USER", "parts": [{"text": text}]}
        body = rpc("SendMessage", {"message": follow})
        started = time.monotonic()
        post(addr, body)
        time.sleep(args.settle)
        figures = {
            "streams": args.streams,
            "serve_args": args.serve_args,
            "request_bytes": len(body),
            "rss_before_mb": round(before / 1024, 1),
            "rss_after_mb": round(kib(server.pid, "VmRSS:") / 1024, 1),
            "hwm_mb": round(kib(server.pid, "VmHWM:") / 1024, 1),
            "seconds": round(time.monotonic() - started, 1),
        }
        print(json.dumps(figures))
    finally:
        for conn in held:
            conn.close()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
