"""End-to-end benchmark agent on agentproto's Python SDK (``agentproto.acp.v1``), on
stdio (``serve_agent_stdio``). A prompt whose text is ``"<count> <tokens>"`` is answered
by ``count`` agent_message_chunk updates of ``"word " * tokens``, each sent with the
typed ``session_update`` call of the connection, then end_turn.
"""

from __future__ import annotations

import asyncio

from agentproto.acp import AcpOptions, v1
from agentproto.jsonrpc import RequestError
from harness import outgoing_checked, parse_e2e_prompt


class Streamer(v1.Agent):
    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=v1.PROTOCOL_VERSION)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="sess-001")

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        first = params.prompt[0] if params.prompt else None
        asked = parse_e2e_prompt(first.text if isinstance(first, v1.TextContent) else "")
        if asked is None:
            raise RequestError.invalid_params("$.prompt[0].text", '"<count> <tokens>"', "other text")
        count, tokens = asked
        text = "word " * tokens
        session = params.session_id
        for _ in range(count):
            update = v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text=text))
            await cx.peer.session_update(v1.SessionNotification(session_id=session, update=update))
        return v1.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(v1.serve_agent_stdio(Streamer(), AcpOptions(strict=outgoing_checked())))
