"""Stable ACP, wire version 1: the generated types, method table and rules, and this surface's receivers.

Every name of `agentproto.acp.generated.v1` is re-exported here. `SURFACE` decodes
payloads by type (fast path, then the authoritative slow path); `AGENT` and `CLIENT`
are the two receiving sides for `agentproto.acp.receive.classify`.
"""

from __future__ import annotations

from agentproto.acp.generated import v1 as _generated
from agentproto.acp.generated.v1 import *
from agentproto.acp.receive import Receiver
from agentproto.acp.surface import Surface

SURFACE = Surface(_generated, "agentproto.acp.generated._v1_decode")
"""The method table and payload decoders of this surface."""
AGENT = Receiver(SURFACE, "agent", allow_null_id=True)
"""The agent's receiving side: client requests and notifications, results of its own calls."""
CLIENT = Receiver(SURFACE, "client", allow_null_id=True)
"""The client's receiving side: agent requests and notifications, results of its own calls."""

__all__ = ["AGENT", "CLIENT", "SURFACE"]
__all__ += _generated.__all__
