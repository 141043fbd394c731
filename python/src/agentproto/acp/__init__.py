"""The Agent Client Protocol (ACP): generated types, codecs, method and rule tables, and
the two roles.

Import a surface explicitly: `agentproto.acp.v1` (stable), `agentproto.acp.v1_unstable`,
`agentproto.acp.v2`, `agentproto.acp.v2_unstable`. Each is generated from the pinned
schema and `rules/acp.toml` (see `codegen/`), roles included (`Agent`, `Client`, the
typed connections and the entry points); `agentproto.acp.receive` classifies one
incoming line for either side without a connection.

Ready-made helpers for v1: `Terminals` (a client's `terminal/*` handlers) and
`TerminalHandle` (an agent's terminal), from `agentproto.acp.terminal`; `open_session`,
`ClientSession` and `SessionClient` (a client-side session: prompt with text, read a
turn's updates), from `agentproto.acp.session`; the builders of common content and
updates are in `agentproto.acp.builders`, and every surface has `connect_pair` (an agent
and a client in one process). They are imported on first use so that
`import agentproto.acp` does not load the v1 surface; `Context` likewise, so that
decoding messages does not load asyncio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproto._lazy import lazy_names
from agentproto.acp.errors import AcpError
from agentproto.acp.options import AcpOptions
from agentproto.acp.receive import ExtMessage, Receiver, classify
from agentproto.acp.rules import Gate, MethodInfo, SessionGate, SessionRule, SurfaceRules, ValueGate
from agentproto.acp.surface import Surface

if TYPE_CHECKING:
    from agentproto.acp.context import Context
    from agentproto.acp.session import ClientSession, SessionClient, open_session
    from agentproto.acp.terminal import TerminalHandle, Terminals

__all__ = [
    "AcpError",
    "AcpOptions",
    "ClientSession",
    "Context",
    "ExtMessage",
    "Gate",
    "MethodInfo",
    "Receiver",
    "SessionClient",
    "SessionGate",
    "SessionRule",
    "Surface",
    "SurfaceRules",
    "TerminalHandle",
    "Terminals",
    "ValueGate",
    "classify",
    "open_session",
]

# Imported on first use: `Context` needs asyncio, the terminals the v1 surface.
_LAZY = {
    "ClientSession": "agentproto.acp.session",
    "Context": "agentproto.acp.context",
    "SessionClient": "agentproto.acp.session",
    "open_session": "agentproto.acp.session",
    "TerminalHandle": "agentproto.acp.terminal",
    "Terminals": "agentproto.acp.terminal",
}


__getattr__ = lazy_names(__name__, globals(), _LAZY)
