"""Decode errors are built from their parts, in the wording every SDK shares
(vectors/README.md, "Error texts")."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest

from agentproto.codec import DecodeError, DecodeErrorKind, WarningKind
from agentproto.codec import runtime as rt
from agentproto.codec.reader import parse


def test_message_is_rendered_from_the_parts() -> None:
    e = DecodeError("$.params.sessionId", DecodeErrorKind.WRONG_TYPE, "a string", "null")
    assert e.kind is DecodeErrorKind.WRONG_TYPE
    assert e.message == "expected a string, found null"
    assert str(e) == "expected a string, found null at $.params.sessionId"
    # The parts are the error: changing one changes the message, nothing else is kept.
    e.found = "the integer 5"
    assert (e.message, str(e)) == (
        "expected a string, found the integer 5",
        "expected a string, found the integer 5 at $.params.sessionId",
    )
    assert e == DecodeError("$.params.sessionId", DecodeErrorKind.WRONG_TYPE, "a string", "the integer 5")
    assert e != DecodeError("$.params.sessionId", DecodeErrorKind.OUT_OF_RANGE, "a string", "the integer 5")
    assert pickle.loads(pickle.dumps(e)) == e


def test_a_failure_without_a_kind_cannot_be_made() -> None:
    with pytest.raises(TypeError):
        DecodeError("$", "a string", "null", "no result type")  # type: ignore[arg-type]


def _failure(check: Callable[[object, str, rt.Ctx], object], text: str) -> DecodeError:
    try:
        check(parse(text), "$.x", rt.Ctx(text))
    except DecodeError as e:
        return e
    raise AssertionError(f"{text} was accepted")


def test_the_helpers_name_the_kind_where_the_failure_happens() -> None:
    k = DecodeErrorKind
    cases: list[tuple[Callable[[object, str, rt.Ctx], object], str, DecodeErrorKind]] = [
        (rt.d_str, "5", k.WRONG_TYPE),
        (rt.d_str, '"\\ud800"', k.INVALID_UNICODE),
        (rt.d_bool, "null", k.WRONG_TYPE),
        (rt.d_u16, "70000", k.OUT_OF_RANGE),
        (rt.d_u16, "1.5", k.OUT_OF_RANGE),
        (rt.d_u16, '"7"', k.WRONG_TYPE),
        (rt.d_f64, "1e400", k.NUMBER_TOO_LARGE),
        (rt.d_u64, "1e400", k.NUMBER_TOO_LARGE),
        (rt.d_f64, "[]", k.WRONG_TYPE),
        (lambda v, p, cx: rt.d_enum(v, p, ("a", "b")), '"c"', k.NOT_LISTED),
        (lambda v, p, cx: rt.d_enum(v, p, ("a", "b")), "1", k.WRONG_TYPE),
        (lambda v, p, cx: rt.d_map(v, p, cx, rt.d_str), '{"a":"x","a":"y"}', k.REPEATED_KEY),
        (lambda v, p, cx: rt.min_length(p, rt.d_str(v, p, cx), 1), '""', k.TOO_SHORT),
        (lambda v, p, cx: rt.min_items(p, rt.d_list(v, p, cx, rt.d_str), 1), "[]", k.TOO_SHORT),
    ]
    for check, text, kind in cases:
        e = _failure(check, text)
        assert e.kind is kind, (text, e)
        assert e.message == f"expected {e.expected}, found {e.found}"
    assert rt.missing("$", "a").kind is k.MISSING_FIELD
    assert rt.no_variant("$", parse("5"), "one of A, B").kind is k.NO_VARIANT


def test_warnings_carry_the_failure_behind_them() -> None:
    cx = rt.Ctx("5")
    assert rt.lenient(cx, 5, "$.x", rt.d_str) is rt.MISSING
    assert rt.items(cx, "s", "$.y", rt.d_str, False, True) is rt.MISSING
    assert rt.default_on_null(cx, None, "$.z", lambda v, p, c: rt.d_list(v, p, c, rt.d_str)) is rt.MISSING
    rt.warn_unknown(cx, "$.u", "ContentBlock", "hologram")
    dropped, whole, null, unknown = cx.warnings
    assert dropped.error == DecodeError("$.x", DecodeErrorKind.WRONG_TYPE, "a string", "the integer 5")
    assert dropped.message == "dropped invalid value: expected a string, found the integer 5 at $.x"
    assert whole.error == DecodeError("$.y", DecodeErrorKind.WRONG_TYPE, "an array", 'the string "s"')
    assert whole.message == f"dropped invalid value: {whole.error}"
    assert null.error == DecodeError("$.z", DecodeErrorKind.WRONG_TYPE, "an array", "null")
    assert null.message == "null read as the default value"
    assert unknown.kind is WarningKind.UNKNOWN_VARIANT
    assert unknown.error == DecodeError(
        "$.u", DecodeErrorKind.UNKNOWN_VARIANT, "a known variant of ContentBlock", 'the string "hologram"'
    )
    assert unknown.message == 'unknown ContentBlock variant "hologram" kept as raw JSON'


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
