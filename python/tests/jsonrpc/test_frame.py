"""NDJSON framing: LF and CRLF, blank lines, the last line, oversize lines."""

from __future__ import annotations

from msgspec import UNSET

from agentproto.jsonrpc import LineSplitter, Oversize, split_lines


def test_lines_end_at_lf_with_one_cr_stripped_and_blank_lines_skipped() -> None:
    assert split_lines(b'{"a":1}\r\n\n  \t\r\n{"b":2}\n{"c":3}') == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


def test_a_line_split_across_chunks_is_joined() -> None:
    splitter = LineSplitter()
    assert list(splitter.feed(b'{"a":')) == []
    assert list(splitter.feed(b"1}\n")) == [b'{"a":1}']


def test_an_oversize_line_is_reported_and_reading_goes_on() -> None:
    splitter = LineSplitter(max_message_size=8)
    events = [*splitter.feed(b"0123456789"), *splitter.feed(b"abcdef\nok\n")]
    assert events == [Oversize(16), b"ok"]
    assert list(splitter.finish()) == []


def test_an_oversize_line_is_never_held_whole() -> None:
    splitter = LineSplitter(max_message_size=1000)
    chunk = b'{"jsonrpc":"2.0","id":42,"method":"big","params":"' + b"x" * 4000
    frames = list(splitter.feed(chunk))
    for _ in range(100):
        frames += splitter.feed(b"y" * 4096)
        assert len(splitter._buffer) <= 1001
    frames += splitter.feed(b'"}\n{"a":1}\n')
    assert frames == [Oversize(len(chunk) + 409600 + 2, 42, "call"), b'{"a":1}']


def test_the_id_and_shape_of_an_oversize_line_come_from_its_first_bytes() -> None:
    big = b"z" * 5000  # longer than the 4 KiB prefix that is scanned
    cases = [
        (b'{"jsonrpc":"2.0","id":"r-1","result":{"x":"' + big + b'"}}', "r-1", "response"),
        (b'{"id":null,"error":{"code":1,"message":"' + big + b'"}}', None, "response"),
        (b'{"method":"m","params":["' + big + b'"],"id":7}', UNSET, "call"),  # the id is past the prefix
        (b"[" + big + b"]", UNSET, "unknown"),
    ]
    for line, id, shape in cases:
        (oversize,) = split_lines(line + b"\n", max_message_size=40)
        assert isinstance(oversize, Oversize)
        assert (oversize.id, oversize.shape) == (id, shape), line
