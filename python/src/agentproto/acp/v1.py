"""Stable ACP, wire version 1: the generated types, method table, rules and roles, and this surface's receivers.

Every name of `agentproto.acp.generated.v1` is re-exported here. `SURFACE` decodes
payloads by type (fast path, then the authoritative slow path); `AGENT` and `CLIENT`
are the two receiving sides for `agentproto.acp.receive.classify`. The roles: `Agent` and
`Client` (handler base classes), `AgentConnection` and `ClientConnection` (typed calls),
`connect_agent`, `serve_agent_stdio`, `connect_client`, `spawn_agent`.
"""

from __future__ import annotations

from agentproto.acp.generated import v1 as _generated
from agentproto.acp.generated.v1 import *
from agentproto.acp.generated.v1 import SURFACE
from agentproto.acp.receive import Receiver

AGENT = Receiver(SURFACE, "agent", allow_null_id=True)
"""The agent's receiving side: client requests and notifications, results of its own calls."""
CLIENT = Receiver(SURFACE, "client", allow_null_id=True)
"""The client's receiving side: agent requests and notifications, results of its own calls."""

__all__ = ["AGENT", "CLIENT"]
__all__ += _generated.__all__
