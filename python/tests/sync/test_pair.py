"""The Python client against the test server of every language: Python (`python -m
agentproto.sync.fixture`), Rust (`agentproto-sync-fixture`, built by `cargo build -p
agentproto-sync --bins`) and TypeScript (`ts/src/sync/fixture.ts`, compiled with the `ts/`
package's compiler, run on node). Same methods, same answers, same texts."""

from __future__ import annotations

import io
import signal
import subprocess
from typing import cast

import pytest

from agentproto.sync import (
    CallbackError,
    ChildExited,
    Client,
    Limits,
    MessageType,
    ProtocolError,
    ServerError,
)
from agentproto.sync.frame import FrameReader, encode
from tests.sync.support import DEADLINE, ENV, FixtureServers, bounded, running

SIDES = ["python", "rust", "ts"]


def spawn(servers: FixtureServers, side: str, limits: Limits | None = None) -> Client:
    return Client.spawn(servers.command(side), env=ENV, limits=limits)


def server_error(client: Client, method: str, payload: bytes) -> str:
    with pytest.raises(ServerError) as caught:
        client.request(method, payload)
    return caught.value.text


@pytest.mark.parametrize("side", SIDES)
def test_echo_round_trips_every_bin_size_class(servers: FixtureServers, side: str) -> None:
    with bounded(spawn(servers, side)) as client:
        for length in (0, 1, 255, 256, 65_535, 65_536, 1 << 20):
            payload = bytes(index % 253 for index in range(length))
            assert client.request("echo", payload) == payload, f"length {length}"
        # A memoryview payload and a bytes copy of the result.
        assert client.request_bytes("echo", memoryview(b"view")) == b"view"
    # Closing closes stdin first: the server may exit by itself before the SIGKILL lands.
    assert client.returncode in (0, -signal.SIGKILL)
    assert not running(client.pid)


@pytest.mark.parametrize("side", SIDES)
def test_large_results_arrive_whole(servers: FixtureServers, side: str) -> None:
    with bounded(spawn(servers, side)) as client:
        result = client.request("repeat", b"3000000")
        assert result.nbytes == 3_000_000
        assert result == bytes(range(251)) * (3_000_000 // 251) + bytes(range(3_000_000 % 251))


@pytest.mark.parametrize("side", SIDES)
def test_callbacks_are_answered_mid_request_in_order(servers: FixtureServers, side: str) -> None:
    calls: list[bytes] = []

    def upper(payload: memoryview) -> bytes:
        calls.append(bytes(payload))
        return bytes(payload).upper() + f"#{len(calls)}".encode()

    def length(payload: memoryview) -> bytes:
        return str(payload.nbytes).encode()

    with bounded(spawn(servers, side)) as client:
        client.register_callback("upper", upper)
        client.register_callback("length", length)
        assert client.request_bytes("callback", b"upper\0abc\0length\0hello\0upper\0x") == b"ABC#1\x005\0X#2"
        # The registry outlives the request; a callback answering None answers empty.
        client.register_callback("nothing", lambda payload: None)
        assert client.request_bytes("callback", b"upper\0again\0nothing\0y") == b"AGAIN#3\0"


@pytest.mark.parametrize("side", SIDES)
def test_callback_failures_reach_the_server_as_call_errors(servers: FixtureServers, side: str) -> None:
    def refuse(payload: memoryview) -> bytes:
        raise CallbackError("not today")

    def explode(payload: memoryview) -> bytes:
        raise RuntimeError("callback blew up")

    with bounded(spawn(servers, side)) as client:
        client.register_callback("refuse", refuse)
        client.register_callback("explode", explode)
        assert server_error(client, "callback", b"refuse\0x") == "client error: not today"
        assert server_error(client, "callback", b"missing\0x") == "client error: unknown callback `missing`"
        text = server_error(client, "callback", b"explode\0x")
        assert text == "client error: callback `explode` panicked: callback blew up"
        client.register_callback("text", lambda payload: "not bytes")  # type: ignore[arg-type,return-value]
        text = server_error(client, "callback", b"text\0x")
        assert text == "client error: callback `text` panicked: returned str, not bytes, bytearray, memoryview or None"
        assert client.request_bytes("echo", b"fine") == b"fine"


@pytest.mark.parametrize("side", SIDES)
def test_handler_errors_panics_and_unknown_methods_become_error_tuples(servers: FixtureServers, side: str) -> None:
    with bounded(spawn(servers, side)) as client:
        assert server_error(client, "fail", b"no such file") == "no such file"
        assert server_error(client, "panic", b"") == "handler `panic` panicked: the fixture was asked to panic"
        assert server_error(client, "nope", b"") == "unknown method `nope`"
        assert server_error(client, "repeat", b"many") == "expected a decimal count"
        assert server_error(client, "callback", b"odd") == "expected name/argument pairs separated by NUL"
        assert client.request_bytes("echo", b"still serving") == b"still serving"


@pytest.mark.parametrize("side", SIDES)
def test_json_requests_encode_and_decode_through_msgspec(servers: FixtureServers, side: str) -> None:
    with bounded(spawn(servers, side)) as client:
        assert client.request_json("echo", {"a": [1, 2]}) == {"a": [1, 2]}
        assert client.request_json("echo", [1], list[int]) == [1]
        assert client.request_json("repeat", 0) is None, "an empty result is None"


@pytest.mark.parametrize("side", SIDES)
def test_a_server_exiting_mid_request_is_child_exited_with_its_status(servers: FixtureServers, side: str) -> None:
    with bounded(spawn(servers, side)) as client:
        with pytest.raises(ChildExited) as caught:
            client.request("exit", b"")
        assert caught.value.status == 3
        assert not running(client.pid)
        with pytest.raises(ChildExited):
            client.request("echo", b"")


@pytest.mark.parametrize("side", SIDES)
def test_a_killed_server_is_a_clean_error(servers: FixtureServers, side: str) -> None:
    with bounded(spawn(servers, side)) as client:
        assert client.request_bytes("echo", b"before") == b"before"
        client.kill()
        with pytest.raises(ChildExited) as caught:
            client.request("echo", b"x")
        assert caught.value.status == -signal.SIGKILL
        assert not running(client.pid)


@pytest.mark.parametrize("side", SIDES)
def test_a_response_larger_than_the_client_limit_is_a_protocol_error(servers: FixtureServers, side: str) -> None:
    with bounded(spawn(servers, side, Limits(max_name=64, max_payload=1000))) as client:
        assert client.request("repeat", b"1000").nbytes == 1000
        with pytest.raises(ProtocolError):
            client.request("repeat", b"1001")
        # The stream cannot be trusted after that: the channel is closed, the child reaped.
        with pytest.raises(ChildExited):
            client.request("echo", b"")
        assert not running(client.pid)


@pytest.mark.parametrize("side", SIDES)
def test_the_server_exits_cleanly_at_end_of_input(servers: FixtureServers, side: str) -> None:
    # Raw pipes rather than `Client`, to close stdin and watch the server go.
    process = subprocess.Popen(
        servers.command(side), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV, process_group=0
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(encode(MessageType.REQUEST, b"echo", b"bye"))
        process.stdin.close()
        status = process.wait(DEADLINE)
        reader = FrameReader(cast(io.BufferedReader, process.stdout))
        frame = reader.read()
        assert frame is not None and (frame.kind, frame.name, bytes(frame.payload)) == (
            MessageType.RESPONSE,
            b"echo",
            b"bye",
        )
        assert reader.read() is None, "nothing after the answer"
        assert status == 0
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
