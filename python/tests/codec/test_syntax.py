"""The position of a parse error: the first character that cannot continue a JSON text
(the same cases as `crates/jsonrpc/src/syntax.rs` and `ts/test/codec/syntax.test.ts`)."""

from __future__ import annotations

import pytest
from msgspec import Raw

from agentproto.codec.syntax import first_invalid
from agentproto.jsonrpc.message import EnvelopeError, decode


@pytest.mark.parametrize("text", ["{}", " [ ] ", '{"a":[1,-0.5e+3,"\\u00e9\\n",true,false,null,{}]}', "0", '"x"\r\n'])
def test_whole_json_texts_have_no_position(text: str) -> None:
    assert first_invalid(text) is None


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ('{"a":1,}', 1, 8),
        ('{"a" 1}', 1, 6),
        ("{} x", 1, 4),
        ("01", 1, 2),
        ("-x", 1, 2),
        ("1.x", 1, 3),
        ("trux", 1, 4),
        ("hello", 1, 1),
        ("[1 2]", 1, 4),
        ("[1}", 1, 3),
        ('{"k":"a\\x"}', 1, 9),
        ('{"k":"\\u12G4"}', 1, 11),
        ('"a\tb"', 1, 3),
        ("\ufeff{}", 1, 1),
        ('{"é":"ü" ,]', 1, 11),
        ('{"😀":1 ,]', 1, 9),
        ('{\n  "a": 1\n  "b": 2\n}', 3, 3),
    ],
)
def test_the_first_character_that_cannot_continue_is_reported(text: str, line: int, column: int) -> None:
    at = first_invalid(text)
    assert at is not None and (at.line, at.column, at.eof) == (line, column, False)


@pytest.mark.parametrize(
    ("text", "column"),
    [("", 1), ('{"jsonrpc":"2.0","id":1,"method":', 34), ("[1,", 4), ("tr", 3), ('"ab', 4), ("1e+", 4)],
)
def test_a_text_cut_short_ends_at_the_end_of_input(text: str, column: int) -> None:
    at = first_invalid(text)
    assert at is not None and (at.line, at.column, at.eof) == (1, column, True)


def test_the_parse_error_reply_carries_the_position() -> None:
    with pytest.raises(EnvelopeError) as e:
        decode(b'{"jsonrpc":"2.0",\n"method" "n"}')
    assert e.value.message == "parse error: invalid JSON at line 2, column 10"
    error = e.value.to_error_object()
    assert isinstance(error.data, Raw) and bytes(error.data) == b'{"path":"$","line":2,"column":10}'


def test_invalid_utf8_is_placed_at_its_first_bad_byte_in_characters() -> None:
    with pytest.raises(EnvelopeError) as e:
        decode(b'{"\xc3\xa9":"\xed\xa0\x80"}')
    assert (e.value.message, e.value.position) == ("parse error: invalid utf-8 at line 1, column 7", (1, 7))
