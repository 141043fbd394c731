"""The tuple reader and writer on in-memory streams: exact bytes, the shortest bin form at
every boundary, and every malformation the reader refuses."""

from __future__ import annotations

import io

import pytest

from agentproto.sync.errors import Field, FrameError, FrameProblem, MessageType
from agentproto.sync.frame import FrameReader, FrameWriter, Limits, bin_header, encode


def reader_of(data: bytes, limits: Limits | None = None) -> FrameReader:
    return FrameReader(io.BufferedReader(io.BytesIO(data)), limits)


def read_one(data: bytes, limits: Limits | None = None) -> tuple[MessageType, bytes, bytes] | None:
    frame = reader_of(data, limits).read()
    return None if frame is None else (frame.kind, frame.name, bytes(frame.payload))


def refusal(data: bytes, limits: Limits | None = None) -> FrameError:
    with pytest.raises(FrameError) as caught:
        read_one(data, limits)
    return caught.value


def test_a_request_is_written_as_the_exact_wire_bytes() -> None:
    assert encode(MessageType.REQUEST, b"echo", b"hi") == b"\x93\x01\xc4\x04echo\xc4\x02hi"


def test_empty_name_and_payload_use_bin8_of_zero() -> None:
    assert encode(MessageType.RESPONSE, b"", b"") == b"\x93\x04\xc4\x00\xc4\x00"


@pytest.mark.parametrize(
    ("length", "expected"),
    [
        (0, b"\xc4\x00"),
        (255, b"\xc4\xff"),
        (256, b"\xc5\x01\x00"),
        (65535, b"\xc5\xff\xff"),
        (65536, b"\xc6\x00\x01\x00\x00"),
        (2**32 - 1, b"\xc6\xff\xff\xff\xff"),
    ],
)
def test_bin_header_takes_the_shortest_form_at_each_boundary(length: int, expected: bytes) -> None:
    assert bin_header(length) == expected


def test_a_length_over_bin32_cannot_be_written() -> None:
    with pytest.raises(ValueError, match="bin32"):
        bin_header(2**32)


@pytest.mark.parametrize("length", [0, 1, 255, 256, 65535, 65536, 65537, 200_000])
def test_boundary_lengths_round_trip_through_writer_and_reader(length: int) -> None:
    payload = bytes(index % 251 for index in range(length))
    wire = io.BytesIO()
    FrameWriter(wire).write(MessageType.CALL, b"readFile", memoryview(payload))
    data = wire.getvalue()
    at = 4 + len(b"readFile")
    header = bin_header(length)
    assert data[at : at + len(header)] == header
    assert len(data) == at + len(header) + length
    assert read_one(data) == (MessageType.CALL, b"readFile", payload)


def test_long_names_take_the_longer_bin_forms_too() -> None:
    name = b"n" * 300
    data = encode(MessageType.REQUEST, name, b"x")
    assert data[:5] == b"\x93\x01\xc5\x01\x2c"
    assert read_one(data) == (MessageType.REQUEST, name, b"x")


class Trickle(io.RawIOBase):
    """A raw stream that takes at most 1000 bytes per write, as a pipe may."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.writes = 0

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        with memoryview(data) as view:  # type: ignore[arg-type]
            chunk = view[:1000]
            self.data += chunk
            self.writes += 1
            return chunk.nbytes


def test_short_writes_are_continued_until_the_tuple_is_whole() -> None:
    for length in (10, 5000, 100_000):
        stream = Trickle()
        FrameWriter(stream).write(MessageType.RESPONSE, b"x", bytes(length))
        assert bytes(stream.data) == encode(MessageType.RESPONSE, b"x", bytes(length))
        assert stream.writes >= (length + 1000) // 1000


def test_the_reader_accepts_a_uint8_type_and_longer_than_needed_bin_forms() -> None:
    # Not what our writer produces, but valid MessagePack for the same tuple.
    data = b"\x93\xcc\x05\xc5\x00\x01x\xc6\x00\x00\x00\x02no"
    assert read_one(data) == (MessageType.ERROR, b"x", b"no")


def test_every_type_value_maps_both_ways() -> None:
    for value in range(1, 7):
        assert MessageType(value).value == value
        assert read_one(bytes((0x93, value, 0xC4, 0, 0xC4, 0))) == (MessageType(value), b"", b"")


def test_a_clean_end_of_stream_reads_as_none() -> None:
    assert read_one(b"") is None


def test_consecutive_tuples_are_read_in_order_into_the_reused_buffer() -> None:
    data = encode(MessageType.CALL, b"fileExists", b'"/a"') + encode(
        MessageType.RESPONSE, b"getSourceFile", b"\7" * 300
    )
    reader = reader_of(data)
    first = reader.read()
    assert first is not None and (first.kind, first.name, bytes(first.payload)) == (
        MessageType.CALL,
        b"fileExists",
        b'"/a"',
    )
    second = reader.read()
    assert second is not None and (second.kind, second.name, second.payload.nbytes) == (
        MessageType.RESPONSE,
        b"getSourceFile",
        300,
    )
    # One buffer: the first payload's view now shows the second's bytes (the documented contract).
    assert first.payload.obj is second.payload.obj
    assert bytes(first.payload) == b"\7" * 4
    assert reader.read() is None


def test_a_view_kept_across_a_larger_payload_keeps_its_memory() -> None:
    data = encode(MessageType.RESPONSE, b"a", b"small") + encode(MessageType.RESPONSE, b"b", b"L" * 100_000)
    reader = reader_of(data)
    first = reader.read()
    assert first is not None
    second = reader.read()
    assert second is not None and second.payload.nbytes == 100_000
    assert first.payload.obj is not second.payload.obj, "a bigger buffer replaces the old one"
    assert bytes(first.payload) == b"small"


def test_swapped_buffers_keep_the_last_payload_across_the_next_read() -> None:
    data = encode(MessageType.REQUEST, b"a", b"first") + encode(MessageType.REQUEST, b"b", b"second")
    reader = reader_of(data)
    first = reader.read()
    assert first is not None
    reader.swap_buffers()
    second = reader.read()
    assert second is not None
    assert (bytes(first.payload), bytes(second.payload)) == (b"first", b"second")
    assert bytes(reader.payload) == b"second" and reader.name == b"b"


def test_a_wrong_array_header_is_refused() -> None:
    error = refusal(b"\x92\x01")
    assert (error.problem, error.found) == (FrameProblem.ARRAY_HEADER, 0x92)
    assert str(error) == "expected a fixarray of 3 (0x93), found 0x92"


@pytest.mark.parametrize("marker", [0xA1, 0xCD, 0xD0, 0xFF])
def test_a_type_marker_that_is_not_an_unsigned_integer_is_refused(marker: int) -> None:
    error = refusal(bytes((0x93, marker, 0xC4, 0, 0xC4, 0)))
    assert (error.problem, error.found) == (FrameProblem.TYPE_MARKER, marker)


@pytest.mark.parametrize(("data", "value"), [(b"\x93\x00", 0), (b"\x93\x07", 7), (b"\x93\xcc\xff", 255)])
def test_a_type_outside_one_to_six_is_refused(data: bytes, value: int) -> None:
    error = refusal(data)
    assert (error.problem, error.value) == (FrameProblem.UNKNOWN_TYPE, value)
    assert str(error) == f"unknown message type {value} (expected 1 to 6)"


def test_a_name_or_payload_that_is_not_bin_is_refused() -> None:
    # A str8 name (0xd9) and a fixstr payload (0xa2) are MessagePack, but not bin.
    error = refusal(b"\x93\x01\xd9\x01x\xc4\x00")
    assert (error.problem, error.field, error.found) == (FrameProblem.BIN_MARKER, Field.NAME, 0xD9)
    error = refusal(b"\x93\x01\xc4\x01x\xa2hi")
    assert (error.problem, error.field, error.found) == (FrameProblem.BIN_MARKER, Field.PAYLOAD, 0xA2)
    assert str(error) == "expected bin8, bin16 or bin32 (0xc4-0xc6) for the payload, found 0xa2"


def test_lengths_over_the_limits_are_refused_before_reading_the_bytes() -> None:
    limits = Limits(max_name=3, max_payload=256)
    error = refusal(encode(MessageType.REQUEST, b"echo", b""), limits)
    assert (error.problem, error.field, error.length, error.limit) == (FrameProblem.TOO_LONG, Field.NAME, 4, 3)
    # The payload header says 257 bytes; none follow, and none are needed to refuse it.
    error = refusal(b"\x93\x04\xc4\x01x\xc5\x01\x01", limits)
    assert (error.problem, error.field, error.length, error.limit) == (FrameProblem.TOO_LONG, Field.PAYLOAD, 257, 256)
    assert str(error) == "payload of 257 bytes is over the limit of 256 bytes"
    # Exactly at the limit is fine.
    assert read_one(encode(MessageType.RESPONSE, b"x", bytes(256)), limits) is not None


def test_an_end_of_stream_mid_tuple_names_the_stage() -> None:
    whole = encode(MessageType.RESPONSE, b"name", b"\1" * 300)
    expected = [
        (1, "message type"),
        (2, "name length"),
        (3, "name length"),
        (5, "name"),
        (8, "payload length"),
        (10, "payload length"),
        (11, "payload"),
        (len(whole) - 1, "payload"),
    ]
    for cut, stage in expected:
        error = refusal(whole[:cut])
        assert (error.problem, error.stage) == (FrameProblem.UNEXPECTED_EOF, stage), f"cut at {cut}"
    uint8_type = b"\x93\xcc"
    assert refusal(uint8_type).stage == "message type"
    bin32_cut = b"\x93\x01\xc6\x00\x00"
    assert refusal(bin32_cut).stage == "name length"
