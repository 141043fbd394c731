"""The root of every exception agentproto raises."""

from __future__ import annotations


class AgentprotoError(Exception):
    """Base class of agentproto's local errors (decode failures, framing, transport).

    Wire errors (a peer's JSON-RPC error object) are values, not exceptions: see
    `agentproto.jsonrpc.ErrorObject`.
    """
