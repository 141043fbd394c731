"""Record raw HTTP exchanges with an A2A server (the source of interop/official/a2a-python/WIRE.md).

Usage: wire.py --port P [--probes]

Speaks HTTP/1.1 over a plain socket, so the request shown is byte for byte what was
sent and the response head is byte for byte what came back. Bodies sent with
`Transfer-Encoding: chunked` are shown de-chunked. Streams are cut after 3 SSE events.
Prints Markdown on stdout. `--probes` adds the quirk probes (version header, media
types, subscribe verbs, REST error bodies).
"""

from __future__ import annotations

import argparse
import json
import socket
import time
import uuid

HOST = "127.0.0.1"
REST = "/a2a/rest"
TIMEOUT = 10.0


def dechunk(data: bytes) -> tuple[bytes, bool]:
    """Decode a chunked body; returns (body, complete)."""
    out = b""
    while True:
        line_end = data.find(b"\r\n")
        if line_end < 0:
            return out, False
        size = int(data[:line_end].split(b";")[0] or b"0", 16)
        if size == 0:
            return out, True
        start = line_end + 2
        if len(data) < start + size + 2:
            return out + data[start:], False
        out += data[start : start + size]
        data = data[start + size + 2 :]


def exchange(
    port: int,
    method: str,
    path: str,
    body: object | None = None,
    headers: dict[str, str] | None = None,
    sse_events: int = 0,
) -> tuple[str, str, bytes]:
    """Send one request; returns (request text, response head, response body)."""
    payload = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}"]
    for key, value in (headers or {}).items():
        lines.append(f"{key}: {value}")
    if body is not None:
        lines.append(f"Content-Length: {len(payload)}")
    lines.append("Connection: close")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + payload

    sock = socket.create_connection((HOST, port), timeout=TIMEOUT)
    deadline = time.monotonic() + TIMEOUT
    try:
        sock.sendall(request)
        raw = b""
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            raw += chunk
            if sse_events and b"\r\n\r\n" in raw:
                head_part, rest = raw.split(b"\r\n\r\n", 1)
                text = dechunk(rest)[0] if b"chunked" in head_part.lower() else rest
                if text.replace(b"\r\n", b"\n").count(b"\n\n") >= sse_events:
                    break
    finally:
        sock.close()
    head, _, rest = raw.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        rest = dechunk(rest)[0]
    if sse_events:
        events = rest.replace(b"\r\n", b"\n").split(b"\n\n")
        rest = b"\n\n".join(events[:sse_events]) + b"\n\n"
    return request.decode(), head.decode(), rest


def show(title: str, port: int, *args: object, **kwargs: object) -> bytes:
    request, head, body = exchange(port, *args, **kwargs)  # type: ignore[arg-type]
    port_s = str(port)
    print(f"### {title}\n")
    print("```http")
    print(request.replace(port_s, "PORT").replace("\r\n", "\n").rstrip("\n"))
    print("```\n")
    print("```http")
    print(head.replace("\r\n", "\n"))
    print()
    text = body.decode(errors="replace").replace(port_s, "PORT").rstrip("\n")
    print(text)
    print("```\n")
    return body


def msg(prefix: str) -> dict:
    return {
        "message": {
            "messageId": f"{prefix}-{uuid.uuid4().hex[:8]}",
            "role": "ROLE_USER",
            "parts": [{"text": "hello"}],
        }
    }


def rpc(method: str, params: dict, rid: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


V1 = {"A2A-Version": "1.0"}
JSON = {"Content-Type": "application/json", **V1}
A2AJ = {"Content-Type": "application/a2a+json", **V1}
SSE = {"Accept": "text/event-stream"}


def task_id_of(body: bytes) -> str:
    data = json.loads(body)
    data = data.get("result", data)
    return data["task"]["id"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--probes", action="store_true")
    args = parser.parse_args()
    p = args.port

    print("## JSON-RPC binding (`POST /`)\n")
    show(
        "SendMessage",
        p,
        "POST",
        "/",
        rpc("SendMessage", msg("tck-complete-task")),
        JSON,
    )
    show(
        "GetTask, unknown id",
        p,
        "POST",
        "/",
        rpc("GetTask", {"id": "no-such-task"}, 2),
        JSON,
    )
    show(
        "SendStreamingMessage (first 3 SSE events)",
        p,
        "POST",
        "/",
        rpc("SendStreamingMessage", msg("tck-stream-001"), 3),
        {**JSON, **SSE},
        sse_events=3,
    )

    print("## HTTP+JSON binding (base `/a2a/rest`)\n")
    show(
        "SendMessage", p, "POST", f"{REST}/message:send", msg("tck-complete-task"), A2AJ
    )
    show("GetTask, unknown id", p, "GET", f"{REST}/tasks/no-such-task", None, V1)
    show(
        "SendStreamingMessage (first 3 SSE events)",
        p,
        "POST",
        f"{REST}/message:stream",
        msg("tck-stream-001"),
        {**A2AJ, **SSE},
        sse_events=3,
    )

    if not args.probes:
        return
    print("## Probes\n")
    show(
        "JSON-RPC SendMessage without A2A-Version",
        p,
        "POST",
        "/",
        rpc("SendMessage", msg("tck-complete-task")),
        {"Content-Type": "application/json"},
    )
    show(
        "JSON-RPC SendMessage with `?A2A-Version=1.0` query parameter instead of the header",
        p,
        "POST",
        "/?A2A-Version=1.0",
        rpc("SendMessage", msg("tck-complete-task")),
        {"Content-Type": "application/json"},
    )
    show(
        "HTTP+JSON SendMessage without A2A-Version",
        p,
        "POST",
        f"{REST}/message:send",
        msg("tck-complete-task"),
        {"Content-Type": "application/a2a+json"},
    )
    show(
        "HTTP+JSON SendMessage with Content-Type application/json",
        p,
        "POST",
        f"{REST}/message:send",
        msg("tck-complete-task"),
        JSON,
    )
    done = show(
        "HTTP+JSON SendMessage, then CancelTask on the completed task",
        p,
        "POST",
        f"{REST}/message:send",
        msg("tck-complete-task"),
        A2AJ,
    )
    show(
        "HTTP+JSON CancelTask on a terminal task",
        p,
        "POST",
        f"{REST}/tasks/{task_id_of(done)}:cancel",
        {},
        A2AJ,
    )
    show(
        "HTTP+JSON SubscribeToTask on a terminal task (GET)",
        p,
        "GET",
        f"{REST}/tasks/{task_id_of(done)}:subscribe",
        None,
        {**V1, **SSE},
    )
    waiting = exchange(
        p, "POST", f"{REST}/message:send", msg("tck-input-required"), A2AJ
    )[2]
    tid = task_id_of(waiting)
    print(
        f"(task `{tid}` created in TASK_STATE_INPUT_REQUIRED for the next two probes)\n"
    )
    show(
        "HTTP+JSON SubscribeToTask with GET (first event)",
        p,
        "GET",
        f"{REST}/tasks/{tid}:subscribe",
        None,
        {**V1, **SSE},
        sse_events=1,
    )
    show(
        "HTTP+JSON SubscribeToTask with POST and no body (first event)",
        p,
        "POST",
        f"{REST}/tasks/{tid}:subscribe",
        None,
        {**V1, **SSE},
        sse_events=1,
    )
    show(
        "JSON-RPC SubscribeToTask on an unknown task",
        p,
        "POST",
        "/",
        rpc("SubscribeToTask", {"id": "no-such-task"}, 4),
        {**JSON, **SSE},
    )
    show(
        "JSON-RPC unknown method",
        p,
        "POST",
        "/",
        rpc("NoSuchMethod", {}, 5),
        JSON,
    )
    show(
        "JSON-RPC 0.3 method name `message/send` with A2A-Version 1.0",
        p,
        "POST",
        "/",
        rpc("message/send", msg("tck-complete-task"), 6),
        JSON,
    )
    show("HTTP+JSON ListTasks", p, "GET", f"{REST}/tasks?pageSize=1", None, V1)


if __name__ == "__main__":
    main()
