"""agentproto: SDKs for agent protocols (ACP over stdio), generated from the pinned spec.

* `agentproto.jsonrpc`: the JSON-RPC 2.0 envelope, error codes, NDJSON framing and the
  asyncio `Connection`.
* `agentproto.acp.v1`: the stable ACP v1 types, codecs, method table and roles (`Agent`,
  `Client`, typed calls, `serve_agent_stdio`, `spawn_agent`); `agentproto.acp.v1_unstable`,
  `agentproto.acp.v2`, `agentproto.acp.v2_unstable` for the other surfaces.
* `agentproto.acp.receive`: one incoming line in, what to do with it out.
* `agentproto.acp.fs`, `agentproto.acp.tool_calls`: file-system handlers confined to
  roots, the tool-call store.
* `agentproto.codec`: decode errors, warnings and the canonical encoder.
* `agentproto.examples`: `echo_agent` and `run_prompt`.
"""

from __future__ import annotations

from agentproto.errors import AgentprotoError

__all__ = ["AgentprotoError"]
__version__ = "0.2.0"
