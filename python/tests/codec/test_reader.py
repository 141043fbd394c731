"""The slow path's JSON reader: spans, repeated keys, strictness."""

from __future__ import annotations

import pytest

from agentproto.codec.reader import JArray, JObject, JsonSyntaxError, parse


def test_members_keep_order_repeats_and_value_spans() -> None:
    text = '{"b": {"x" : 1}, "a": [1, 2.0], "b": null}'
    node = parse(text)
    assert isinstance(node, JObject)
    assert [k for k, _, _, _ in node.members] == ["b", "a", "b"]
    _, first, start, end = node.members[0]
    assert isinstance(first, JObject)
    assert text[start:end] == '{"x" : 1}'
    _, items, _, _ = node.members[1]
    assert isinstance(items, JArray)
    assert [v for v, _, _ in items.items] == [1, 2.0]
    assert type(items.items[1][0]) is float


def test_negative_zero_is_a_double_as_serde_json_reads_it() -> None:
    value = parse("-0")
    assert type(value) is float and str(value) == "-0.0"
    assert parse("0") == 0 and type(parse("0")) is int


@pytest.mark.parametrize(
    ("text", "eof"),
    [
        ('{"a":1', True),
        ('{"a":1,}', False),
        ("[1,", True),
        ('"abc', True),
        ("NaN", False),
        ("tru", True),
        ("{} x", False),
        ('{"a":"\x01"}', False),
    ],
)
def test_invalid_json_says_whether_the_input_ended_early(text: str, eof: bool) -> None:
    with pytest.raises(JsonSyntaxError) as e:
        parse(text)
    assert e.value.eof is eof
