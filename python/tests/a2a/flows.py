"""The A2A flows (`vectors/a2a/v1/flows/`, format in `vectors/README.md`, "A2A flows")
against a fresh Python server running the scripted executor, on one binding.

Requests are built as a client of the binding builds them (`agentproto.a2a.client.wire`)
and sent over the SDK's HTTP/1.1 client; answers and stream events are matched as raw
JSON against the flow's patterns. Every wait is bounded (`BOUND`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agentproto.a2a.client.http import HttpClient, HttpResponse
from agentproto.a2a.client.wire import SseEvent, jsonrpc_body, read_sse, rest_request
from agentproto.a2a.executor import RequestContext, TaskUpdater
from agentproto.a2a.generated.v1 import Artifact, Operation, Part
from agentproto.a2a.server import ServerOptions, create_app
from agentproto.a2a.server.app import A2aApp
from tests.a2a.servers import BOUND, ServerThread
from tests.test_vectors import same

REST_PREFIX = "/a2a/rest"
Vars = dict[str, Any]


class ScriptedExecutor:
    """Acts on the first word of the message's text (vectors/README.md, "A2A flows")."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        word, _, rest = context.text().partition(" ")
        if word == "echo":
            await updater.working()
            await updater.add_artifact(Artifact(artifact_id="echo", parts=[Part(text=rest)]))
            await updater.complete()
        elif word == "wait":
            await updater.working()
            await updater.add_artifact(Artifact(artifact_id="progress", parts=[Part(text="started")]))
            await asyncio.Event().wait()  # until the cancel cancels this coroutine
        elif word == "ask":
            await updater.require_input()
        elif word == "reply":
            await updater.reply(updater.message([Part(text=rest)]))
        else:
            await updater.complete()


def make_app(base: str) -> A2aApp:
    from agentproto.a2a.demo import card

    return create_app(ScriptedExecutor(), card(base, REST_PREFIX), options=ServerOptions(rest_prefix=REST_PREFIX))


def _var(pattern: Any) -> str | None:
    if isinstance(pattern, str) and pattern.startswith("${") and pattern.endswith("}"):
        return pattern[2:-1]
    return None


def matches(pattern: Any, value: Any, vars: Vars, at: str = "$") -> None:
    """Matches `value` against `pattern`, binding variables; raises AssertionError."""
    if pattern == "$any":
        return
    name = _var(pattern)
    if name is not None:
        if name in vars:
            assert same(vars[name], value), f"{at}: ${{{name}}} is {vars[name]!r}, found {value!r}"
        else:
            vars[name] = value
        return
    if isinstance(pattern, dict):
        assert isinstance(value, dict), f"{at}: expected an object, found {value!r}"
        if "$one_of" in pattern:
            why = []
            for alternative in pattern["$one_of"]:
                trial = dict(vars)
                try:
                    matches(alternative, value, trial, at)
                except AssertionError as e:
                    why.append(str(e))
                    continue
                vars.update(trial)
                return
            raise AssertionError(f"{at}: no alternative matches: {'; '.join(why)}")
        for key, member in pattern.items():
            if key == "$partial":
                continue
            if member == "$absent":
                assert key not in value, f"{at}.{key}: expected absent, found {value.get(key)!r}"
                continue
            assert key in value, f"{at}: member {key} missing in {value!r}"
            matches(member, value[key], vars, f"{at}.{key}")
        if pattern.get("$partial") is not True:
            extra = [k for k in value if k not in pattern]
            assert not extra, f"{at}: unexpected members {extra} in {value!r}"
        return
    if isinstance(pattern, list):
        assert isinstance(value, list) and len(value) == len(pattern), f"{at}: expected {pattern!r}, found {value!r}"
        for i, (p, v) in enumerate(zip(pattern, value, strict=True)):
            matches(p, v, vars, f"{at}[{i}]")
        return
    assert same(pattern, value), f"{at}: expected {pattern!r}, found {value!r}"


def substitute(value: Any, vars: Vars) -> Any:
    name = _var(value)
    if name is not None:
        assert name in vars, f"${{{name}}} is not bound"
        return vars[name]
    if isinstance(value, list):
        return [substitute(v, vars) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, vars) for k, v in value.items()}
    return value


def _reason(details: Any) -> Any:
    if isinstance(details, list):
        return next((d["reason"] for d in details if isinstance(d, dict) and "reason" in d), None)
    return None


def answer(binding: str, status: int, body: Any) -> dict[str, Any]:
    """An answer as flows see it."""
    if binding == "jsonrpc":
        if "error" in body:
            return {"error": {"code": body["error"]["code"], "reason": _reason(body["error"].get("data"))}}
        return {"result": body.get("result")}
    if status != 200:
        return {"error": {"http_status": status, "reason": _reason(body["error"].get("details"))}}
    return {"result": body}


class Stream:
    def __init__(self, binding: str, response: HttpResponse) -> None:
        self.binding = binding
        self.response = response
        self.events: AsyncIterator[SseEvent] = read_sse(response.chunks()).__aiter__()

    async def next(self) -> dict[str, Any] | None:
        async with asyncio.timeout(BOUND):
            event = await anext(self.events, None)
        if event is None:
            return None
        out: dict[str, Any] = {}
        if event.id is not None:
            out["id"] = event.id
        if event.event is not None:
            out["event"] = event.event
        payload = json.loads(event.data)
        if self.binding == "rest" and event.event == "error":
            out["error"] = {"reason": _reason(payload["error"].get("details"))}
        else:
            out.update(answer(self.binding, 200, payload))
        return out

    async def close(self) -> None:
        self.response.close()
        await self.events.aclose()  # type: ignore[attr-defined]


class Runner:
    def __init__(self, base: str, binding: str) -> None:
        self.base = base
        self.binding = binding
        self.http = HttpClient()
        self.ids = 0
        self.streams: dict[str, Stream] = {}
        self.vars: Vars = {}

    async def send(self, operation: str, params: Any, extra: dict[str, str]) -> HttpResponse:
        op = Operation(operation)
        headers = {"A2A-Version": "1.0", "Content-Type": "application/json", **extra}
        if self.binding == "jsonrpc":
            self.ids += 1
            body: bytes | None = jsonrpc_body(op, self.ids, json.dumps(params).encode())
            method, url = "POST", self.base + "/"
        else:
            method, target, body = rest_request(op, params)
            url = self.base + REST_PREFIX + target
        async with asyncio.timeout(BOUND):
            return await self.http.request(method, url, headers, body)

    async def plain(self, response: HttpResponse) -> dict[str, Any]:
        async with asyncio.timeout(BOUND):
            body = json.loads(await response.read())
        return answer(self.binding, response.status, body)

    async def step(self, step: dict[str, Any]) -> None:
        ((kind, spec),) = step.items()
        if kind == "call":
            response = await self.send(spec["operation"], substitute(spec["params"], self.vars), {})
            matches(spec["expect"], await self.plain(response), self.vars)
        elif kind in ("open", "open_refused"):
            extra = {"Accept": "text/event-stream"}
            if "last_event_id" in spec:
                extra["Last-Event-ID"] = str(substitute(spec["last_event_id"], self.vars))
            response = await self.send(spec["operation"], substitute(spec["params"], self.vars), extra)
            is_sse = (response.header("content-type") or "").startswith("text/event-stream")
            if kind == "open":
                assert is_sse, f"{spec['operation']} answered {response.status} {await response.read()!r}, not a stream"
                self.streams[spec["stream"]] = Stream(self.binding, response)
                return
            if not is_sse:
                matches(spec["expect"], await self.plain(response), self.vars)
                return
            stream = Stream(self.binding, response)
            first = await stream.next()
            assert first is not None and await stream.next() is None, "a refused stream holds one error event"
            matches(spec["expect"], {"error": first.get("error")}, self.vars)
        elif kind == "events":
            stream = self.streams[spec["stream"]]
            for i, pattern in enumerate(spec["expect"]):
                event = await stream.next()
                assert event is not None, f"the stream {spec['stream']} ended before event {i}"
                matches(pattern, event, self.vars, f"{spec['stream']}[{i}]")
        elif kind == "ended":
            event = await self.streams[spec["stream"]].next()
            assert event is None, f"the stream {spec['stream']} goes on: {event!r}"
        elif kind == "close":
            await self.streams.pop(spec["stream"]).close()
        else:
            raise AssertionError(f"unknown step {kind}")

    async def close(self) -> None:
        for stream in self.streams.values():
            await stream.close()
        await self.http.close()


def run_flow(path: Path, binding: str) -> None:
    """Runs one flow on one binding against a fresh server; raises AssertionError."""
    flow = json.loads(path.read_text(encoding="utf-8"))
    with ServerThread(make_app) as server:

        async def steps() -> None:
            runner = Runner(server.base, binding)
            try:
                for i, step in enumerate(flow["steps"]):
                    try:
                        await runner.step(step)
                    except AssertionError as e:
                        raise AssertionError(f"step {i} {json.dumps(step)[:200]}: {e}") from None
            finally:
                await runner.close()

        asyncio.run(steps())
