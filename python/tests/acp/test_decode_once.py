"""A message is parsed once: what the protocol rules read (the session a request names,
the capabilities it needs, what an opening answer announced) is read from the typed value
the receive path decoded, never from the text again.

Every payload decode goes through `Surface._decode`; it is counted here per type, and the
endpoint's one JSON entry point (`_decode_json`, left only for the version of an
`initialize` answer that does not decode) fails the test if it is called. Both sides run
with `strict` off, so that the only decodes are those of received messages.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from msgspec import Raw

from agentproto.acp import endpoint, v1
from agentproto.acp.errors import CapabilityNotAdvertised
from agentproto.acp.options import AcpOptions
from agentproto.acp.surface import Surface
from agentproto.codec.errors import Decoded

WAIT = 5.0
MODES = v1.SessionModeState(current_mode_id="m", available_modes=[v1.SessionMode(id="m", name="M")])


class Agent(v1.Agent):
    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        image = v1.PromptCapabilities(image=True)
        return v1.InitializeResponse(
            protocol_version=1, agent_capabilities=v1.AgentCapabilities(prompt_capabilities=image)
        )

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1", modes=MODES)

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")

    async def set_session_mode(
        self, cx: v1.AgentContext, params: v1.SetSessionModeRequest
    ) -> v1.SetSessionModeResponse:
        return v1.SetSessionModeResponse()


class Client(v1.Client):
    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        raise AssertionError("nothing asks")

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        return


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each payload type was decoded; parsing JSON in the endpoint fails."""
    counts: Counter[str] = Counter()
    original = Surface._decode

    def counting(
        self: Surface, type_name: str, payload: Raw | bytes | None, root: str, check: bool, fast: bool
    ) -> Decoded[Any]:
        counts[type_name] += 1
        return original(self, type_name, payload, root, check, fast)

    def parsed(text: Any) -> Any:
        raise AssertionError(f"the endpoint parsed {bytes(text)!r} again")

    monkeypatch.setattr(Surface, "_decode", counting)
    monkeypatch.setattr(endpoint, "_decode_json", parsed)
    return counts


async def test_each_message_of_a_session_is_decoded_once(decodes: Counter[str]) -> None:
    options = AcpOptions(strict=False)
    async with v1.connect_pair(Agent(), Client(), options) as pair:
        agent = pair.agent
        await asyncio.wait_for(agent.initialize(v1.InitializeRequest(protocol_version=1)), WAIT)
        # The capabilities the rules read are the typed answer the client decoded.
        capabilities = agent.agent_capabilities
        assert capabilities is not None and capabilities.prompt_capabilities.image is True
        session = await asyncio.wait_for(agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[])), WAIT)
        image = v1.ImageContent(data="aGk=", mime_type="image/png")
        prompt = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContent(text="hi"), image])
        answer = await asyncio.wait_for(agent.prompt(prompt), WAIT)
        assert answer.stop_reason == "end_turn"
        # A session gate: the client read `modes` in the typed `session/new` answer, the
        # agent in the typed result its handler returned.
        mode = v1.SetSessionModeRequest(session_id=session.session_id, mode_id="m")
        await asyncio.wait_for(agent.set_session_mode(mode), WAIT)
    # The agent decoded each request once (as it was read: the read order needs the
    # session a prompt names); the client each answer once (as it was read: the session
    # it opened, and what the answer announced, are applied there).
    for type_name in ("InitializeRequest", "NewSessionRequest", "PromptRequest", "SetSessionModeRequest"):
        assert decodes[type_name] == 1, (type_name, decodes)
    for type_name in ("InitializeResponse", "NewSessionResponse", "PromptResponse", "SetSessionModeResponse"):
        assert decodes[type_name] == 1, (type_name, decodes)


async def test_params_given_as_a_dict_are_decoded_once_for_the_rules(decodes: Counter[str]) -> None:
    """The rules read the generated classes; params passed as something else (a dict)
    are decoded once from the bytes about to be sent, and judged the same way."""
    async with v1.connect_pair(Agent(), Client(), AcpOptions(strict=False)) as pair:
        agent = pair.agent
        await asyncio.wait_for(agent.initialize({"protocolVersion": 1}), WAIT)  # type: ignore[arg-type]
        assert decodes["InitializeRequest"] == 2  # this side's, for the rules; the agent's
        audio = {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}
        with pytest.raises(CapabilityNotAdvertised) as refused:
            await agent.prompt({"sessionId": "s1", "prompt": [audio]})  # type: ignore[arg-type]
        assert refused.value.capability == "agentCapabilities.promptCapabilities.audio"
