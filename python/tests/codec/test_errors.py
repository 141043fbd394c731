"""Decode errors split serde-style messages into `expected` and `found`, as Rust does."""

from __future__ import annotations

from agentproto.codec import DecodeError


def test_invalid_type_messages_split_into_expected_and_found() -> None:
    e = DecodeError.from_message("$.params.sessionId", "invalid type: null, expected a string")
    assert (e.expected, e.found) == ("a string", "null")
    assert str(e) == "invalid type: null, expected a string at `$.params.sessionId`"


def test_missing_and_duplicate_fields_name_the_key() -> None:
    assert DecodeError.from_message("$", "missing field `sessionId`").expected == "field `sessionId`"
    dup = DecodeError.from_message("$.x", "duplicate field `x`")
    assert (dup.expected, dup.found) == ("each key once", "`x` twice")


def test_unknown_variants_list_what_was_expected() -> None:
    e = DecodeError.from_message("$.k", "unknown variant `x`, expected one of `a`, `b`")
    assert (e.expected, e.found) == ("one of `a`, `b`", "`x`")
    assert DecodeError.from_message("$", "number out of range").expected == ""
