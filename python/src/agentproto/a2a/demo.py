"""The demo agent behind `python -m agentproto.examples.a2a_server`, the same agent as
`agentproto serve` (Rust): it echoes text, and follows the a2a-tck's `messageId`-prefix
contract so the official conformance kit can drive it.

What it does is data: `rules/a2a-demo.toml` (the card, and an ordered list of steps per
prefix, documented there), generated into `agentproto.a2a.generated.demo`. This module
only runs those steps over the `TaskUpdater` and builds the card for a server's URLs.
The longest known prefix of a message id picks its steps; `agentproto-ticks` is ours
(one `tick N` chunk after each delay, as many as the message's text says, 10 unless it
is a number, at most `MAX_TICKS`); anything else is echoed back in a completed task.
"""

from __future__ import annotations

import asyncio
import uuid

import msgspec

from agentproto import __version__
from agentproto.a2a.executor import RequestContext, TaskUpdater
from agentproto.a2a.generated import demo as table
from agentproto.a2a.generated.v1 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    Part,
)

__all__ = ["MAX_TICKS", "DemoAgent", "card", "scenario"]

MAX_TICKS = table.MAX_TICKS


def scenario(message_id: str) -> str | None:
    """The prefix whose steps a message id selects (None: the fallback, an echo)."""
    return next((p for p, _ in table.SCENARIOS if message_id.startswith(p)), None)


def _steps(message_id: str) -> tuple[table.Step, ...]:
    return next((s for p, s in table.SCENARIOS if message_id.startswith(p)), table.FALLBACK)


def _part(spec: table.DemoPart) -> Part:
    media_type, filename = spec.media_type or "", spec.filename or ""
    if spec.kind == "text":
        return Part(text=spec.value, media_type=media_type, filename=filename)
    if spec.kind == "raw":
        return Part(raw=spec.value.encode(), media_type=media_type, filename=filename)
    if spec.kind == "url":
        return Part(url=spec.value, media_type=media_type, filename=filename)
    return Part(data=msgspec.Raw(spec.value.encode()), media_type=media_type, filename=filename)


class DemoAgent:
    """The demo agent. `delay` scales the delayed scenarios' waits (seconds)."""

    def __init__(self, delay: float = 2.0) -> None:
        self.delay = delay

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        for step in _steps(context.message.message_id):
            await self._run(step, context, updater)

    async def _run(self, step: table.Step, context: RequestContext, updater: TaskUpdater) -> None:
        op = step.op
        if op == "working":
            await updater.working()
        elif op == "wait":
            await asyncio.sleep(self.delay * step.delays)
        elif op == "artifact":
            await updater.add_artifact(Artifact(artifact_id=str(uuid.uuid4()), parts=[_part(p) for p in step.parts]))
        elif op == "chunks":
            artifact_id = str(uuid.uuid4())
            last = len(step.parts) - 1
            for i, piece in enumerate(step.parts):
                chunk = Artifact(artifact_id=artifact_id, parts=[_part(piece)])
                await updater.add_artifact(chunk, append=i > 0, last_chunk=i == last)
        elif op == "complete":
            await updater.complete(step.text)
        elif op == "reject":
            await updater.reject(step.text)
        elif op == "input_required":
            await updater.require_input(step.text)
        elif op == "reply":
            await updater.reply(step.text or "")
        elif op == "ticks":
            await self._ticks(context, updater)
        elif op == "echo":
            said = context.text()
            await updater.working()
            await updater.add_artifact(Artifact(artifact_id=str(uuid.uuid4()), parts=[Part(text=said)]))
            await updater.complete(f"echo: {said}")
        else:
            raise ValueError(f"demo step {op!r} is unknown")

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
    A2A 1.0. The rest comes from the table."""
    base = base.rstrip("/")
    skill_id, skill_name, skill_description = table.SKILL
    skill = AgentSkill(
        id=skill_id,
        name=skill_name,
        description=skill_description,
        tags=list(table.SKILL_TAGS),
        examples=list(table.SKILL_EXAMPLES),
    )
    return AgentCard(
        name=table.CARD_NAME,
        description=table.CARD_DESCRIPTION,
        supported_interfaces=[
            AgentInterface(url=f"{base}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base + rest_prefix.rstrip("/"), protocol_binding="HTTP+JSON", protocol_version="1.0"),
            *([] if grpc is None else [AgentInterface(url=grpc, protocol_binding="GRPC", protocol_version="1.0")]),
        ],
        version=__version__,
        capabilities=AgentCapabilities(
            streaming=table.CARD_STREAMING, push_notifications=table.CARD_PUSH_NOTIFICATIONS
        ),
        default_input_modes=list(table.CARD_INPUT_MODES),
        default_output_modes=list(table.CARD_OUTPUT_MODES),
        skills=[skill],
    )
