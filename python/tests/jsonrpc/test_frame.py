"""NDJSON framing: LF and CRLF, blank lines, the last line, oversize lines."""

from __future__ import annotations

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
