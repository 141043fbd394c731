"""The stdio corpus of bad lines (`vectors/jsonrpc`: every case the receiver answers
with an error) replayed over the network against the served echo agent, each case as
one POST body and as one WebSocket text frame, after `initialize`. The answers are the
stdio ones (same error code, same id) and the connection goes on. The one difference by
design: a batch POSTed is refused with 501 (the RFD), not answered with -32600. Cases
given as base64 (invalid UTF-8) are left out: a text frame cannot carry them, and as a
body they are the framing case stdio covers. The same files the Rust test reads.

The agent runs with `AcpOptions.check_duplicate_keys` on: on stdio too, the repeated-key
cases are answered -32600 only with that guard (see `test_vectors_connection`)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import msgspec

from agentproto.acp import AcpOptions
from agentproto.acp.remote import ServerLimits, agent_app
from agentproto.acp.remote.http1 import CookieJar, Endpoint
from agentproto.acp.remote.websocket import handshake
from agentproto.examples.echo_agent import EchoAgent
from tests.acp.remote_peers import INITIALIZE, JSON, exchange, open_raw_stream, serving
from tests.vector_files import VECTORS

WAIT = 10.0
ALIVE = b'{"jsonrpc":"2.0","id":"alive","method":"session/new","params":{"cwd":"/","mcpServers":[]}}'


@dataclass(frozen=True)
class Case:
    id: str
    message: bytes
    code: int
    reply_id: Any


def corpus() -> list[Case]:
    """Every `reply_error` case of `vectors/jsonrpc` that is text, sorted by path."""
    cases = []
    for path in sorted((VECTORS / "jsonrpc").rglob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        expect = case["expect"]
        if expect["outcome"] != "reply_error":
            continue
        if isinstance(case.get("input_text"), str):
            message = case["input_text"].removesuffix("\n")
        elif "input" in case:
            message = json.dumps(case["input"], separators=(",", ":"), ensure_ascii=False)
        else:
            continue  # base64: see the module documentation
        cases.append(Case(case["id"], message.encode(), expect["error"]["code"], expect["id"]))
    assert len(cases) > 40, f"the corpus was not found: {len(cases)}"
    return cases


def app() -> object:
    options = AcpOptions(check_duplicate_keys=True)
    return agent_app(lambda: EchoAgent(0.0), options, ServerLimits())


def mismatch(case: Case, answer: bytes | None) -> str | None:
    """Why `answer` is not the error the case expects; None when it is."""
    if answer is None:
        return f"{case.id}: no answer"
    try:
        decoded = msgspec.json.decode(answer)
    except msgspec.DecodeError:
        return f"{case.id}: not JSON: {answer!r}"
    error = decoded.get("error") if isinstance(decoded, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if code != case.code or "id" not in decoded or decoded["id"] != case.reply_id:
        return f"{case.id}: expected {case.code} with id {case.reply_id!r}, got {answer!r}"
    return None


def is_batch(message: bytes) -> bool:
    return message.lstrip().startswith(b"[")


async def test_the_bad_line_corpus_over_http_posts() -> None:
    async with serving(app()) as url:
        response, _ = await exchange(url, "POST", [JSON], INITIALIZE)
        assert response.status == 200
        connection = response.header("acp-connection-id")
        assert connection
        stream = await open_raw_stream(url, [("Acp-Connection-Id", connection)])
        failures = []
        try:
            for case in corpus():
                sent, _ = await exchange(url, "POST", [JSON, ("Acp-Connection-Id", connection)], case.message)
                if is_batch(case.message):
                    if sent.status != 501:
                        failures.append(f"{case.id}: a batch POSTed got {sent.status}, not 501")
                    continue
                assert sent.status == 202, case.id
                failure = mismatch(case, await asyncio.wait_for(stream.next(), WAIT))
                if failure:
                    failures.append(failure)
            # The connection is still there.
            sent, _ = await exchange(url, "POST", [JSON, ("Acp-Connection-Id", connection)], ALIVE)
            assert sent.status == 202
            assert b'"sessionId"' in await asyncio.wait_for(stream.next(), WAIT)
        finally:
            stream.close()
        assert not failures, "\n".join(failures)


async def test_the_bad_line_corpus_over_websocket_frames() -> None:
    async with serving(app()) as url:
        socket, response = await handshake(Endpoint.parse(url), [], CookieJar(), 1 << 20)
        assert response.status == 101
        failures = []
        try:
            socket.send_text(INITIALIZE)
            assert b"protocolVersion" in (await asyncio.wait_for(socket.receive(), WAIT) or b"")
            for case in corpus():
                socket.send_text(case.message)
                failure = mismatch(case, await asyncio.wait_for(socket.receive(), WAIT))
                if failure:
                    failures.append(failure)
            socket.send_text(ALIVE)
            assert b'"sessionId"' in (await asyncio.wait_for(socket.receive(), WAIT) or b"")
        finally:
            await socket.close()
        assert not failures, "\n".join(failures)
