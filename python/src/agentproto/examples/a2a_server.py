"""Serves the demo A2A agent (`agentproto.a2a.demo`), the same agent and card as
`agentproto serve`: JSON-RPC at `/`, HTTP+JSON at `/a2a/rest`, the card at
`/.well-known/agent-card.json`.

    python -m agentproto.examples.a2a_server --addr 127.0.0.1:8080 --memory
    python -m agentproto.examples.a2a_server --addr 127.0.0.1:8080 --db tasks.db
    python -m agentproto.examples.a2a_server --addr 127.0.0.1:8080 --db postgres://user@host/db

Needs the `agentproto[a2a-server]` extra (uvicorn). Port 0 picks a free port; once it
accepts connections it prints `agentproto a2a_server: listening on http://HOST:PORT …`
on stdout. `--memory` keeps tasks in a bounded in-memory store (the default); `--db FILE`
keeps them in the durable SQLite store at FILE (created when missing), so that they
outlive the process; `--db postgres://…` (or `postgresql://…`) keeps them in PostgreSQL
(the `agentproto[postgres]` extra), where several servers on one database serve the same
tasks, live streams and cancels included. `--turn-lease SECONDS` sets how long a turn of
a server that died stays WORKING before another fails it; `--retain-terminal SECONDS`
(default a day; `forever`) how long a finished task is kept. `--grpc-listen HOST:PORT` serves the gRPC binding there too (the
card names it; needs the `agentproto[grpc]` extra). Push configs may name public addresses only, unless
`--push-allow-private` (loopback and private networks too: tests, local receivers). A connection whose
request head has not arrived within `--header-timeout` seconds (15) is closed; one kept alive without a request,
after `--idle-timeout` (60). `--max-connections N` (1024; lowered to what the open-files limit leaves, raised
to its hard limit at start, as `agentproto serve` does) caps the connections served: a request past them is
answered 503. `--stream-budget-mib MIB` (64)
bounds the stream frames held for subscribers, all together (`agentproto.a2a.server.stream_budget`).
Ctrl-C or SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from typing import Any

from agentproto.a2a.demo import DemoAgent, card
from agentproto.a2a.memory_store import MemoryStore
from agentproto.a2a.push_guard import PushGuard
from agentproto.a2a.server import ServerOptions, create_app
from agentproto.a2a.server.uvicorn_limits import uvicorn_protocol
from agentproto.a2a.sqlite_store import SqliteStore
from agentproto.a2a.store import Store, StoreError


def _retention(text: str) -> float | None:
    if text == "forever":
        return None
    seconds = float(text)
    if seconds <= 0:
        raise argparse.ArgumentTypeError("a positive number of seconds, or forever")
    return seconds


def _mib(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError("a positive whole number of MiB")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError("a positive whole number")
    return int(text)


SPARE_DESCRIPTORS = 64
"""Descriptors kept back from the connection cap: the store, the listener, logs."""


def _connection_cap(wanted: int) -> int:
    """`wanted`, or fewer when the open-files limit cannot hold that many connections:
    the soft limit is raised to the hard one first (as `agentproto serve` does), so that
    a flood of connections is answered 503 instead of failing to accept."""
    try:
        import resource
    except ImportError:  # not on this platform: nothing to raise or read
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - SPARE_DESCRIPTORS))


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m agentproto.examples.a2a_server", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--addr", default="127.0.0.1:8080", help="HOST:PORT to listen on (port 0: a free one)")
    stores = parser.add_mutually_exclusive_group()
    stores.add_argument("--memory", action="store_true", help="keep tasks in memory (the default)")
    stores.add_argument(
        "--db", metavar="FILE|URL", help="keep tasks in the SQLite file FILE, or in PostgreSQL at a postgres:// URL"
    )
    parser.add_argument("--turn-lease", type=float, default=30.0, help="seconds a dead server's turn is presumed alive")
    parser.add_argument(
        "--retain-terminal",
        type=_retention,
        default=86400.0,
        metavar="SECONDS|forever",
        help="how long a finished task is kept (SQLite and PostgreSQL; default one day, as agentproto serve)",
    )
    parser.add_argument("--public-url", help="the URL the card advertises (default: http:// and the address)")
    parser.add_argument("--rest-prefix", default="/a2a/rest", help='where HTTP+JSON lives ("" for the root)')
    parser.add_argument("--lenient-version", action="store_true", help="take a request without A2A-Version as 1.0")
    parser.add_argument(
        "--push-allow-private",
        action="store_true",
        help="let push configs name loopback and private addresses (tests, local receivers)",
    )
    parser.add_argument(
        "--grpc-listen", metavar="HOST:PORT", help="also serve the gRPC binding there (needs agentproto[grpc])"
    )
    parser.add_argument("--delay", type=float, default=2.0, help="seconds the delayed TCK scenarios wait")
    parser.add_argument(
        "--header-timeout", type=float, default=15.0, help="seconds a connection may take to send a request head"
    )
    parser.add_argument(
        "--max-connections",
        type=_positive,
        default=1024,
        help="connections served at once; a request past them is answered 503 (as agentproto serve)",
    )
    parser.add_argument(
        "--idle-timeout", type=float, default=60.0, help="seconds a kept-alive connection may wait for its next request"
    )
    parser.add_argument(
        "--stream-budget-mib",
        type=_mib,
        default=64,
        help="MiB of stream frames held for subscribers, all together (as agentproto serve; past it a stream is cut)",
    )
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    import uvicorn

    host, _, port = args.addr.rpartition(":")
    # IPPROTO_TCP named: asyncio turns Nagle off only on sockets that say they are TCP (else
    # every answer on a kept-alive connection waits for a delayed ACK, ~40 ms).
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host.strip("[]"), int(port)))
    listener.listen(1024)
    bound = listener.getsockname()
    where = f"[{bound[0]}]:{bound[1]}" if listener.family == socket.AF_INET6 else f"{bound[0]}:{bound[1]}"
    base = (args.public_url or f"http://{where}").rstrip("/")
    guard = PushGuard.permissive() if args.push_allow_private else PushGuard()
    options = ServerOptions(
        rest_prefix=args.rest_prefix,
        lenient_version=args.lenient_version,
        push_guard=guard,
        turn_lease=args.turn_lease,
        retain_terminal=args.retain_terminal,
        stream_budget=args.stream_budget_mib << 20,
    )
    grpc_server: Any = None
    grpc_at: str | None = None
    if args.grpc_listen:
        from agentproto.a2a.server.grpc_server import listen_grpc

        grpc_server, grpc_port = listen_grpc(args.grpc_listen, max_message_bytes=options.max_body_bytes)
        grpc_at = f"{args.grpc_listen.rpartition(':')[0]}:{grpc_port}"
    store = await _open_store(args.db)
    app = create_app(DemoAgent(args.delay), card(base, args.rest_prefix, grpc_at), store=store, options=options)
    if grpc_server is not None:
        from agentproto.a2a.server.grpc_server import grpc_handler

        grpc_server.add_generic_rpc_handlers((grpc_handler(app.core),))
        await grpc_server.start()
    # Open streams would hold a shutdown up forever: they are cut after a few seconds.
    config = uvicorn.Config(
        app,
        http=uvicorn_protocol(header_timeout=args.header_timeout),
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=3,
        # uvicorn counts the connection asking among those open: N are served with N + 1.
        limit_concurrency=_connection_cap(args.max_connections) + 1,
        timeout_keep_alive=args.idle_timeout,
    )
    server = uvicorn.Server(config)
    started = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started and not started.done():
        await asyncio.sleep(0.01)
    if server.started:
        print(
            f"agentproto a2a_server: listening on http://{where} (card {base}/.well-known/agent-card.json,"
            f" store {_store_name(args.db)}"
            f"{'' if grpc_at is None else ', gRPC on ' + grpc_at})"
        )
        sys.stdout.flush()
    try:
        await started
    finally:
        if grpc_server is not None:
            await grpc_server.stop(grace=1.0)
        await store.close()


def _is_postgres(db: str | None) -> bool:
    return db is not None and db.startswith(("postgres://", "postgresql://"))


def _store_name(db: str | None) -> str:
    if db is None:
        return "memory"
    return "postgres" if _is_postgres(db) else f"sqlite {db}"


async def _open_store(db: str | None) -> Store:
    if db is None:
        return MemoryStore()
    if _is_postgres(db):
        from agentproto.a2a.postgres_store import PostgresStore

        return await PostgresStore.open(db)
    return await SqliteStore.open(db)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        print("a2a_server: needs an ASGI server: pip install 'agentproto[a2a-server]'", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass
    except StoreError as e:
        print(f"a2a_server: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
