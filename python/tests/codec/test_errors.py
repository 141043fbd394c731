"""Decode errors are built from their parts, in the wording every SDK shares
(vectors/README.md, "Error texts")."""

from __future__ import annotations

from agentproto.codec import DecodeError
from agentproto.codec import runtime as rt
from agentproto.codec.reader import parse


def test_message_is_rendered_from_the_parts() -> None:
    e = DecodeError("$.params.sessionId", "a string", "null")
    assert e.message == "expected a string, found null"
    assert str(e) == "expected a string, found null at $.params.sessionId"
    assert DecodeError("$", "", "", "no result type").message == "no result type"


def test_found_names_the_value_without_nested_quoting() -> None:
    found = [rt.describe(parse(t)) for t in ("null", "true", "-5", "1.5", "1e400", '"a\\"b\\n"', "[]", "{}")]
    assert found == [
        "null",
        "the boolean true",
        "the integer -5",
        "the number 1.5",
        "the number inf",
        'the string "a\\"b\\n"',
        "an array",
        "an object",
    ]


def test_integers_name_their_range_not_a_type() -> None:
    cx = rt.Ctx("")
    for text, check, expected in [
        ("70000", rt.d_u16, "an integer from 0 to 65535"),
        ("-1", rt.d_u64, "an integer from 0 to 18446744073709551615"),
        ('"7"', rt.d_i64, "an integer from -9223372036854775808 to 9223372036854775807"),
    ]:
        try:
            check(parse(text), "$.x", cx)
        except DecodeError as e:
            assert e.expected == expected
            assert e.found == rt.describe(parse(text))
        else:
            raise AssertionError(f"{text} was accepted")


def test_missing_repeated_and_enum_failures_quote_names_as_json() -> None:
    assert (rt.missing("$", "sessionId").expected, rt.missing("$", "sessionId").found) == (
        'the field "sessionId"',
        "an object without it",
    )
    dup = rt.duplicate("$.params", "x y")
    assert (dup.path, dup.expected, dup.found) == ('$.params["x y"]', "each key once", 'the key "x y" twice')
    try:
        rt.d_enum("finished", "$.stopReason", ("end_turn", "max_tokens"))
    except DecodeError as e:
        assert (e.expected, e.found) == ('one of "end_turn", "max_tokens"', 'the string "finished"')
    else:
        raise AssertionError("an unknown enum value was accepted")
    assert rt.one_of(("text",)) == '"text"'
