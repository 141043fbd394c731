"""The generated surface: types, the method table with its rules, both decode paths."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import UNSET, Raw

from agentproto.acp import v1, v1_unstable, v2
from agentproto.acp.refusal import CapabilityNotAdvertised
from agentproto.codec import DecodeError, DecodeErrorKind, Float64, Unknown, encode


def test_the_method_table_carries_the_rules() -> None:
    rows = {(m.name, m.kind): m for m in v1.METHODS}
    prompt = rows[("session/prompt", "request")]
    assert (prompt.side, prompt.params, prompt.result, prompt.required) == (
        "agent",
        "PromptRequest",
        "PromptResponse",
        True,
    )
    assert [g.member for g in prompt.values] == ["prompt"]
    load = rows[("session/load", "request")]
    assert load.gate is not None and load.gate.path == ("agentCapabilities", "loadSession")
    refusal = v1.CHECKS["session/load"].refusal
    assert refusal is not None
    params = v1.LoadSessionRequest(session_id="s", cwd="/", mcp_servers=[])
    on = v1.InitializeResponse(protocol_version=1, agent_capabilities=v1.AgentCapabilities(load_session=True))
    assert refusal(params, on) is None
    off = v1.InitializeResponse(protocol_version=1)
    assert refusal(params, off) == CapabilityNotAdvertised("agentCapabilities.loadSession")
    assert load.null_result
    assert v1.RULES.prompt_turn == "session/prompt"
    assert v2.RULES.prompt_turn is None
    assert len(v1_unstable.METHODS) > len(v1.METHODS)


def test_defaults_are_filled_and_written() -> None:
    caps = v1.AgentCapabilities()
    assert encode(caps) == (
        b'{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},'
        b'"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{},"auth":{}}'
    )


def test_three_states_survive_a_round_trip() -> None:
    for text in (b'{"toolCallId":"c"}', b'{"toolCallId":"c","title":null}', b'{"toolCallId":"c","title":"t"}'):
        decoded = v1.SURFACE.decode("ToolCallUpdate", text, "$")
        assert encode(decoded.value) == text


def test_doubles_become_float64_on_construction_and_decode() -> None:
    annotations = v1.Annotations(priority=1e16)
    assert type(annotations.priority) is Float64
    assert encode(annotations) == b'{"priority":1e+16}'


CASES: list[tuple[str, bytes]] = [
    ("SessionNotification", b'{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}'),
    ("NewSessionRequest", b'{"cwd":"/","mcpServers":[{"name":"a","command":"x","args":[],"env":[]}]}'),
    ("PromptRequest", b'{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"u","text":"t"}}]}'),
    ("SetSessionConfigOptionRequest", b'{"sessionId":"s","configId":"c","value":"v"}'),
    ("SetSessionConfigOptionRequest", b'{"sessionId":"s","configId":"c","type":"boolean","value":true}'),
]


@pytest.mark.parametrize(("type_name", "text"), CASES)
def test_the_fast_and_the_slow_path_agree(type_name: str, text: bytes) -> None:
    fast = v1.SURFACE.decode(type_name, text, "$.params")
    slow = v1.SURFACE.decode(type_name, text, "$.params", fast=False)
    assert encode(fast.value) == encode(slow.value)
    assert encode(v1.SURFACE.decode(type_name, encode(fast.value), "$").value) == encode(fast.value)
    assert fast.warnings == slow.warnings == []


def test_flattened_objects_write_their_own_members_then_the_variant() -> None:
    request = v1.SetSessionConfigOptionRequest(
        session_id="s", config_id="c", variant=v1.SetSessionConfigOptionRequestVariantBoolean(value=True)
    )
    assert encode(request) == b'{"sessionId":"s","configId":"c","type":"boolean","value":true}'
    unknown = Unknown("dial", Raw(b'{"sessionId":"s","type":"dial","level":3}'))
    request = v1.SetSessionConfigOptionRequest(session_id="s", config_id="c", variant=unknown)
    assert encode(request) == b'{"sessionId":"s","configId":"c","type":"dial","level":3}'


@pytest.mark.parametrize(
    ("text", "path", "kind", "expected", "found"),
    [
        (b'{"sessionId":5,"prompt":[]}', "$.params.sessionId", "wrong-type", "a string", "the integer 5"),
        (b'{"sessionId":"s"}', "$.params", "missing-field", 'the field "prompt"', "an object without it"),
        (b'{"sessionId":"s","prompt":{}}', "$.params.prompt", "wrong-type", "an array", "an object"),
        (
            b'{"sessionId":"s","sessionId":"t","prompt":[]}',
            "$.params.sessionId",
            "repeated-key",
            "each key once",
            'the key "sessionId" twice',
        ),
        (
            b'{"sessionId":"s","prompt":[{"type":5}]}',
            "$.params.prompt[0].type",
            "wrong-type",
            "a string",
            "the integer 5",
        ),
        (b'{"sessionId":"s",', "$.params", "not-json", "JSON text", "text that is not JSON (line 1, column 18)"),
        (b'{"sessionId":"s"}x', "$.params", "not-json", "JSON text", "text that is not JSON (line 1, column 18)"),
        (b'{\n"sessionId":"\xff"}', "$.params", "not-json", "JSON text", "text that is not JSON (line 2, column 14)"),
        (b'{"sessionId":"s\n"}', "$.params", "not-json", "JSON text", "text that is not JSON (line 1, column 16)"),
        (b"[" * 200 + b"]" * 200, "$.params", "not-json", "JSON text nested at most 128 deep", "text nested deeper"),
    ],
)
def test_errors_say_where_what_was_expected_and_what_was_found(
    text: bytes, path: str, kind: str, expected: str, found: str
) -> None:
    with pytest.raises(DecodeError) as e:
        v1.SURFACE.decode("PromptRequest", text, "$.params", fast=False)
    got: Any = (e.value.path, e.value.kind, e.value.expected, e.value.found)
    assert got == (path, DecodeErrorKind(kind), expected, found)
    assert e.value.message == f"expected {expected}, found {found}"


def test_meta_must_be_an_object_on_the_fast_path_too() -> None:
    decoded = v1.SURFACE.decode("CancelNotification", b'{"sessionId":"s","_meta":5}', "$.params")
    assert decoded.value.meta is UNSET
    assert [w.path for w in decoded.warnings] == ["$.params._meta"]
