"""Issue 35's abuse tests, run against the Python and the TypeScript A2A servers as
processes (`python -m agentproto.examples.a2a_server`, `node ts/dist/examples/a2a-server.js`),
as `crates/cli/tests/` runs them against `agentproto serve`: a connection past the cap answered
503, silent connections closed after the header timeout, bodies over the limit refused before they are read, codings the server does
not decode refused, one nesting limit that leaves room for every answer, and the peak memory of
maximum-size messages and of streams whose clients stopped reading, read from `/proc` (the
streams: both servers are started with `--stream-budget-mib 8`).

The TypeScript server runs when node and its build (`make ts-build`) are present.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentproto.jsonrpc.message import MAX_NESTING_DEPTH, _nesting_exceeds

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

ROOT = Path(__file__).resolve().parents[3]
TS_SERVER = ROOT / "ts" / "dist" / "examples" / "a2a-server.js"
WAIT = 20.0
"""Every wait on a server is bounded by this many seconds."""
HEADER_TIMEOUT = 2
"""The header timeout the servers are started with, seconds."""
MAX_BODY = 4 << 20


def _has_uvicorn() -> bool:
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        return False
    return True


SERVERS = [
    pytest.param("python", marks=pytest.mark.skipif(not _has_uvicorn(), reason="needs uvicorn (a2a-server extra)")),
    pytest.param(
        "typescript",
        marks=pytest.mark.skipif(
            shutil.which("node") is None or not TS_SERVER.exists(), reason="needs node and ts/dist (make ts-build)"
        ),
    ),
]


@dataclass
class Server:
    kind: str
    proc: subprocess.Popen[bytes]
    host: str
    port: int

    @property
    def pid(self) -> int:
        return self.proc.pid

    def connect(self, rcvbuf: int | None = None) -> socket.socket:
        conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        conn.settimeout(WAIT)
        conn.connect((self.host, self.port))
        return conn


def _command(kind: str, extra: tuple[str, ...] = ()) -> list[str]:
    common = ["--addr", "127.0.0.1:0", "--memory", "--header-timeout", str(HEADER_TIMEOUT)]
    common += ["--stream-budget-mib", str(STREAM_BUDGET >> 20), *extra]
    if kind == "python":
        return [sys.executable, "-m", "agentproto.examples.a2a_server", *common]
    return ["node", str(TS_SERVER), *common]


def _start(kind: str, extra: tuple[str, ...] = ()) -> Server:
    env = os.environ | {"PYTHONPATH": str(ROOT / "python" / "src")}
    proc = subprocess.Popen(
        _command(kind, extra),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        bufsize=0,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + WAIT
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            _stop(proc)
            pytest.fail(f"{kind}: no listening line within {WAIT} s")
        byte = proc.stdout.read(1)
        if not byte:
            _stop(proc)
            pytest.fail(f"{kind}: exited before listening ({line!r})")
        line += byte
    found = re.search(rb"listening on http://([0-9.]+):([0-9]+)", line)
    assert found, line
    return Server(kind, proc, found.group(1).decode(), int(found.group(2)))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    if proc.stdout is not None:
        proc.stdout.close()


@pytest.fixture(params=SERVERS)
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    started = _start(request.param)
    try:
        yield started
    finally:
        _stop(started.proc)


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line[len(field) :].split()[0]) * 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _closed_within(conn: socket.socket, seconds: float) -> bool:
    """Whether the server closes `conn` within `seconds` (what it sends is read and dropped)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        conn.settimeout(left)
        try:
            if not conn.recv(4096):
                return True
        except TimeoutError:
            return False
        except OSError:
            return True
    return False


def _response(conn: socket.socket) -> tuple[str, bytes]:
    """One response with a Content-Length body: its head (lower case) and its body."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        chunk = conn.recv(65536)
        if not chunk:
            break
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    text = head.decode("latin-1").lower()
    length = re.search(r"\r\ncontent-length: *([0-9]+)", text)
    want = int(length.group(1)) if length else 0
    while len(body) < want:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return text, body


def _status(conn: socket.socket) -> str:
    raw = b""
    while b"\r\n" not in raw:
        chunk = conn.recv(4096)
        if not chunk:
            break
        raw += chunk
    return raw.partition(b"\r\n")[0].decode("latin-1")


def _post(
    server: Server, path: str, body: bytes, extra: str = "", conn: socket.socket | None = None
) -> tuple[str, bytes]:
    own = conn is None
    conn = conn or server.connect()
    try:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        conn.sendall(head.encode() + body)
        return _response(conn)
    finally:
        if own:
            conn.close()


def _rpc(method: str, params: object, rpc_id: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}).encode()


def _send(text: str, message_id: str, task_id: str | None = None) -> bytes:
    message: dict[str, object] = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
    if task_id is not None:
        message["taskId"] = task_id
    return _rpc("SendMessage", {"message": message})


# --- connections and framing ------------------------------------------------------------


def test_connections_that_never_send_a_byte_are_closed_after_the_header_timeout(server: Server) -> None:
    silent = [server.connect() for _ in range(8)]
    partial = server.connect()
    partial.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
    started = time.monotonic()
    for conn in [*silent, partial]:
        assert _closed_within(conn, HEADER_TIMEOUT + 8), f"{server.kind}: a silent connection is still open"
        conn.close()
    # Not at once: the timeout, not a refusal.
    assert time.monotonic() - started >= HEADER_TIMEOUT - 0.5
    head, _ = _post(server, "/", _send("hi", "tck-complete-task-after"))
    assert head.startswith("http/1.1 200"), head


@pytest.mark.parametrize("kind", SERVERS)
def test_a_connection_past_the_cap_is_answered_503_and_the_others_are_served(kind: str) -> None:
    server = _start(kind, ("--max-connections", "2"))
    held: list[socket.socket] = []
    try:
        card = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n"
        for _ in range(2):
            conn = server.connect()
            held.append(conn)
            conn.sendall(card)
            assert _response(conn)[0].startswith("http/1.1 200"), "a connection within the cap is served"
        extra = server.connect()
        held.append(extra)
        extra.sendall(card)
        head, _ = _response(extra)
        assert head.startswith("http/1.1 503"), head
        assert _closed_within(extra, WAIT), "the refused connection is closed"
        held[0].sendall(card)
        assert _response(held[0])[0].startswith("http/1.1 200"), "the held connections are still served"
        held.pop(0).close()
        # A slot is free again once a held connection closes (the server sees the close first).
        deadline = time.monotonic() + WAIT
        while True:
            again = server.connect()
            held.append(again)
            again.sendall(card)
            head, _ = _response(again)
            if head.startswith("http/1.1 200") or time.monotonic() > deadline:
                break
        assert head.startswith("http/1.1 200"), head
    finally:
        for conn in held:
            conn.close()
        _stop(server.proc)


@pytest.mark.parametrize("path", ["/", "/a2a/rest/message:send"])
def test_a_body_over_the_limit_is_refused_before_it_is_sent(server: Server, path: str) -> None:
    conn = server.connect()
    try:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n"
            f"Content-Length: {100 << 20}\r\n\r\n"
        )
        conn.sendall(head.encode())
        # Not a byte of the body sent: the answer comes all the same, and it is no 100 Continue.
        text, body = _response(conn)
        assert text.startswith("http/1.1 413"), f"{server.kind}: {text}"
        assert b"PAYLOAD_TOO_LARGE" in body or b"too large" in body.lower(), body[:300]
    finally:
        conn.close()


@pytest.mark.parametrize("path", ["/", "/a2a/rest/message:send"])
def test_codings_the_server_does_not_decode_are_refused(server: Server, path: str) -> None:
    params = {"message": {"messageId": "tck-complete-task-coding", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    body = _rpc("SendMessage", params) if path == "/" else json.dumps(params).encode()
    conn = server.connect()
    try:
        chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: gzip, chunked\r\n\r\n"
        )
        conn.sendall(head.encode() + chunked)
        assert _status(conn).startswith("HTTP/1.1 501"), f"{server.kind}: Transfer-Encoding: gzip, chunked"
    finally:
        conn.close()
    conn = server.connect()
    try:
        text, _ = _post(server, path, body, "Content-Encoding: gzip\r\n", conn)
        assert text.startswith("http/1.1 415"), f"{server.kind}: {text}"
        # `identity` is no coding at all, and the same connection goes on.
        text, _ = _post(server, path, body, "Content-Encoding: identity\r\n", conn)
        assert text.startswith("http/1.1 200"), f"{server.kind}: {text}"
    finally:
        conn.close()


def _nested(depth: int) -> dict[str, object]:
    data = "[" * depth + "]" * depth
    part = json.loads('{"data":' + data + "}")
    return {
        "message": {"messageId": "tck-complete-task-deep", "role": "ROLE_USER", "parts": [part]},
        "configuration": {"historyLength": 0},
    }


def _deep_body(depth: int) -> bytes:
    # json.dumps recurses: deep bodies are written as text.
    head = b'{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"tck-complete-task-deep",'
    head += b'"role":"ROLE_USER","parts":[{"data":'
    return head + b"[" * depth + b"]" * depth + b'}]},"configuration":{"historyLength":0}}}'


def test_one_nesting_limit_leaves_room_for_every_answer(server: Server) -> None:
    # The request object is level 1 and the part's data starts at level 5: 120 arrays reach
    # level 124, the limit; one more is over it.
    limit = 120
    text, body = _post(server, "/", _deep_body(limit))
    assert text.startswith("http/1.1 200"), text
    answer = json.loads(body)
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", body[:300]
    task_id = answer["result"]["task"]["id"]
    for depth in (limit + 1, 100_000):
        _, body = _post(server, "/", _deep_body(depth))
        assert json.loads(body)["error"]["code"] == -32700, f"{server.kind} depth {depth}: {body[:300]!r}"
    for method, params in (("GetTask", {"id": task_id, "historyLength": 10}), ("ListTasks", {"historyLength": 10})):
        text, body = _post(server, "/", _rpc(method, params))
        assert text.startswith("http/1.1 200"), text
        assert b"[" * limit in body, f"{server.kind} {method} carries the part back"
        assert not _nesting_exceeds(body.decode(), MAX_NESTING_DEPTH), f"{server.kind} {method} nests too deep"


# --- memory -------------------------------------------------------------------------------

AT_ONCE = 8
"""Maximum-size messages in flight at once."""
BOUND = 4
"""Peak memory growth at most this many times the bodies in flight (issues 18, 32 and 35)."""


def _largest_send(i: int) -> bytes:
    empty = _send("", f"tck-complete-task-large-{i}")
    room = MAX_BODY - len(empty) - 256
    return _send("x" * room, f"tck-complete-task-large-{i}")


TS_LARGE = (
    "measured 3.0-3.7x on the TypeScript server (3.4-4.6x before the body was read into one buffer and"
    " the answer sent as bytes), up to 4.3x on a loaded machine: V8 frees each request's garbage strings"
    " (the body as text, the answer's copies) only at its next major collection"
)


def test_eight_maximum_size_messages_stay_within_four_times_their_size(
    server: Server, request: pytest.FixtureRequest
) -> None:
    if server.kind == "typescript":
        request.applymarker(pytest.mark.xfail(strict=False, reason=TS_LARGE))
    head, _ = _post(server, "/", _send("warm", "tck-complete-task-warm"))
    assert head.startswith("http/1.1 200"), head
    before = _kib(server.pid, "VmRSS:")
    sends = [_largest_send(i) for i in range(AT_ONCE)]
    total = sum(len(b) for b in sends)
    answers: list[tuple[str, bytes] | BaseException] = []

    def one(body: bytes) -> None:
        try:
            answers.append(_post(server, "/", body))
        except BaseException as e:  # noqa: BLE001 (reported below)
            answers.append(e)

    threads = [threading.Thread(target=one, args=(b,)) for b in sends]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 3)
    assert len(answers) == AT_ONCE
    for answer in answers:
        assert not isinstance(answer, BaseException), answer
        assert answer[0].startswith("http/1.1 200"), answer[0]
        assert json.loads(answer[1])["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    growth = max(0, _kib(server.pid, "VmHWM:") - before)
    ratio = growth / total
    print(f"{server.kind}: peak growth {growth / 2**20:.1f} MiB for {total / 2**20:.1f} MiB of bodies ({ratio:.2f}×)")
    assert growth <= BOUND * total, f"{server.kind}: peak growth {ratio:.2f}× the bodies, more than {BOUND}×"


STREAMS = 24
"""Subscribers that stop reading, on one task (the Rust test's 48 halved: without a budget
the TypeScript server takes about 12 MiB for each)."""
STREAM_BUDGET = 8 << 20
"""The bound is `agentproto serve`'s with `--stream-budget-mib 8` (crates/cli/tests/
unread_streams.rs): what the same message costs without subscribers, plus the budget, plus
`4 × MAX_BODY` (copies of an event being encoded, allocator slack)."""


def _subscriber(server: Server, task_id: str) -> socket.socket:
    """A SubscribeToTask on a connection with a 4 KiB receive buffer, read up to the end
    of the response head (the first event comes with it: the subscription is registered)."""
    conn = server.connect(rcvbuf=4096)
    body = _rpc("SubscribeToTask", {"id": task_id})
    head = (
        "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    conn.sendall(head.encode() + body)
    seen = b""
    while b"\r\n\r\n" not in seen:
        byte = conn.recv(1)  # one byte at a time: nothing beyond the head is taken
        assert byte, "closed before the response head"
        seen += byte
    assert seen.startswith(b"HTTP/1.1 200"), seen
    return conn


def _large_event_to(server: Server, streams: int) -> int:
    """A task waiting for input with `streams` subscribers that stop reading, then a message
    of about 4 MiB continues it (its echo: events of that size for every subscriber). The
    growth of the server's peak resident memory over its resident memory before, read once
    every stream has been read to its end (or cut): the peak then covers the time the server
    held the frames of the unread streams, however late it wrote them."""
    text, body = _post(server, "/", _send("more?", "tck-input-required-1"))
    assert text.startswith("http/1.1 200"), text
    task_id = json.loads(body)["result"]["task"]["id"]
    held = [_subscriber(server, task_id) for _ in range(streams)]
    before = _kib(server.pid, "VmRSS:")
    text, _ = _post(server, "/", _send("x" * (MAX_BODY - 512), "follow-1", task_id))
    assert text.startswith("http/1.1 200"), text
    for conn in held:
        try:
            while conn.recv(1 << 16):
                pass
        except OSError:
            pass  # cut off by the server: what a budget may do
        conn.close()
    return max(0, _kib(server.pid, "VmHWM:") - before)


def test_unread_streams_of_one_large_event_stay_within_a_stream_budget(server: Server) -> None:
    alone_server = _start(server.kind)
    try:
        alone = _large_event_to(alone_server, 0)
    finally:
        _stop(alone_server.proc)
    growth = _large_event_to(server, STREAMS)
    bound = alone + STREAM_BUDGET + 4 * MAX_BODY
    mib = 1 << 20
    print(f"{server.kind}: {STREAMS} unread streams: peak growth {growth / mib:.1f} MiB (alone {alone / mib:.1f})")
    assert growth <= bound, f"{server.kind}: grew {growth / mib:.1f} MiB, more than {bound / mib:.1f} MiB"
