"""A2A 1.0 interop server on the official Python SDK (a2a-sdk 1.3.0).

Serves, on 127.0.0.1 only:
  GET  /.well-known/agent-card.json   the agent card (both bindings below)
  POST /                              JSON-RPC binding
  ...  /a2a/rest/...                  HTTP+JSON binding (e.g. POST /a2a/rest/message:send)

The agent executor follows the a2a-tck SUT contract: behaviour is chosen by the
longest matching `messageId` prefix (see interop/official/a2a-python/README.md).

Usage: server.py --port P [--grpc-port G]     (0 picks a free port)
Prints `LISTENING <port>` on stdout (flushed) once it accepts connections. With
`--grpc-port`, the SDK's gRPC binding (`GrpcHandler` on `grpc.aio`) is served on that port
too, named in the card, and `GRPC <port>` is printed before `LISTENING`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import sys

import uvicorn
from a2a.helpers import new_text_artifact, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette

JSONRPC_PATH = "/"
REST_PREFIX = "/a2a/rest"

# Longest prefix first: `tck-stream-001` must win over any shorter relative.
PREFIXES = (
    "tck-message-response",
    "tck-input-required",
    "tck-artifact-text",
    "tck-complete-task",
    "tck-reject-task",
    "tck-stream-001",
)


def scenario(message_id: str) -> str:
    for prefix in sorted(PREFIXES, key=len, reverse=True):
        if message_id.startswith(prefix):
            return prefix
    return "default"


class TckExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        kind = scenario(message.message_id)
        task_id, context_id = context.task_id or "", context.context_id or ""

        if kind == "tck-message-response":
            await event_queue.enqueue_event(
                new_text_message(
                    "Direct message response", context_id=context_id, task_id=None
                )
            )
            return

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

        if kind == "tck-input-required":
            await updater.requires_input(
                updater.new_agent_message([new_text_part("Please provide input")])
            )
        elif kind == "tck-reject-task":
            await updater.reject(updater.new_agent_message([new_text_part("rejected")]))
        elif kind == "tck-artifact-text":
            await updater.start_work()
            await updater.add_artifact([new_text_part("Generated text content")])
            await updater.complete()
        elif kind == "tck-stream-001":
            await updater.start_work()
            await event_queue.enqueue_event(
                _artifact_event(task_id, context_id, "Stream hello from TCK")
            )
            await updater.complete()
        elif kind == "tck-complete-task":
            await updater.complete(
                updater.new_agent_message([new_text_part("Hello from TCK")])
            )
        else:
            await updater.complete(
                updater.new_agent_message(
                    [new_text_part("echo: " + context.get_user_input())]
                )
            )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(
            event_queue, context.task_id or "", context.context_id or ""
        )
        await updater.cancel()


def _artifact_event(
    task_id: str, context_id: str, text: str
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        artifact=new_text_artifact(name="stream", text=text),
        last_chunk=True,
    )


def agent_card(base: str, grpc_at: str | None = None) -> AgentCard:
    grpc_interfaces = (
        []
        if grpc_at is None
        else [AgentInterface(url=grpc_at, protocol_binding="GRPC", protocol_version="1.0")]
    )
    return AgentCard(
        name="agentproto interop (a2a-sdk python)",
        description="a2a-tck SUT contract on the official Python SDK",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=base + JSONRPC_PATH,
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            ),
            AgentInterface(
                url=base + REST_PREFIX,
                protocol_binding="HTTP+JSON",
                protocol_version="1.0",
            ),
            *grpc_interfaces,
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="tck",
                name="tck",
                description="messageId-prefix driven behaviours",
                tags=["tck"],
            )
        ],
    )


def build_app(port: int, grpc_server: object = None, grpc_port: int = 0) -> Starlette:
    grpc_at = None if grpc_server is None else f"127.0.0.1:{grpc_port}"
    card = agent_card(f"http://127.0.0.1:{port}", grpc_at)
    handler = DefaultRequestHandler(
        agent_executor=TckExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    if grpc_server is not None:
        from a2a.server.request_handlers.grpc_handler import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
    # Order matters: the REST routes end with a catch-all `/{tenant}` Mount.
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH),
        *create_rest_routes(handler, path_prefix=REST_PREFIX),
    ]
    return Starlette(routes=routes)


async def serve(port: int, grpc_port: int | None = None) -> None:
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only when the
    # listening socket says it is TCP; without it every response waits ~40 ms (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    grpc_server = None
    if grpc_port is not None:
        import grpc.aio

        grpc_server = grpc.aio.server()
        grpc_port = grpc_server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    app = build_app(port, grpc_server, grpc_port or 0)
    if grpc_server is not None:
        await grpc_server.start()
        print(f"GRPC {grpc_port}", flush=True)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, args.grpc_port))


if __name__ == "__main__":
    main()
