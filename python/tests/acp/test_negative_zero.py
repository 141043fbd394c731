"""The fast path's `-0` guard: the number `-0` sends a payload to the authoritative path
(msgspec would read the integer 0, the decoding model reads the double -0.0), while a
`-0` inside a string, as in an id like `"tc-0"`, leaves the fast path open."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import Raw

from agentproto.acp import v1
from agentproto.acp.surface import Surface, _holds_negative_zero
from agentproto.codec import encode


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        (b"-0", True),
        (b"[-0]", True),
        (b'{"a":-0}', True),
        (b'{"a": -0}', True),
        (b'{"a":\n-0}', True),
        (b'{"a":[1,-0]}', True),
        (b'{"a":"x,-0"}', True),  # in a string, but after a comma: counted, to be safe
        (b'{"a":"tc-0"}', False),
        (b'{"a":"sess-001"}', False),
        (b'{"a":-0.0}', False),
        (b'{"a":-0e1}', False),
        (b'{"a":-01}', False),
        (b'{"a":-1}', False),
    ],
)
def test_what_counts_as_the_number_minus_zero(text: bytes, holds: bool) -> None:
    assert _holds_negative_zero(text) is holds
    assert _holds_negative_zero(Raw(text)) is holds


def _slow_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = Surface.decode_slow

    def spy(self: Surface, type_name: str, data: bytes, root: str) -> Any:
        calls.append(type_name)
        return original(self, type_name, data, root)

    monkeypatch.setattr(Surface, "decode_slow", spy)
    return calls


def test_a_string_holding_minus_zero_keeps_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = _slow_calls(monkeypatch)
    text = b'{"toolCallId":"tc-0","title":"step-0","locations":[{"path":"/src/a-0","line":0}]}'
    decoded = v1.SURFACE.decode("ToolCallUpdate", text, "$")
    assert slow == []
    assert encode(decoded.value) == b'{"toolCallId":"tc-0","title":"step-0","locations":[{"path":"/src/a-0","line":0}]}'


def test_the_number_minus_zero_takes_the_authoritative_path(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = _slow_calls(monkeypatch)
    for text in (
        b'{"type":"text","text":"t","annotations":{"priority":-0}}',
        b'{"type":"text","text":"t-0","annotations":{"priority": -0}}',
    ):
        decoded = v1.SURFACE.decode("TextContent", text, "$")
        assert b'"annotations":{"priority":-0.0}' in encode(decoded.value)
    assert slow == ["TextContent", "TextContent"]
