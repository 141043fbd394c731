"""No outcome goes through an error message's text.

A decode failure is a value made where it happens (`DecodeError`: kind, path, expected,
found); its message is rendered from those parts. This test replaces the messages of
every third-party error the receive path can meet (the standard library's string scanner,
msgspec's envelope and payload decoders) with misleading text (a message that says the
opposite of what happened) and runs every conformance case through the real receive path
(`classify`) again: the outcomes must be identical, part for part. It also checks that
every decode failure met has a kind and a message that is the rendering of its parts.

It can fail: code that decided anything from those messages (as the reader once did,
with `"Unterminated string" in str(e)`) decides differently on the misleading text, which
`test_the_reader_decides_from_the_grammar_not_the_scanners_message` catches directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import msgspec
import pytest

from agentproto.acp import v1, v1_unstable, v2, v2_unstable
from agentproto.acp.receive import CallFailed, Ignored, Incoming, Reply, classify
from agentproto.acp.surface import Surface
from agentproto.codec import DecodeError, DecodeErrorKind
from agentproto.codec import reader as reader_module
from agentproto.codec.reader import JsonSyntaxError, parse
from agentproto.jsonrpc import message as message_module
from agentproto.jsonrpc.frame import split_lines
from tests.test_vectors import CASES, observe

_real_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
SURFACES = (v1.SURFACE, v1_unstable.SURFACE, v2.SURFACE, v2_unstable.SURFACE)


class Garbler:
    """Replaces third-party error messages with misleading text and counts how often."""

    def __init__(self) -> None:
        self.garbled = {"scanstring": 0, "envelope": 0, "payload": 0}

    def scanstring(self, s: str, end: int, strict: bool = True) -> tuple[str, int]:
        try:
            result: tuple[str, int] = _real_scanstring(s, end, strict)
        except ValueError as e:
            self.garbled["scanstring"] += 1
            # The opposite of what the scanner said (and a position that means nothing).
            lie = "Invalid control character" if "Unterminated" in str(e) else "Unterminated string starting at"
            raise json.JSONDecodeError(lie, "garbage", 0) from None
        return result

    def wrap(self, counter: str, decode: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def garbled(data: Any) -> Any:
            try:
                return decode(data)
            except (msgspec.ValidationError, msgspec.DecodeError) as e:
                self.garbled[counter] += 1
                raise type(e)("Expected `str`, got `int` - at `$.garbage` (line 9, column 99)") from None

        return garbled


@pytest.fixture
def garbled(monkeypatch: pytest.MonkeyPatch) -> Iterator[Garbler]:
    garbler = Garbler()
    monkeypatch.setattr(reader_module, "scanstring", garbler.scanstring)
    monkeypatch.setattr(message_module, "_envelope", garbler.wrap("envelope", message_module._envelope))
    for surface in SURFACES:
        real = Surface.fast_decoder

        def fast_decoder(
            self: Surface, type_name: str, real: Callable[[Surface, str], Any] = real
        ) -> Callable[[Any], Any] | None:
            decoder = real(self, type_name)
            return None if decoder is None else garbler.wrap("payload", decoder)

        # A fresh cache, filled with wrapped decoders.
        monkeypatch.setattr(surface, "_fast", {})
        monkeypatch.setattr(surface, "fast_decoder", fast_decoder.__get__(surface))
    yield garbler


def outcomes() -> dict[str, tuple[dict[str, Any], list[DecodeError]]]:
    """Every case's observed outcome through `classify`, and the decode failures met."""
    out = {}
    for case in CASES:
        (line,) = split_lines(case.input)
        assert isinstance(line, bytes)
        pending = {json.loads(key): method for key, method in case.data.get("pending", {}).items()}
        receiver = {"client_to_agent": v1.AGENT, "agent_to_client": v1.CLIENT}[case.data["direction"]]
        for fast in (True, False):
            incoming = classify(line, replace(receiver, fast_path=fast), pending)
            observed, _ = observe(incoming)
            out[f"{case.id} fast={fast}"] = (observed, failures(incoming))
    return out


def failures(incoming: Incoming) -> list[DecodeError]:
    if isinstance(incoming, Reply | Ignored) and incoming.finding.error is not None:
        return [incoming.finding.error]
    if isinstance(incoming, CallFailed) and incoming.error is not None:
        return [incoming.error]
    warnings = getattr(incoming, "warnings", None) or []
    return [w.error for w in warnings]


def parts(e: DecodeError) -> tuple[str, DecodeErrorKind, str, str, str, str]:
    return (e.path, e.kind, e.expected, e.found, e.message, str(e))


def test_every_decode_failure_has_a_kind_and_a_message_rendered_from_its_parts() -> None:
    met = [e for _, errors in outcomes().values() for e in errors]
    assert len(met) > 100
    for e in met:
        assert isinstance(e.kind, DecodeErrorKind)
        assert e.expected and e.found, e
        assert e.message == f"expected {e.expected}, found {e.found}"
        assert str(e) == f"{e.message} at {e.path}"


def test_invalid_params_replies_carry_the_kind_of_the_failure() -> None:
    replies = 0
    for observed, errors in outcomes().values():
        if observed["outcome"] == "reply_error" and observed["error"]["code"] == -32602 and errors:
            (e,) = errors
            assert observed["error"].get("kind") == e.kind.value
            assert observed["error"]["message"] == f"invalid params: {e}"
            replies += 1
        if observed["outcome"] == "call_failed" and errors:
            assert observed["kind"] == errors[0].kind.value
    assert replies > 50


@pytest.fixture(scope="module")
def clean() -> dict[str, tuple[dict[str, Any], list[DecodeError]]]:
    return outcomes()


def test_the_same_outcomes_with_misleading_messages(
    clean: dict[str, tuple[dict[str, Any], list[DecodeError]]], garbled: Garbler
) -> None:
    misled = outcomes()
    assert all(n > 0 for n in garbled.garbled.values()), f"a replacement was never reached: {garbled.garbled}"
    assert misled.keys() == clean.keys()
    for id, (observed, errors) in clean.items():
        got, got_errors = misled[id]
        assert got == observed, id
        assert [parts(e) for e in got_errors] == [parts(e) for e in errors], id


@pytest.mark.parametrize(
    "text",
    [
        '"abc',  # the input ends inside the string
        '"a\\u12',  # ... inside an escape
        '"a\\',  # ... after a backslash
        '"a\x01b"',  # a control character
        '"a\\xb"',  # an escape JSON does not have
        '"a\\u12zz"',  # a bad \\u escape, with input after it
        '{"k\x02":1}',  # a control character in a key
    ],
)
def test_the_reader_decides_from_the_grammar_not_the_scanners_message(
    text: str, garbled: Garbler, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(JsonSyntaxError) as misled:
        parse(text)
    assert garbled.garbled["scanstring"] > 0
    monkeypatch.setattr(reader_module, "scanstring", _real_scanstring)
    with pytest.raises(JsonSyntaxError) as clean:
        parse(text)
    assert (misled.value.position, misled.value.eof) == (clean.value.position, clean.value.eof)
    assert clean.value.eof is (text[-1] != '"' and "}" not in text)


@pytest.mark.parametrize(
    "payload",
    [b'{"sessionId":"s', b'{"sessionId":"s\x01"}', b'{"sessionId":"s\\u12', b'{"sessionId":"s"}x', b'{"a\xff":1}'],
)
def test_payloads_that_are_not_json_fail_alike_with_misleading_messages(
    payload: bytes, garbled: Garbler, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(DecodeError) as misled:
        v1.SURFACE.decode("CancelNotification", payload, "$.params")
    monkeypatch.setattr(reader_module, "scanstring", _real_scanstring)
    with pytest.raises(DecodeError) as clean:
        v1.SURFACE.decode("CancelNotification", payload, "$.params")
    assert clean.value.kind is DecodeErrorKind.NOT_JSON
    assert parts(misled.value) == parts(clean.value)
