"""ACP over the network: Streamable HTTP and WebSocket at one `/acp` endpoint, as the
ACP transports RFD describes them, for both roles.

Serving (any ASGI server; `listen` runs uvicorn, from the `agentproto[http]` extra):

    app = agent_app(lambda: MyAgent())          # one agent per ACP connection
    await listen(app, bind("127.0.0.1", 8000))  # http://127.0.0.1:8000/acp

Connecting (no extra needed):

    async with await connect("http://127.0.0.1:8000/acp", MyClient(), websocket=True) as remote:
        await remote.agent.initialize(...)

Both are the stable v1 surface; `RemoteAgentApp` and `connect_remote` take any
surface's `connect_agent` / `connect_client`. The transport is a framing of the one
connection runtime (`framing`), so everything stdio guarantees holds here too. Modules:
`server` (the ASGI app), `served` (one served connection and its streams), `limits`,
`serving` (`bind`, `listen`), `client`, `http1` and `websocket` (the client's HTTP/1.1 and RFC 6455 code),
`sse`, `routing`, `framing`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentproto.acp.remote.client import RemoteAgent, connect_remote
from agentproto.acp.remote.limits import ServerLimits
from agentproto.acp.remote.server import RemoteAgentApp

if TYPE_CHECKING:
    from agentproto.acp.generated.v1_roles import Agent, AgentConnection, Client
    from agentproto.acp.options import AcpOptions

__all__ = ["RemoteAgent", "RemoteAgentApp", "ServerLimits", "agent_app", "bind", "connect", "connect_remote", "listen"]


def agent_app(
    factory: Callable[[], Agent], options: AcpOptions | None = None, limits: ServerLimits | None = None
) -> RemoteAgentApp:
    """An ASGI app serving a v1 agent at `/acp`: `factory()` makes the agent of each new
    ACP connection."""
    from agentproto.acp import v1

    return RemoteAgentApp(lambda i, o: v1.connect_agent(factory(), i, o, options), limits)


async def connect(
    url: str,
    client: Client,
    options: AcpOptions | None = None,
    *,
    websocket: bool = False,
    headers: list[tuple[str, str]] | None = None,
) -> RemoteAgent[AgentConnection]:
    """Connects `client` to the v1 agent at `url` (`http://HOST:PORT/acp`) over
    Streamable HTTP, or over WebSocket with `websocket=True`."""
    from agentproto.acp import v1
    from agentproto.acp.options import AcpOptions

    size = (options if options is not None else AcpOptions()).connection.max_message_size
    return await connect_remote(
        url,
        lambda i, o: v1.connect_client(client, i, o, options),
        v1.SURFACE,
        websocket=websocket,
        headers=headers,
        max_message_size=size,
    )


def __getattr__(name: str) -> Any:
    if name in ("bind", "listen"):
        import importlib

        return getattr(importlib.import_module("agentproto.acp.remote.serving"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
