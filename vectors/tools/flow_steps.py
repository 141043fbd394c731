"""The vocabulary the flow vectors are written in (vectors/README.md, "Flows"): the
flow registry, step builders, and the messages and setups both roles' flows share."""

from __future__ import annotations

from vectorlib import *  # noqa: F403
from fixtures import CWD

FLOWS: dict[str, dict] = {}

ANY = "$any"


def flow(name, requirement, description, role, setup, steps):
    fid = f"acp/v1/flows/{name}"
    assert fid not in FLOWS, fid
    assert requirement in REQUIREMENTS, (fid, requirement)
    assert role in ("agent", "client"), fid
    FLOWS[fid] = {
        "id": fid,
        "requirement": requirement,
        "description": description,
        "role": role,
        "setup": setup,
        "steps": steps,
    }


# patterns ----------------------------------------------------------------------------

def var(name):
    """A flow variable: bound by the first `expect` that meets it, substituted in `send`."""
    return "${" + name + "}"


def partial(obj):
    """An object pattern that also matches objects with more members."""
    return {**obj, "$partial": True}


def error(code, **data):
    """An error-object pattern: the code exactly, any message, and (when given) at least
    these members of `data`. Members beyond code/message/data are allowed."""
    e = {"code": code, "message": ANY}
    if data:
        e["data"] = partial(data)
    return partial(e)


# steps -------------------------------------------------------------------------------

def send(msg):
    return {"send": msg}


def expect(msg):
    return {"expect": msg}


def expect_unordered(*msgs):
    """The next len(msgs) lines, in any order (for answers of concurrent handlers)."""
    return {"expect_unordered": list(msgs)}


SILENCE = {"expect_silence": True}


def call(method, params=ABSENT):
    c = {"method": method}
    if params is not ABSENT:
        c["params"] = params
    return {"call": c}


def call_ok(method, value):
    return {"expect_call": {"method": method, "ok": value}}


def call_error(method, err):
    return {"expect_call": {"method": method, "error": err}}


def call_local(method, variant):
    return {"expect_call": {"method": method, "local_error": variant}}


# messages ----------------------------------------------------------------------------

def text_prompt(sid, text, id):
    return req("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}, id=id)


def chunk(sid, text):
    return notif("session/update", {"sessionId": sid, "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}})


def stop(id, reason):
    return resp(id, {"stopReason": reason})


def new_session_params():
    return {"cwd": CWD, "mcpServers": []}


PERMISSION_OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def permission_request(id, sid):
    return req("session/request_permission", {"sessionId": sid, "toolCall": {"toolCallId": "call-1"},
                                              "options": PERMISSION_OPTIONS}, id=id)


def seen(method, sid, **extra):
    """What the client test app reports when its handler saw something."""
    return notif("_test/seen", {"method": method, "sessionId": sid, **extra})


# the agent under test (the flow plays the client) --------------------------------------

def a_init(id=0, client_caps=None, version=1):
    params = {"protocolVersion": version, "clientCapabilities": client_caps or {}}
    return [send(req("initialize", params, id=id)),
            expect(resp(id, partial({"protocolVersion": 1})))]


def a_new(id, sid):
    return [send(req("session/new", new_session_params(), id=id)),
            expect(resp(id, partial({"sessionId": sid})))]


def a_ready(sessions=1, client_caps=None):
    """initialize (id 0) and `sessions` sessions (ids 1..n, named sess-1..sess-n)."""
    steps = a_init(client_caps=client_caps)
    for n in range(1, sessions + 1):
        steps += a_new(n, f"sess-{n}")
    return steps


def a_echo(id, sid, *words):
    """A prompt `echo …` that streams one chunk per word and ends the turn."""
    return ([send(text_prompt(sid, "echo " + " ".join(words), id))]
            + [expect(chunk(sid, w)) for w in words]
            + [expect(stop(id, "end_turn"))])


NO_CAPS = {"agentCapabilities": {}}

# A session's modes, as an agent announces them when it opens the session.
MODES = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]}
