"""Building an agent card for a server of this package: its JSON-RPC and HTTP+JSON
interfaces at the server's default paths, the capabilities, one skill per entry."""

from __future__ import annotations

from collections.abc import Sequence

from agentproto.a2a.generated.v1 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

__all__ = ["agent_card"]


def agent_card(
    name: str,
    description: str,
    base_url: str,
    *,
    version: str = "1.0.0",
    skills: Sequence[AgentSkill] = (),
    streaming: bool = True,
    push_notifications: bool = False,
    rest_prefix: str = "/a2a/rest",
    modes: Sequence[str] = ("text/plain",),
) -> AgentCard:
    """A card for an agent served at `base_url` by `agentproto.a2a.server` with its default
    paths (JSON-RPC at `/`, HTTP+JSON at `rest_prefix`), both A2A 1.0. Without `skills`,
    one skill named after the agent. `push_notifications` offers the push-config
    operations (configs are stored; delivering them is not implemented yet)."""
    base = base_url.rstrip("/")
    if not skills:
        skills = [AgentSkill(id=name, name=name, description=description, tags=[name])]
    return AgentCard(
        name=name,
        description=description,
        supported_interfaces=[
            AgentInterface(url=f"{base}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base + rest_prefix.rstrip("/"), protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        version=version,
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push_notifications),
        default_input_modes=list(modes),
        default_output_modes=list(modes),
        skills=list(skills),
    )
