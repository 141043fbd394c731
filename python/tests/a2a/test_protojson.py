"""The ProtoJSON readings of the A2A runtime (`agentproto.a2a._protojson`) and the codec
built on them: each leniency of vectors/README.md "The decoding model (ProtoJSON, A2A
1.0.1)" and each refusal, with its kind, on both decode paths."""

from __future__ import annotations

import pytest

from agentproto.a2a import decode, encode, v1
from agentproto.a2a._protojson import bytes_of_base64, timestamp, timestamp_text
from agentproto.codec.errors import DecodeError
from agentproto.codec.kind import DecodeErrorKind

PATHS = [True, False]


def failure(type_name: str, text: str, fast: bool) -> DecodeError:
    with pytest.raises(DecodeError) as caught:
        decode(type_name, text.encode(), "$", fast=fast)
    return caught.value


@pytest.mark.parametrize("fast", PATHS)
@pytest.mark.parametrize(
    ("given", "read"), [("5", 5), ('"5"', 5), ("1e1", 10), ('"1e1"', 10), ('"-2.0"', -2), ("3.0", 3)]
)
def test_int32_reads_integral_numbers_and_strings(given: str, read: int, fast: bool) -> None:
    request = decode("ListTasksRequest", f'{{"pageSize":{given}}}'.encode(), fast=fast)
    assert request.page_size == read


@pytest.mark.parametrize("fast", PATHS)
@pytest.mark.parametrize("given", ["1.5", '"1.5"', "2147483648", '"0x10"', '"five"', '"+1"', '""'])
def test_int32_refuses_anything_else_as_out_of_range(given: str, fast: bool) -> None:
    e = failure("ListTasksRequest", f'{{"pageSize":{given}}}', fast)
    assert (e.path, e.kind) == ("$.pageSize", DecodeErrorKind.OUT_OF_RANGE)


def test_int32_of_the_wrong_json_type_is_wrong_type() -> None:
    e = failure("ListTasksRequest", '{"pageSize":true}', fast=False)
    assert e.kind is DecodeErrorKind.WRONG_TYPE


@pytest.mark.parametrize(
    ("text", "raw"), [("aGk=", b"hi"), ("aGk", b"hi"), ("-_8=", b"\xfb\xff"), ("-_8", b"\xfb\xff"), ("", b"")]
)
def test_base64_in_both_alphabets_padded_or_not(text: str, raw: bytes) -> None:
    assert bytes_of_base64(text) == raw


@pytest.mark.parametrize("text", ["a", "aGk==", "a+_b", "not base64!", "aG=k"])
def test_base64_refusals(text: str) -> None:
    assert bytes_of_base64(text) is None


def test_bytes_are_written_as_padded_standard_base64() -> None:
    part = decode("Part", b'{"raw":"-_8"}')
    assert encode(part) == b'{"raw":"+/8="}'


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("2026-01-02T03:04:05Z", "2026-01-02T03:04:05.000Z"),
        ("2026-01-02t03:04:05.1z", "2026-01-02T03:04:05.100Z"),
        ("2026-01-02T03:04:05.123456789+02:30", "2026-01-02T00:34:05.123Z"),
        ("2026-01-01T00:30:00-01:00", "2026-01-01T01:30:00.000Z"),
        ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"),
    ],
)
def test_timestamps_are_rewritten_in_utc_with_milliseconds(text: str, canonical: str) -> None:
    assert timestamp_text(text) == canonical
    assert timestamp(text) == canonical


@pytest.mark.parametrize(
    "text",
    [
        "2026-02-30T00:00:00Z",
        "2026-01-02T03:04:05",
        "2026-01-02 03:04:05Z",
        "2026-01-02T24:00:00Z",
        "2026-01-02T03:04:05.Z",
    ],
)
def test_timestamp_refusals(text: str) -> None:
    assert timestamp_text(text) is None
    with pytest.raises(ValueError):
        timestamp(text)


def test_a_timestamp_of_a_second_already_checked_is_still_checked_in_full() -> None:
    assert timestamp("2026-01-02T03:04:05.123Z") == "2026-01-02T03:04:05.123Z"
    # Same second: the milliseconds are checked, nothing else is taken on trust.
    assert timestamp("2026-01-02T03:04:05.999Z") == "2026-01-02T03:04:05.999Z"
    for wrong in ("2026-01-02T03:04:05.12xZ", "2026-01-02T03:04:05.12\u0663Z", "2026-01-02T03:04:05.123X"):
        with pytest.raises(ValueError):
            timestamp(wrong)
    assert timestamp("2026-01-02T03:04:05.5+01:00") == "2026-01-02T02:04:05.500Z"
    with pytest.raises(ValueError):
        timestamp("2026-02-30T03:04:05.123Z")
    assert timestamp("2026-01-02T03:04:06.000Z") == "2026-01-02T03:04:06.000Z"


@pytest.mark.parametrize("fast", PATHS)
def test_enum_by_name_or_number_written_by_name(fast: bool) -> None:
    status = decode("TaskStatus", b'{"state":3}', fast=fast)
    assert status.state is v1.TaskState.COMPLETED
    assert encode(status) == b'{"state":"TASK_STATE_COMPLETED"}'


@pytest.mark.parametrize("fast", PATHS)
def test_enum_zero_and_unknown_values_are_not_listed(fast: bool) -> None:
    for given in ('"TASK_STATE_UNSPECIFIED"', "0", "9", '"DONE"'):
        e = failure("TaskStatus", f'{{"state":{given}}}', fast)
        assert (e.path, e.kind) == ("$.state", DecodeErrorKind.NOT_LISTED)


def test_enum_of_the_wrong_json_type() -> None:
    e = failure("TaskStatus", '{"state":1.5}', fast=False)
    assert (e.kind, e.expected) == (DecodeErrorKind.WRONG_TYPE, "an enum value name or number")


@pytest.mark.parametrize("fast", PATHS)
def test_proto_names_and_nulls(fast: bool) -> None:
    message = decode(
        "Message",
        b'{"message_id":"m","role":"ROLE_USER","parts":[{"text":"x","media_type":null}],"context_id":null}',
        fast=fast,
    )
    assert (message.message_id, message.context_id, message.parts[0].media_type) == ("m", "", "")
    assert encode(message) == b'{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}'


def test_a_name_and_its_proto_name_together_are_a_repeated_key() -> None:
    e = failure("Message", '{"messageId":"a","message_id":"b","role":1,"parts":[{"text":"x"}]}', fast=False)
    assert (e.path, e.kind) == ("$.message_id", DecodeErrorKind.REPEATED_KEY)


def test_a_value_member_holds_null_as_a_value() -> None:
    part = decode("Part", b'{"data":null}')
    assert encode(part) == b'{"data":null}'
    e = failure("Part", '{"data":null,"text":"x"}', fast=False)
    assert (e.path, e.kind) == ("$.text", DecodeErrorKind.ONE_OF_TWICE)


def test_keyed_union_reads_its_alias_and_needs_one_member() -> None:
    event = decode("StreamResponse", b'{"status_update":{"taskId":"t","contextId":"c","status":{"state":2}}}')
    assert event.status_update.task_id == "t"
    e = failure("StreamResponse", "{}", fast=False)
    assert (e.path, e.kind) == ("$", DecodeErrorKind.MISSING_ONE_OF)
    assert e.expected == 'one of the fields "task", "message", "statusUpdate", "artifactUpdate"'


def test_constructed_values_are_checked() -> None:
    with pytest.raises(ValueError):
        v1.Part()
    with pytest.raises(ValueError):
        v1.Part(text="a", url="b")
    with pytest.raises(ValueError):
        v1.TaskStatus(state=v1.TaskState.WORKING, timestamp="yesterday")
    status = v1.TaskStatus(state=v1.TaskState.WORKING, timestamp="2026-01-02T03:04:05+01:00")
    assert status.timestamp == "2026-01-02T02:04:05.000Z"


def test_not_json_is_its_own_kind() -> None:
    e = failure("Task", '{"id":', fast=True)
    assert (e.path, e.kind) == ("$", DecodeErrorKind.NOT_JSON)
