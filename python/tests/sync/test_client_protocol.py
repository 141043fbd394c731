"""The client against scripted servers that break the protocol: each is a shell that
prints fixed bytes and then waits for its stdin to close (or exits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproto.sync import (
    ChildExited,
    Client,
    FrameError,
    FrameProblem,
    MessageType,
    NameMismatch,
    ProtocolError,
    ServerError,
    SyncError,
    UnexpectedMessage,
)
from agentproto.sync.frame import encode
from tests.sync.support import bounded, running


def request_against(script: str) -> SyncError | bytes:
    """Starts `sh -c script` as the server, sends one `echo` request, returns the outcome."""
    with bounded(Client.spawn(["sh", "-c", script])) as client:
        try:
            outcome: SyncError | bytes = client.request_bytes("echo", b"hi")
        except SyncError as error:
            outcome = error
        if not isinstance(outcome, bytes | ServerError):
            # The channel is unusable afterwards, says so at once, and the child is reaped.
            with pytest.raises(ChildExited):
                client.request("echo", b"")
            assert not running(client.pid)
        return outcome


def test_an_answer_for_another_method_is_a_name_mismatch() -> None:
    outcome = request_against(r"printf '\223\004\304\005other\304\000'; exec cat >/dev/null")
    assert isinstance(outcome, NameMismatch)
    assert (outcome.kind, outcome.expected, outcome.found) == (MessageType.RESPONSE, "echo", "other")
    assert str(outcome) == "RESPONSE names `other` while the answer for `echo` was expected"


def test_an_error_for_another_method_is_a_name_mismatch() -> None:
    outcome = request_against(r"printf '\223\005\304\005other\304\004boom'; exec cat >/dev/null")
    assert isinstance(outcome, NameMismatch) and outcome.kind is MessageType.ERROR


def test_a_request_from_the_server_is_unexpected() -> None:
    outcome = request_against(r"printf '\223\001\304\004echo\304\000'; exec cat >/dev/null")
    assert isinstance(outcome, UnexpectedMessage) and outcome.kind is MessageType.REQUEST


def test_a_call_response_from_the_server_is_unexpected() -> None:
    outcome = request_against(r"printf '\223\002\304\004echo\304\000'; exec cat >/dev/null")
    assert isinstance(outcome, UnexpectedMessage) and outcome.kind is MessageType.CALL_RESPONSE


def test_bytes_that_are_not_a_tuple_are_a_frame_error() -> None:
    outcome = request_against(r"printf 'hello'; exec cat >/dev/null")
    assert isinstance(outcome, FrameError) and isinstance(outcome, ProtocolError)
    assert (outcome.problem, outcome.found) == (FrameProblem.ARRAY_HEADER, ord("h"))


def test_an_error_tuple_carries_the_server_text() -> None:
    outcome = request_against(r"printf '\223\005\304\004echo\304\015no echo today'; exec cat >/dev/null")
    assert isinstance(outcome, ServerError) and outcome.text == "no echo today"


def test_a_server_that_exits_without_answering_reports_its_status() -> None:
    outcome = request_against("exit 7")
    assert isinstance(outcome, ChildExited) and outcome.status == 7


def test_a_server_that_dies_mid_tuple_reports_its_status() -> None:
    # The answer's payload announces 200 bytes; two arrive.
    outcome = request_against(r"printf '\223\004\304\004echo\304\310ab'; exit 5")
    assert isinstance(outcome, ChildExited) and outcome.status == 5


def test_a_call_to_an_unregistered_callback_is_answered_and_reading_goes_on(tmp_path: Path) -> None:
    answer = encode(MessageType.CALL_ERROR, b"readFile", b"unknown callback `readFile`")
    seen = tmp_path / "seen"
    # Reads the request (12 bytes), calls `readFile`, keeps the client's answer, then answers.
    script = (
        r"head -c 12 >/dev/null; printf '\223\006\304\010readFile\304\001x'; "
        f'head -c {len(answer)} >"{seen}"; '
        r"printf '\223\004\304\004echo\304\002ok'; exec cat >/dev/null"
    )
    with bounded(Client.spawn(["sh", "-c", script])) as client:
        assert client.request_bytes("echo", b"hi") == b"ok"
    assert seen.read_bytes() == answer
