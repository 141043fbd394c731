"""Canonical encoding of the values generated code uses (vectors/README.md rules 6, 7, 9)."""

from __future__ import annotations

import pytest
from msgspec import Raw

from agentproto.codec import Float64, Unknown, encode, encode_float


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (-2.5e-8, "-2.5e-8"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e100, "1e+100"),
        (0.5, "0.5"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (1.5e16, "1.5e+16"),
        (1e21, "1e+21"),
        (123456.789, "123456.789"),
        (0.00001, "0.00001"),
        (0.000001, "1e-6"),
        (1.5e-7, "1.5e-7"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (5e-324, "5e-324"),
        (float("nan"), "null"),
    ],
)
def test_doubles_are_written_as_serde_json_writes_them(x: float, text: str) -> None:
    """The same table as the Rust runner's `canonical_scalars_are_serde_json`."""
    assert encode_float(x) == text.encode()
    assert encode([Float64(x)]) == f"[{text}]".encode()


def test_strings_escape_only_what_rule_6_says() -> None:
    s = '"\\/\b\t\n\f\r\x01\x1f\x7fé\u2028😀'
    assert encode(s) == '"\\"\\\\/\\b\\t\\n\\f\\r\\u0001\\u001f\x7fé\u2028😀"'.encode()


def test_an_unknown_variant_encodes_as_its_raw_json() -> None:
    unknown = Unknown("video", Raw(b'{"data":{ "a" : 1 },"type":"video"}'))
    assert encode([unknown]) == b'[{"data":{ "a" : 1 },"type":"video"}]'
    assert unknown == Unknown("video", Raw(b'{"data":{ "a" : 1 },"type":"video"}'))
