"""agentproto's Python A2A server (python/, installed by the `python-agentproto` build) for the
A2A benchmark (bench/a2a/).

JSON-RPC at `/` on 127.0.0.1 (an ephemeral port unless --port is given): the ASGI application of
`agentproto.a2a.server.create_app` with its default options and limits, on the in-memory store
(MemoryStore defaults) or, with `--db FILE`, the durable SQLite store. It runs on uvicorn exactly
as the a2a-sdk row (a2a/python/server.py) does: the same `uvicorn.Config` settings (default loop
and HTTP implementation: whatever this interpreter has, asyncio + h11 when uvloop and httptools
are not installed; lifespan off, log level warning, graceful shutdown 1 s) on a listening socket
that names IPPROTO_TCP (so that asyncio turns Nagle off). The executors are the seed's:

- a message whose id starts with `noop`: Working -> Completed;
- any other: Working -> artifact "echo" with the text "Echo: benchmark" -> Completed.

Prints `LISTENING <port>` on stdout once uvicorn accepts connections; stops on SIGTERM or SIGINT.

With --grpc, the same core (executor and store) is served over agentproto's gRPC binding instead
(`agentproto.a2a.server.grpc_server`, the `grpc` extra: a grpc.aio server, HTTP/2 without TLS,
as the a2a-sdk gRPC row), and the port printed is the gRPC one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import sys

import uvicorn
from agentproto.a2a.executor import RequestContext, TaskUpdater
from agentproto.a2a.generated.v1 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from agentproto.a2a.memory_store import MemoryStore
from agentproto.a2a.server import create_app
from agentproto.a2a.sqlite_store import SqliteStore
from agentproto.a2a.store import Store


class BenchExecutor:
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.working()
        if not context.message.message_id.startswith("noop"):
            await updater.add_artifact("Echo: benchmark", artifact_id="echo")
        await updater.complete()


def agent_card(url: str, binding: str = "JSONRPC") -> AgentCard:
    return AgentCard(
        name="Bench Agent",
        description="Benchmark agent",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes input", tags=["echo", "benchmark"])],
    )


async def serve(port: int, db: str | None) -> None:
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when their
    # proto says TCP (the a2a-sdk row does the same).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    store: Store = MemoryStore() if db is None else await SqliteStore.open(db)
    app = create_app(BenchExecutor(), agent_card(f"http://127.0.0.1:{port}/"), store=store)
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(200):  # bounded: 10 s
            if server.started or task.done():
                break
            await asyncio.sleep(0.05)
        if not server.started:
            with contextlib.suppress(BaseException):
                await task
            sys.exit("server did not start")
        print(f"LISTENING {port}", flush=True)
        await task
    finally:
        await store.close()


async def serve_grpc(port: int, db: str | None) -> None:
    from agentproto.a2a.server.grpc_server import grpc_handler, listen_grpc

    server, port = listen_grpc(f"127.0.0.1:{port}")
    store: Store = MemoryStore() if db is None else await SqliteStore.open(db)
    app = create_app(BenchExecutor(), agent_card(f"127.0.0.1:{port}", "GRPC"), store=store)
    server.add_generic_rpc_handlers((grpc_handler(app.core),))
    try:
        await server.start()
        print(f"LISTENING {port}", flush=True)
        await server.wait_for_termination()
    finally:
        await server.stop(grace=1.0)
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--db", metavar="FILE", help="the durable SQLite store at FILE (default: in memory)")
    parser.add_argument("--grpc", action="store_true", help="serve the gRPC binding instead of JSON-RPC")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_grpc(args.port, args.db) if args.grpc else serve(args.port, args.db))


if __name__ == "__main__":
    main()
