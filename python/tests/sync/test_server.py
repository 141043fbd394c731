"""`Server` over in-memory streams: what it answers, and how a client that breaks the
protocol ends the serving loop."""

from __future__ import annotations

import io

import pytest

from agentproto.sync import (
    ChannelBroken,
    EndedDuringCall,
    FrameError,
    HandlerError,
    Limits,
    MessageType,
    NameMismatch,
    Peer,
    Server,
    UnexpectedMessage,
)
from agentproto.sync.frame import FrameReader, encode

Written = tuple[MessageType, str, bytes]


def tuples(*parts: tuple[MessageType, str, bytes]) -> bytes:
    return b"".join(encode(kind, name.encode(), payload) for kind, name, payload in parts)


def serve(server: Server, data: bytes) -> tuple[BaseException | None, list[Written]]:
    output = io.BytesIO()
    outcome: BaseException | None = None
    try:
        server.serve(io.BufferedReader(io.BytesIO(data)), output)
    except Exception as error:  # noqa: BLE001 - the outcome is what the test checks
        outcome = error
    reader = FrameReader(io.BufferedReader(io.BytesIO(output.getvalue())))
    written: list[Written] = []
    while (frame := reader.read()) is not None:
        written.append((frame.kind, frame.name.decode(), bytes(frame.payload)))
    return outcome, written


def ask(peer: Peer, payload: memoryview) -> bytes:
    """Calls the client's `question` with the payload; answers `answer: ...` and the
    request's own payload, which must have survived the callback."""
    request = bytes(payload)
    answer = bytes(peer.call("question", payload))
    assert bytes(payload) == request
    return b"answer: " + answer


def asking_server(limits: Limits | None = None) -> Server:
    return Server(limits).handle("ask", ask)


def test_requests_and_callback_answers_are_served_until_end_of_input() -> None:
    data = tuples(
        (MessageType.REQUEST, "ask", b"why"),
        (MessageType.CALL_RESPONSE, "question", b"because of a much longer answer than the question"),
        (MessageType.REQUEST, "ask", b"who"),
        (MessageType.CALL_ERROR, "question", b"cannot say"),
        (MessageType.REQUEST, "ask", b"when"),
        (MessageType.CALL_RESPONSE, "question", b"now"),
    )
    outcome, written = serve(asking_server(), data)
    assert outcome is None
    assert written == [
        (MessageType.CALL, "question", b"why"),
        (MessageType.RESPONSE, "ask", b"answer: because of a much longer answer than the question"),
        (MessageType.CALL, "question", b"who"),
        (MessageType.ERROR, "ask", b"client error: cannot say"),
        (MessageType.CALL, "question", b"when"),
        (MessageType.RESPONSE, "ask", b"answer: now"),
    ]


def raises(peer: Peer, payload: memoryview) -> None:
    raise KeyError("missing")


def refuses(peer: Peer, payload: memoryview) -> None:
    raise HandlerError("refused: " + bytes(payload).decode())


def nothing(peer: Peer, payload: memoryview) -> None:
    return None


def test_handler_failures_unknown_methods_and_empty_results() -> None:
    server = Server().handle("raises", raises).handle("refuses", refuses).handle("nothing", nothing)
    data = tuples(
        (MessageType.REQUEST, "raises", b""),
        (MessageType.REQUEST, "refuses", b"x"),
        (MessageType.REQUEST, "nope", b""),
        (MessageType.REQUEST, "nothing", b"ignored"),
    )
    outcome, written = serve(server, data)
    assert outcome is None
    assert written == [
        (MessageType.ERROR, "raises", b"handler `raises` panicked: 'missing'"),
        (MessageType.ERROR, "refuses", b"refused: x"),
        (MessageType.ERROR, "nope", b"unknown method `nope`"),
        (MessageType.RESPONSE, "nothing", b""),
    ]


def test_a_tuple_other_than_a_request_between_requests_ends_serving() -> None:
    outcome, written = serve(asking_server(), tuples((MessageType.CALL_RESPONSE, "question", b"early")))
    assert isinstance(outcome, UnexpectedMessage)
    assert (outcome.kind, outcome.name) == (MessageType.CALL_RESPONSE, "question")
    assert written == []


def test_a_callback_answer_with_another_name_ends_serving_without_an_answer() -> None:
    data = tuples((MessageType.REQUEST, "ask", b"x"), (MessageType.CALL_RESPONSE, "other", b"y"))
    outcome, written = serve(asking_server(), data)
    assert isinstance(outcome, NameMismatch)
    assert (outcome.expected, outcome.found) == ("question", "other")
    assert len(written) == 1, f"only the call was written: {written}"


def test_a_new_request_during_a_callback_ends_serving() -> None:
    data = tuples((MessageType.REQUEST, "ask", b"x"), (MessageType.REQUEST, "ask", b"y"))
    outcome, _ = serve(asking_server(), data)
    assert isinstance(outcome, UnexpectedMessage) and outcome.kind is MessageType.REQUEST


def test_end_of_input_during_a_callback_is_reported() -> None:
    outcome, _ = serve(asking_server(), tuples((MessageType.REQUEST, "ask", b"x")))
    assert isinstance(outcome, EndedDuringCall) and outcome.name == "question"


def swallowing(peer: Peer, payload: memoryview) -> bytes:
    """Catches the broken channel and tries again: neither call reaches the wire twice."""
    try:
        peer.call("question", b"1")
    except ChannelBroken:
        pass
    with pytest.raises(ChannelBroken):
        peer.call("question", b"2")
    return b"never sent"


def test_a_handler_that_swallows_a_broken_channel_still_ends_serving() -> None:
    outcome, written = serve(Server().handle("ask", swallowing), tuples((MessageType.REQUEST, "ask", b"")))
    assert isinstance(outcome, EndedDuringCall)
    assert written == [(MessageType.CALL, "question", b"1")]


def test_a_malformed_tuple_ends_serving_with_a_frame_error() -> None:
    outcome, _ = serve(asking_server(), b"\x93\x01\xa3ask")
    assert isinstance(outcome, FrameError)


def test_requests_over_the_limit_are_refused() -> None:
    server = asking_server(Limits(max_name=64, max_payload=4))
    outcome, _ = serve(server, tuples((MessageType.REQUEST, "ask", b"12345")))
    assert isinstance(outcome, FrameError) and outcome.length == 5


def wrong_type(peer: Peer, payload: memoryview) -> str:
    return "text, not bytes"


KEPT: list[Peer] = []


def keeps_its_peer(peer: Peer, payload: memoryview) -> None:
    KEPT.append(peer)


def test_a_result_of_the_wrong_type_is_an_error_tuple_and_serving_goes_on() -> None:
    server = Server().handle("wrong", wrong_type).handle("ok", nothing)  # type: ignore[arg-type]
    outcome, written = serve(server, tuples((MessageType.REQUEST, "wrong", b""), (MessageType.REQUEST, "ok", b"")))
    assert outcome is None
    assert written == [
        (
            MessageType.ERROR,
            "wrong",
            b"handler `wrong` panicked: returned str, not bytes, bytearray, memoryview or None",
        ),
        (MessageType.RESPONSE, "ok", b""),
    ]


def test_a_peer_cannot_call_back_after_its_request() -> None:
    KEPT.clear()
    outcome, _ = serve(Server().handle("keep", keeps_its_peer), tuples((MessageType.REQUEST, "keep", b"")))
    assert outcome is None
    with pytest.raises(RuntimeError, match="only during its own request"):
        KEPT[0].call("question", b"late")
