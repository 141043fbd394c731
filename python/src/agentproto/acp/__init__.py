"""The Agent Client Protocol (ACP): generated types, codecs, method and rule tables, and
the two roles.

Import a surface explicitly: `agentproto.acp.v1` (stable), `agentproto.acp.v1_unstable`,
`agentproto.acp.v2`, `agentproto.acp.v2_unstable`. Each is generated from the pinned
schema and `rules/acp.toml` (see `codegen/`), roles included (`Agent`, `Client`, the
typed connections and the entry points); `agentproto.acp.receive` classifies one
incoming line for either side without a connection.
"""

from __future__ import annotations

from agentproto.acp.context import Context
from agentproto.acp.errors import AcpError
from agentproto.acp.options import AcpOptions
from agentproto.acp.receive import ExtMessage, Receiver, classify
from agentproto.acp.rules import Gate, MethodInfo, SessionRule, SurfaceRules, ValueGate
from agentproto.acp.surface import Surface

__all__ = [
    "AcpError",
    "AcpOptions",
    "Context",
    "ExtMessage",
    "Gate",
    "MethodInfo",
    "Receiver",
    "SessionRule",
    "Surface",
    "SurfaceRules",
    "ValueGate",
    "classify",
]
