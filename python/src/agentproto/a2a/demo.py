"""The demo agent behind `python -m agentproto.examples.a2a_server`, the same agent as
`agentproto serve` (Rust): it echoes text, and follows the a2a-tck's `messageId`-prefix
contract so the official conformance kit can drive it.

The TCK names its messages `tck-<scenario>-<run suffix>`; the agent picks the behaviour
of the longest known prefix. `agentproto-ticks` is ours: WORKING, then one chunk
(`tick 1`, `tick 2`, …) appended to one artifact after each delay, as many as the
message's text says (10 unless it is a number; at most `MAX_TICKS`), then COMPLETED.
Anything else is echoed back in a completed task.
"""

from __future__ import annotations

import asyncio
import uuid

from agentproto import __version__
from agentproto.a2a.executor import RequestContext, TaskUpdater
from agentproto.a2a.generated.v1 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    Part,
)

__all__ = ["MAX_TICKS", "DemoAgent", "card", "scenario"]

MAX_TICKS = 10_000

PREFIXES = (
    "agentproto-ticks",
    "tck-stream-artifact-chunked",
    "tck-stream-artifact-text",
    "tck-stream-artifact-file",
    "tck-stream-ordering-001",
    "tck-artifact-file-url",
    "tck-delayed-complete",
    "tck-message-response",
    "tck-input-required",
    "tck-complete-task",
    "tck-artifact-text",
    "tck-artifact-file",
    "tck-artifact-data",
    "tck-reject-task",
    "tck-stream-001",
    "tck-stream-002",
    "tck-stream-003",
    "test-resubscribe-message-id",
)
"""Known prefixes, longest first so that none shadows a longer one."""


def scenario(message_id: str) -> str | None:
    """The behaviour a message id selects."""
    return next((p for p in PREFIXES if message_id.startswith(p)), None)


def _artifact(*parts: Part) -> Artifact:
    return Artifact(artifact_id=str(uuid.uuid4()), parts=list(parts))


def _file(**content: object) -> Part:
    return Part(media_type="text/plain", filename="output.txt", **content)  # type: ignore[arg-type]


class DemoAgent:
    """The demo agent. `delay` scales the delayed scenarios' waits (seconds)."""

    def __init__(self, delay: float = 2.0) -> None:
        self.delay = delay

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        message_id = context.message.message_id
        which = scenario(message_id)
        if which == "tck-complete-task":
            await updater.complete("Hello from TCK")
        elif which == "tck-delayed-complete":
            await updater.working()
            await asyncio.sleep(self.delay)
            await updater.complete("Done after delay")
        elif which == "tck-artifact-text":
            await updater.add_artifact(_artifact(Part(text="Generated text content")))
            await updater.complete()
        elif which in ("tck-artifact-file", "tck-stream-artifact-file"):
            await updater.add_artifact(_artifact(_file(raw=b"tck")))
            await updater.complete()
        elif which == "tck-artifact-file-url":
            await updater.add_artifact(_artifact(_file(url="https://example.com/output.txt")))
            await updater.complete()
        elif which == "tck-artifact-data":
            import msgspec

            await updater.add_artifact(_artifact(Part(data=msgspec.Raw(b'{"key":"value","count":42}'))))
            await updater.complete()
        elif which == "tck-message-response":
            await updater.reply("Direct message response")
        elif which == "tck-input-required":
            await updater.require_input("Please provide more input")
        elif which == "tck-reject-task":
            await updater.reject("rejected")
        elif which in ("tck-stream-001", "tck-stream-003"):
            words = "Stream hello from TCK" if which == "tck-stream-001" else "Stream task lifecycle"
            await updater.working()
            await updater.add_artifact(_artifact(Part(text=words)))
            await updater.complete()
        elif which in ("tck-stream-artifact-text", "tck-stream-ordering-001"):
            words = "Generated text content" if which == "tck-stream-artifact-text" else "Ordered output"
            await updater.working()
            await updater.add_artifact(_artifact(Part(text=words)))
            await updater.complete()
        elif which == "tck-stream-artifact-chunked":
            first = _artifact(Part(text="chunk-1 "))
            await updater.working()
            await updater.add_artifact(first, last_chunk=False)
            await updater.add_artifact(
                Artifact(artifact_id=first.artifact_id, parts=[Part(text="chunk-2")]), append=True
            )
            await updater.complete()
        elif which == "test-resubscribe-message-id":
            await updater.working()
            await asyncio.sleep(self.delay * 2)
            await updater.complete()
        elif which == "agentproto-ticks":
            await self._ticks(context, updater)
        elif which is not None:
            await updater.complete()
        else:
            said = context.text()
            await updater.working()
            await updater.add_artifact(_artifact(Part(text=said)))
            await updater.complete(f"echo: {said}")

    async def _ticks(self, context: RequestContext, updater: TaskUpdater) -> None:
        text = context.text().strip()
        count = min(int(text), MAX_TICKS) if text.isdigit() else 10
        await updater.working()
        artifact_id = str(uuid.uuid4())
        for tick in range(1, count + 1):
            await asyncio.sleep(self.delay)
            piece = Artifact(artifact_id=artifact_id, parts=[Part(text=f"tick {tick}")])
            await updater.add_artifact(piece, append=tick > 1, last_chunk=tick == count)
        await updater.complete()


def card(base: str, rest_prefix: str = "/a2a/rest", grpc: str | None = None) -> AgentCard:
    """The demo agent's card for a server at `base` (`http://127.0.0.1:8080`): JSON-RPC
    at `/`, HTTP+JSON at `rest_prefix`, and gRPC at `grpc` (`HOST:PORT`) when given; all
    A2A 1.0."""
    base = base.rstrip("/")
    skill = AgentSkill(
        id="echo",
        name="Echo",
        description="Echoes text back; follows the a2a-tck messageId-prefix contract.",
        tags=["echo", "test"],
        examples=["hello"],
    )
    return AgentCard(
        name="agentproto demo agent",
        description="A durable echo agent on agentproto (SQLite store, resumable streams, push outbox).",
        supported_interfaces=[
            AgentInterface(url=f"{base}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base + rest_prefix.rstrip("/"), protocol_binding="HTTP+JSON", protocol_version="1.0"),
            *([] if grpc is None else [AgentInterface(url=grpc, protocol_binding="GRPC", protocol_version="1.0")]),
        ],
        version=__version__,
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[skill],
    )
