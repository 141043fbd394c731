"""The official Python A2A SDK's server (a2a-sdk 1.3.0) for the A2A benchmark.

JSON-RPC at `/` on 127.0.0.1 (an ephemeral port unless --port is given): DefaultRequestHandler
with the SDK's InMemoryTaskStore, Starlette, uvicorn with its default loop and HTTP
implementation (whatever this interpreter has: asyncio + h11 when uvloop and httptools are not
installed). The executors are the seed's, as in interop/official/a2a-python/server.py's set-up:

- a message whose id starts with `noop`: NoopExecutor, Working -> Completed;
- any other: EchoExecutor, Working -> artifact "echo" with the text "Echo: benchmark" -> Completed.

The SDK requires the executor to create the task first (state SUBMITTED), as the interop server
does. Prints `LISTENING <port>` on stdout once uvicorn accepts connections.

With --grpc, the same handler is served over the SDK's gRPC binding instead (GrpcHandler on a
grpc.aio server, HTTP/2 without TLS), and the port printed is the gRPC one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import sys

import grpc
import uvicorn
from a2a.helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.types.a2a_pb2_grpc import add_A2AServiceServicer_to_server
from starlette.applications import Starlette


class BenchExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task_id, context_id = context.task_id or "", context.context_id or ""
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[message],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.start_work()
        if not message.message_id.startswith("noop"):
            await updater.add_artifact([new_text_part("Echo: benchmark")], artifact_id="echo", last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


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


async def serve(port: int) -> None:
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when their
    # proto says TCP (base_events._set_nodelay); without it every response whose head and body
    # go out in two writes waits ~40 ms for the client's delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    card = agent_card(f"http://127.0.0.1:{port}/")
    handler = DefaultRequestHandler(agent_executor=BenchExecutor(), task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=create_jsonrpc_routes(handler, rpc_url="/"))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
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


async def serve_grpc(port: int) -> None:
    server = grpc.aio.server()
    port = server.add_insecure_port(f"127.0.0.1:{port}")
    card = agent_card(f"127.0.0.1:{port}", "GRPC")
    handler = DefaultRequestHandler(agent_executor=BenchExecutor(), task_store=InMemoryTaskStore(), agent_card=card)
    add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    print(f"LISTENING {port}", flush=True)
    await server.wait_for_termination()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--grpc", action="store_true", help="serve the gRPC binding instead of JSON-RPC")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_grpc(args.port) if args.grpc else serve(args.port))


if __name__ == "__main__":
    main()
