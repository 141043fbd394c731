"""Flow vectors (vectors/acp/v1/flows/): message sequences that check the protocol-state
rules of the ACP roles through a real connection. Format: vectors/README.md, "Flows"."""

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


def build_agent_flows():
    R = "acp.state.initialize-first"
    flow("agent-request-before-initialize", R,
         "Requests before `initialize` (a baseline method, an extension request, invalid params, an unknown method) are answered -32600 and change nothing: `initialize` then succeeds and the same request is served.",
         "agent", NO_CAPS,
         [send(req("session/new", new_session_params(), id=1)),
          expect(err(1, error(-32600))),
          send(req("_test/echo", {"x": 1}, id=2)),
          expect(err(2, error(-32600))),
          send(req("session/new", {"cwd": 42}, id=5)),
          expect(err(5, error(-32600))),
          send(req("no/such/method", {}, id=6)),
          expect(err(6, error(-32600))),
          *a_init(id=3),
          *a_new(4, "sess-1")])
    flow("agent-notification-before-initialize", R,
         "Notifications before `initialize` (`session/cancel`, an extension notification) are dropped without any reply.",
         "agent", NO_CAPS,
         [send(notif("session/cancel", {"sessionId": "sess-1"})),
          send(notif("_test/note", {"x": 1})),
          SILENCE,
          *a_init(id=1),
          SILENCE])

    flow("agent-initialize-twice", "acp.state.initialize-once",
         "A second `initialize` on the same connection is answered -32600 and the connection keeps working.",
         "agent", NO_CAPS,
         [*a_init(id=0),
          send(req("initialize", {"protocolVersion": 1, "clientCapabilities": {}}, id=1)),
          expect(err(1, error(-32600))),
          *a_new(2, "sess-1")])

    flow("agent-initialize-failed-can-retry", "acp.state.initialize-once",
         "An `initialize` whose handler fails is answered with that error and does not count: the client may send `initialize` again and it succeeds.",
         "agent", NO_CAPS,
         [send(req("initialize", {"protocolVersion": 1, "clientInfo": {"name": "fail", "version": "1"}}, id=0)),
          expect(err(0, error(4242))),
          send(req("session/new", new_session_params(), id=1)),
          expect(err(1, error(-32600))),
          *a_init(id=2),
          *a_new(3, "sess-1")])
    flow("agent-initialize-panicked-can-retry", "acp.state.initialize-once",
         "An `initialize` whose handler panics is answered -32603 and, like a failed one, does not count: a second `initialize` succeeds.",
         "agent", NO_CAPS,
         [send(req("initialize", {"protocolVersion": 1, "clientInfo": {"name": "panic", "version": "1"}}, id=0)),
          expect(err(0, error(-32603))),
          *a_init(id=1),
          *a_new(2, "sess-1")])

    P = "acp.state.pipelining"
    flow("agent-pipelined-after-initialize", P,
         "`initialize`, `session/new`, a prompt for the session it creates and an extension request written without waiting for answers are all served: each waits for what was read before it.",
         "agent", NO_CAPS,
         [send(req("initialize", {"protocolVersion": 1, "clientCapabilities": {}}, id=0)),
          send(req("session/new", new_session_params(), id=1)),
          send(text_prompt("sess-1", "echo hi", 2)),
          send(req("_test/echo", {"x": 1}, id=3)),
          expect_unordered(resp(0, partial({"protocolVersion": 1})),
                           resp(1, partial({"sessionId": "sess-1"})),
                           chunk("sess-1", "hi"),
                           stop(2, "end_turn"),
                           resp(3, {"method": "_test/echo", "params": {"x": 1}}))])
    flow("agent-pipelined-after-failed-initialize", P,
         "A request written right after an `initialize` that fails waits for it and is answered -32600; a later `initialize` succeeds.",
         "agent", NO_CAPS,
         [send(req("initialize", {"protocolVersion": 1, "clientInfo": {"name": "fail", "version": "1"}}, id=0)),
          send(req("session/new", new_session_params(), id=1)),
          expect_unordered(err(0, error(4242)), err(1, error(-32600))),
          *a_init(id=2),
          *a_new(3, "sess-1")])

    V = "acp.state.version-negotiation"
    flow("agent-version-newer-answered-1", V,
         "A client that asks for protocolVersion 2 is answered with 1, the only version a v1 agent speaks (the test app echoes the requested number, so the role corrects it).",
         "agent", NO_CAPS,
         [*a_init(version=2), *a_new(1, "sess-1")])
    flow("agent-version-1-answered-1", V,
         "A client that asks for protocolVersion 1 is answered with 1.",
         "agent", NO_CAPS,
         [*a_init(version=1)])

    G = "acp.state.capability-gate"
    gated = [
        ("session/load", {"sessionId": "sess-9", "cwd": CWD, "mcpServers": []}, "agentCapabilities.loadSession"),
        ("session/list", {}, "agentCapabilities.sessionCapabilities.list"),
        ("session/delete", {"sessionId": "sess-9"}, "agentCapabilities.sessionCapabilities.delete"),
        ("session/resume", {"sessionId": "sess-9", "cwd": CWD}, "agentCapabilities.sessionCapabilities.resume"),
        ("session/close", {"sessionId": "sess-9"}, "agentCapabilities.sessionCapabilities.close"),
        ("logout", {}, "agentCapabilities.auth.logout"),
    ]
    steps = a_init()
    for n, (m, p, cap) in enumerate(gated, start=1):
        steps += [send(req(m, p, id=n)), expect(err(n, error(-32601, capability=cap)))]
    flow("agent-gates-not-advertised", G,
         "Each gated method the agent did not advertise (session/load, list, delete, resume, close, logout) is answered -32601 with data.capability naming the capability.",
         "agent", NO_CAPS, steps)
    C = "acp.state.content-gate"
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    hologram = {"type": "hologram", "frames": 3}
    http_server = {"type": "http", "name": "tools", "url": "https://example.invalid/mcp", "headers": []}

    def prompt_with(sid, id, *blocks):
        return req("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "echo ok"}, *blocks]}, id=id)

    flow("agent-prompt-content-not-advertised", C,
         "A prompt carrying an image the agent did not advertise, or a block type no schema lists, is answered -32602 at the offending block; the session stays usable.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(prompt_with("sess-1", 2, image)),
          expect(err(2, error(-32602, path="$.params.prompt[1]", found="image"))),
          send(prompt_with("sess-1", 3, hologram)),
          expect(err(3, error(-32602, path="$.params.prompt[1]", found="hologram"))),
          *a_echo(4, "sess-1", "still", "here")])
    flow("agent-prompt-content-advertised", C,
         "With promptCapabilities.image advertised, a prompt carrying an image is dispatched.",
         "agent", {"agentCapabilities": {"promptCapabilities": {"image": True}}},
         [*a_ready(),
          send(prompt_with("sess-1", 2, image)),
          expect(chunk("sess-1", "ok")),
          expect(stop(2, "end_turn"))])
    flow("agent-mcp-server-kind-not-advertised", C,
         "`session/new` with an HTTP MCP server when mcpCapabilities.http is not advertised is answered -32602 at that server; stdio servers are baseline.",
         "agent", NO_CAPS,
         [*a_init(),
          send(req("session/new", {"cwd": CWD, "mcpServers": [{"name": "local", "command": "/bin/true", "args": [], "env": []}, http_server]}, id=1)),
          expect(err(1, error(-32602, path="$.params.mcpServers[1]", found="http"))),
          *a_new(2, "sess-1")])

    M = "acp.state.session-gate"

    def set_mode(id, sid, mode="code"):
        return req("session/set_mode", {"sessionId": sid, "modeId": mode}, id=id)

    flow("agent-set-mode-without-modes", M,
         "`session/set_mode` for a session whose `session/new` answer carried no `modes` is answered -32602 at $.params.sessionId naming the session, before the application sees it; the session stays usable.",
         "agent", NO_CAPS,
         [*a_init(),
          send(req("session/new", new_session_params(), id=1)),
          expect(resp(1, {"sessionId": "sess-1"})),
          send(set_mode(2, "sess-1")),
          expect(err(2, error(-32602, path="$.params.sessionId", found="sess-1"))),
          *a_echo(3, "sess-1", "still", "here")])
    flow("agent-set-mode-with-modes", M,
         "`session/set_mode` for a session whose `session/new` answer carried `modes` is dispatched to the application.",
         "agent", {"agentCapabilities": {}, "modes": {"session/new": MODES}},
         [*a_init(),
          send(req("session/new", new_session_params(), id=1)),
          expect(resp(1, {"sessionId": "sess-1", "modes": MODES})),
          send(set_mode(2, "sess-1")),
          expect(resp(2, {}))])
    flow("agent-set-mode-after-load-with-modes", M,
         "A session created without `modes` and loaded again with an answer that carries them follows the latest answer: `session/set_mode` is refused -32602 before the load and dispatched after it.",
         "agent", {"agentCapabilities": {"loadSession": True}, "modes": {"session/load": MODES}},
         [*a_init(),
          send(req("session/new", new_session_params(), id=1)),
          expect(resp(1, {"sessionId": "sess-1"})),
          send(set_mode(2, "sess-1")),
          expect(err(2, error(-32602, path="$.params.sessionId", found="sess-1"))),
          send(req("session/load", {"sessionId": "sess-1", "cwd": CWD, "mcpServers": []}, id=3)),
          expect(resp(3, {"modes": MODES})),
          send(set_mode(4, "sess-1")),
          expect(resp(4, {}))])
    flow("agent-set-mode-pipelined-after-load", M,
         "`session/set_mode` written right after a `session/load` whose answer carries `modes`, before that answer, waits for the load and is dispatched: it is judged by the answer read before it, not by the earlier `session/new` answer without modes.",
         "agent", {"agentCapabilities": {"loadSession": True}, "modes": {"session/load": MODES}},
         [*a_init(),
          send(req("session/new", new_session_params(), id=1)),
          expect(resp(1, {"sessionId": "sess-1"})),
          send(req("session/load", {"sessionId": "sess-1", "cwd": CWD, "mcpServers": []}, id=2)),
          send(set_mode(3, "sess-1")),
          expect_unordered(resp(2, {"modes": MODES}), resp(3, {}))])

    flow("agent-gates-false-not-advertised", G,
         "Capabilities advertised as `false` (loadSession) or absent stay closed; only `true` or an object opens a gate.",
         "agent", {"agentCapabilities": {"loadSession": False, "sessionCapabilities": {}, "auth": {}}},
         [*a_init(),
          send(req("session/load", gated[0][1], id=1)),
          expect(err(1, error(-32601, capability="agentCapabilities.loadSession"))),
          send(req("session/list", {}, id=2)),
          expect(err(2, error(-32601, capability="agentCapabilities.sessionCapabilities.list")))])
    flow("agent-gate-load-session-advertised", G,
         "With loadSession advertised, `session/load` of a session this connection never saw is dispatched, and the loaded session can then be prompted.",
         "agent", {"agentCapabilities": {"loadSession": True}},
         [*a_init(),
          send(req("session/load", {"sessionId": "old-7", "cwd": CWD, "mcpServers": []}, id=1)),
          expect(resp(1, {})),
          *a_echo(2, "old-7", "again")])
    flow("agent-gate-session-list-advertised", G,
         "With sessionCapabilities.list advertised as `{}`, `session/list` is dispatched to the application.",
         "agent", {"agentCapabilities": {"sessionCapabilities": {"list": {}}}},
         [*a_init(),
          send(req("session/list", {}, id=1)),
          expect(resp(1, {"sessions": []}))])
    flow("agent-gate-logout-advertised", G,
         "With auth.logout advertised as `{}`, `logout` is dispatched to the application.",
         "agent", {"agentCapabilities": {"auth": {"logout": {}}}},
         [*a_init(),
          send(req("logout", {}, id=1)),
          expect(resp(1, {}))])
    flow("agent-gate-session-close-advertised", G,
         "With sessionCapabilities.close advertised, `session/close` is dispatched, and afterwards the closed session is unknown (-32002).",
         "agent", {"agentCapabilities": {"sessionCapabilities": {"close": {}}}},
         [*a_ready(),
          send(req("session/close", {"sessionId": "sess-1"}, id=2)),
          expect(resp(2, {})),
          send(text_prompt("sess-1", "echo gone", 3)),
          expect(err(3, error(-32002, sessionId="sess-1")))])

    flow("agent-gate-session-delete-advertised", G,
         "With sessionCapabilities.delete advertised, `session/delete` is dispatched, and afterwards the deleted session is unknown (-32002).",
         "agent", {"agentCapabilities": {"sessionCapabilities": {"delete": {}}}},
         [*a_ready(),
          send(req("session/delete", {"sessionId": "sess-1"}, id=2)),
          expect(resp(2, {})),
          send(text_prompt("sess-1", "echo gone", 3)),
          expect(err(3, error(-32002, sessionId="sess-1")))])
    flow("agent-gate-session-resume-advertised", G,
         "With sessionCapabilities.resume advertised, `session/resume` of a session this connection never saw is dispatched, and the resumed session can then be prompted.",
         "agent", {"agentCapabilities": {"sessionCapabilities": {"resume": {}}}},
         [*a_init(),
          send(req("session/resume", {"sessionId": "old-3", "cwd": CWD}, id=1)),
          expect(resp(1, {})),
          *a_echo(2, "old-3", "back")])
    flow("agent-close-cancels-running-turn", "acp.state.cancel-prompt",
         "`session/close` while a prompt turn runs in the session cancels the turn as `session/cancel` would: both the close result and the prompt's {\"stopReason\":\"cancelled\"} are sent (in either order).",
         "agent", {"agentCapabilities": {"sessionCapabilities": {"close": {}}}},
         [*a_ready(),
          send(text_prompt("sess-1", "wait", 2)),
          expect(chunk("sess-1", "waiting")),
          send(req("session/close", {"sessionId": "sess-1"}, id=3)),
          expect_unordered(resp(3, {}), stop(2, "cancelled")),
          SILENCE])

    U = "acp.state.unknown-session"
    flow("agent-unknown-session-prompt", U,
         "`session/prompt` naming a session the agent never created is answered -32002 with data.sessionId.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-404", "echo hi", 2)),
          expect(err(2, error(-32002, sessionId="sess-404")))])
    flow("agent-unknown-session-set-mode", U,
         "`session/set_mode` naming an unknown session is answered -32002 with data.sessionId before the application sees it.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(req("session/set_mode", {"sessionId": "sess-404", "modeId": "ask"}, id=2)),
          expect(err(2, error(-32002, sessionId="sess-404")))])
    flow("agent-unknown-session-cancel-ignored", U,
         "`session/cancel` naming an unknown session is a notification and is ignored without a reply; a known session is unaffected.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(notif("session/cancel", {"sessionId": "sess-404"})),
          SILENCE,
          *a_echo(2, "sess-1", "still", "fine")])

    flow("agent-one-prompt-per-session", "acp.state.one-prompt-per-session",
         "While a prompt turn runs in a session, a second `session/prompt` for it is answered -32600 with data.sessionId; another session prompts normally; once the first turn ended the session takes prompts again.",
         "agent", NO_CAPS,
         [*a_ready(sessions=2),
          send(text_prompt("sess-1", "wait", 3)),
          expect(chunk("sess-1", "waiting")),
          send(text_prompt("sess-1", "echo twice", 4)),
          expect(err(4, error(-32600, sessionId="sess-1"))),
          *a_echo(5, "sess-2", "other"),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          expect(stop(3, "cancelled")),
          *a_echo(6, "sess-1", "next")])

    C = "acp.state.cancel-prompt"
    flow("agent-cancel-ends-prompt", C,
         "`session/cancel` during a prompt turn ends it with the result {\"stopReason\":\"cancelled\"}, not an error.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "wait", 2)),
          expect(chunk("sess-1", "waiting")),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          expect(stop(2, "cancelled")),
          SILENCE])
    flow("agent-cancel-forces-stop-reason", C,
         "A handler that handles cancellation itself and returns `end_turn` after `session/cancel` still has its turn answered with stopReason `cancelled`.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "linger", 2)),
          expect(chunk("sess-1", "waiting")),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          expect(stop(2, "cancelled"))])
    flow("agent-cancel-forces-stop-reason-over-error", C,
         "A handler that handles cancellation itself and fails after `session/cancel` still has its turn answered with stopReason `cancelled`, never with an error.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "linger fail", 2)),
          expect(chunk("sess-1", "waiting")),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          expect(stop(2, "cancelled"))])
    flow("agent-cancel-right-after-prompt", C,
         "A `session/cancel` sent right after `session/prompt`, before the agent wrote anything for the turn, still cancels it: the prompt is answered {\"stopReason\":\"cancelled\"}.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "hang", 2)),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          expect(stop(2, "cancelled"))])
    flow("agent-cancel-only-that-session", C,
         "`session/cancel` ends the prompt turn of the session it names only; a turn running in another session goes on until it is cancelled itself.",
         "agent", NO_CAPS,
         [*a_ready(sessions=2),
          send(text_prompt("sess-1", "wait", 3)),
          expect(chunk("sess-1", "waiting")),
          send(text_prompt("sess-2", "wait", 4)),
          expect(chunk("sess-2", "waiting")),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          expect(stop(3, "cancelled")),
          SILENCE,
          send(notif("session/cancel", {"sessionId": "sess-2"})),
          expect(stop(4, "cancelled"))])
    flow("agent-cancel-idle-session", C,
         "`session/cancel` for a known session with no prompt turn running changes nothing: no reply, and the next prompt runs to `end_turn`.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          SILENCE,
          *a_echo(2, "sess-1", "fresh")])
    flow("agent-panic-ends-turn", C,
         "A prompt handler that panics is answered -32603 and its turn ends, so the session takes the next prompt.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "panic", 2)),
          expect(err(2, error(-32603))),
          *a_echo(3, "sess-1", "ok")])
    flow("agent-error-ends-turn", C,
         "A prompt handler error is answered with the handler's error object and ends the turn, so the session takes the next prompt.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "error", 2)),
          expect(err(2, error(4242, reason="test"))),
          *a_echo(3, "sess-1", "ok")])

    P = "acp.state.cancel-outgoing-requests"
    flow("agent-permission-answered", P,
         "Inside a turn the agent's `session/request_permission` resolves with the client's answer, and the turn continues.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "permission", 2)),
          expect(permission_request(var("perm"), "sess-1")),
          send(resp(var("perm"), {"outcome": {"outcome": "selected", "optionId": "allow"}})),
          expect(chunk("sess-1", "permission:allow")),
          expect(stop(2, "end_turn"))])
    flow("agent-cancel-during-permission", P,
         "`session/cancel` while the agent waits for a permission answer: the agent sends `$/cancel_request` for its own request, the call ends as cancelled, the turn ends with stopReason `cancelled`, and the client's late answer is ignored.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "permission", 2)),
          expect(permission_request(var("perm"), "sess-1")),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          expect(notif("$/cancel_request", {"requestId": var("perm")})),
          expect(chunk("sess-1", "permission:cancelled")),
          expect(stop(2, "cancelled")),
          send(err(var("perm"), {"code": -32800, "message": "Request cancelled"})),
          SILENCE])

    Q = "acp.state.cancel-request"
    flow("agent-cancel-request-prompt", Q,
         "`$/cancel_request` naming a pending `session/prompt` is answered -32800 for that request, and the session's turn is over (the next prompt is served).",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "wait", 2)),
          expect(chunk("sess-1", "waiting")),
          send(notif("$/cancel_request", {"requestId": 2})),
          expect(err(2, error(-32800))),
          *a_echo(3, "sess-1", "after")])
    flow("agent-cancel-request-unknown-id", Q,
         "`$/cancel_request` naming no pending request is ignored without a reply.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(notif("$/cancel_request", {"requestId": 99})),
          SILENCE])

    X = "acp.state.extensions"
    flow("agent-ext-unknown-request", X,
         "An extension request the agent does not handle is answered -32601.",
         "agent", NO_CAPS,
         [*a_init(),
          send(req("_vendor.example/unknown", {"x": 1}, id=1)),
          expect(err(1, error(-32601)))])
    flow("agent-ext-unknown-notification", X,
         "An extension notification the agent does not handle is ignored without a reply.",
         "agent", NO_CAPS,
         [*a_init(),
          send(notif("_vendor.example/unknown", {"x": 1})),
          SILENCE])
    flow("agent-ext-known-request", X,
         "A handled extension request reaches the application under its full name, leading underscore included, with its params unchanged.",
         "agent", NO_CAPS,
         [*a_init(),
          send(req("_test/echo", {"x": [1, "two"]}, id=1)),
          expect(resp(1, {"method": "_test/echo", "params": {"x": [1, "two"]}}))])

    flow("agent-invalid-params", "acp.state.invalid-params",
         "After `initialize`, a request whose params fail validation is answered -32602 with data.path, and the session is unaffected.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(req("session/prompt", {"sessionId": "sess-1", "prompt": "echo hi"}, id=2)),
          expect(err(2, error(-32602, path="$.params.prompt"))),
          *a_echo(3, "sess-1", "fine")])

    O = "acp.state.outgoing-capability-gate"
    flow("agent-outgoing-fs-not-advertised", O,
         "The agent application's call to `fs/read_text_file`, which the client did not advertise, fails locally (CapabilityNotAdvertised) and nothing is sent.",
         "agent", NO_CAPS,
         [*a_ready(),
          send(text_prompt("sess-1", "read /home/user/project/a.txt", 2)),
          expect(chunk("sess-1", "read:local:CapabilityNotAdvertised")),
          expect(stop(2, "end_turn"))])
    flow("agent-outgoing-fs-advertised", O,
         "With fs.readTextFile advertised, the agent application's `fs/read_text_file` is sent and resolves with the client's answer.",
         "agent", NO_CAPS,
         [*a_ready(client_caps={"fs": {"readTextFile": True}}),
          send(text_prompt("sess-1", "read /home/user/project/a.txt", 2)),
          expect(req("fs/read_text_file", {"sessionId": "sess-1", "path": "/home/user/project/a.txt"}, id=var("read"))),
          send(resp(var("read"), {"content": "hello"})),
          expect(chunk("sess-1", "read:hello")),
          expect(stop(2, "end_turn"))])


# the client under test (the flow plays the agent) --------------------------------------

AGENT_CAPS = {"loadSession": False}


def c_init(agent_caps=None, answer_version=1):
    return [call("initialize", {"protocolVersion": 1}),
            expect(req("initialize", partial({"protocolVersion": 1}), id=var("init"))),
            send(resp(var("init"), {"protocolVersion": answer_version, "agentCapabilities": agent_caps or {},
                                    "authMethods": []}))]


def c_ready(agent_caps=None, sid="s1"):
    return [*c_init(agent_caps),
            call_ok("initialize", partial({"protocolVersion": 1})),
            call("session/new", new_session_params()),
            expect(req("session/new", partial({"cwd": CWD}), id=var("new"))),
            send(resp(var("new"), {"sessionId": sid})),
            call_ok("session/new", partial({"sessionId": sid}))]


def client_setup(caps=None, permission=None):
    s = {"clientCapabilities": caps or {}}
    if permission is not None:
        s["permission"] = permission
    return s


def build_client_flows():
    R = "acp.state.initialize-first"
    flow("client-request-before-initialize", R,
         "Agent requests that arrive before the client called `initialize` are answered -32600.",
         "client", client_setup({"fs": {"readTextFile": True}}, "allow"),
         [send(req("fs/read_text_file", {"sessionId": "s1", "path": "/home/user/project/a.txt"}, id="a1")),
          expect(err("a1", error(-32600))),
          send(permission_request("a2", "s1")),
          expect(err("a2", error(-32600))),
          send(req("fs/read_text_file", {"path": 7}, id="a3")),
          expect(err("a3", error(-32600)))])
    flow("client-request-during-initialize", R,
         "An agent request that arrives while the client's `initialize` is still unanswered is answered -32600; `initialize` then completes.",
         "client", client_setup(permission="allow"),
         [call("initialize", {"protocolVersion": 1}),
          expect(req("initialize", partial({"protocolVersion": 1}), id=var("init"))),
          send(permission_request("a1", "s1")),
          expect(err("a1", error(-32600))),
          send(resp(var("init"), {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})),
          call_ok("initialize", partial({"protocolVersion": 1}))])
    flow("client-request-right-after-initialize-answer", R,
         "An agent request sent right after the agent's `initialize` answer is served: the handshake is complete once the answer was read, whenever the application's call resumes.",
         "client", client_setup(),
         [*c_init(),
          send(req("_test/echo", {"x": 1}, id="e1")),
          expect(resp("e1", {"method": "_test/echo", "params": {"x": 1}})),
          call_ok("initialize", partial({"protocolVersion": 1}))])
    flow("client-notification-before-initialize", R,
         "A `session/update` before `initialize` completed is dropped: the application does not see it.",
         "client", client_setup(),
         [send(chunk("s1", "early")),
          SILENCE,
          *c_ready(),
          SILENCE])
    L = "acp.state.local-initialize-first"
    flow("client-call-before-initialize", L,
         "Calls and notifications the client application makes before `initialize` fail locally with NotInitialized and send nothing.",
         "client", client_setup(),
         [call("session/new", new_session_params()),
          call_local("session/new", "NotInitialized"),
          call("session/cancel", {"sessionId": "s1"}),
          call_local("session/cancel", "NotInitialized"),
          SILENCE])
    flow("client-call-while-initialize-in-flight", "acp.state.pipelining",
         "A call the client application makes while its `initialize` is unanswered waits for the answer, sending nothing meanwhile, and then goes out.",
         "client", client_setup(),
         [call("initialize", {"protocolVersion": 1}),
          expect(req("initialize", partial({"protocolVersion": 1}), id=var("init"))),
          call("session/new", new_session_params()),
          SILENCE,
          send(resp(var("init"), {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})),
          expect(req("session/new", partial({"cwd": CWD}), id=var("new"))),
          send(resp(var("new"), {"sessionId": "s1"})),
          call_ok("initialize", partial({"protocolVersion": 1})),
          call_ok("session/new", partial({"sessionId": "s1"}))])

    flow("client-initialize-error-can-retry", "acp.state.initialize-once",
         "An agent error answer to `initialize` ends the call with that error and leaves the client uninitialized; a second `initialize` then completes the handshake.",
         "client", client_setup(),
         [call("initialize", {"protocolVersion": 1}),
          expect(req("initialize", partial({"protocolVersion": 1}), id=var("init"))),
          send(err(var("init"), {"code": -32603, "message": "not ready"})),
          call_error("initialize", error(-32603)),
          call("session/new", new_session_params()),
          call_local("session/new", "NotInitialized"),
          call("initialize", {"protocolVersion": 1}),
          expect(req("initialize", partial({"protocolVersion": 1}), id=var("init2"))),
          send(resp(var("init2"), {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})),
          call_ok("initialize", partial({"protocolVersion": 1}))])

    V = "acp.state.version-negotiation"
    flow("client-version-accepted", V,
         "An agent that answers `initialize` with protocolVersion 1 completes the handshake.",
         "client", client_setup(),
         [*c_init(), call_ok("initialize", partial({"protocolVersion": 1, "agentCapabilities": ANY}))])
    flow("client-version-unsupported", V,
         "An agent that answers `initialize` with protocolVersion 2 fails the call locally (UnsupportedVersion) and the connection stays uninitialized: the next call fails with NotInitialized and sends nothing.",
         "client", client_setup(),
         [*c_init(answer_version=2),
          call_local("initialize", "UnsupportedVersion"),
          call("session/new", new_session_params()),
          call_local("session/new", "NotInitialized"),
          SILENCE])

    G = "acp.state.capability-gate"
    flow("client-gate-fs-not-advertised", G,
         "`fs/read_text_file` and `fs/write_text_file` from the agent when the client did not advertise them (write advertised as `false`) are answered -32601 with data.capability.",
         "client", client_setup({"fs": {"writeTextFile": False}}),
         [*c_ready(),
          send(req("fs/read_text_file", {"sessionId": "s1", "path": "/home/user/project/a.txt"}, id="a1")),
          expect(err("a1", error(-32601, capability="clientCapabilities.fs.readTextFile"))),
          send(req("fs/write_text_file", {"sessionId": "s1", "path": "/home/user/project/a.txt",
                                          "content": "x"}, id="a2")),
          expect(err("a2", error(-32601, capability="clientCapabilities.fs.writeTextFile")))])
    flow("client-gate-fs-read-advertised", G,
         "With fs.readTextFile advertised, `fs/read_text_file` for a known session reaches the application.",
         "client", client_setup({"fs": {"readTextFile": True}}),
         [*c_ready(),
          send(req("fs/read_text_file", {"sessionId": "s1", "path": "/home/user/project/a.txt"}, id="a1")),
          expect(resp("a1", {"content": "text of /home/user/project/a.txt"}))])
    flow("client-gate-terminal-not-advertised", G,
         "`terminal/create` from the agent when the client did not advertise `terminal` is answered -32601 with data.capability.",
         "client", client_setup({"fs": {"readTextFile": True, "writeTextFile": True}}),
         [*c_ready(),
          send(req("terminal/create", {"sessionId": "s1", "command": "ls"}, id="a1")),
          expect(err("a1", error(-32601, capability="clientCapabilities.terminal")))])
    flow("client-elicitation-mode-not-advertised", G,
         "`elicitation/create` in a mode the client did not advertise (url, with only form advertised) is answered -32602 at $.params.mode; the advertised mode reaches the application.",
         "client", client_setup({"elicitation": {"form": {}}}),
         [*c_ready(),
          send(req("elicitation/create", {"sessionId": "s1", "mode": "url", "message": "Sign in",
                                          "elicitationId": "e1", "url": "https://example.com/login"}, id="a1")),
          expect(err("a1", error(-32602, path="$.params.mode"))),
          send(req("elicitation/create", {"sessionId": "s1", "mode": "form", "message": "Name?",
                                          "requestedSchema": {"type": "object", "properties": {
                                              "name": {"type": "string"}}}}, id="a2")),
          expect(resp("a2", {"action": "decline"}))])

    U = "acp.state.unknown-session"
    flow("client-unknown-session-request", U,
         "An agent request naming a session the client does not know is answered -32002 with data.sessionId and never reaches the application.",
         "client", client_setup(permission="allow"),
         [*c_ready(),
          send(permission_request("a1", "ghost")),
          expect(err("a1", error(-32002, sessionId="ghost"))),
          SILENCE])
    flow("client-unknown-session-update-delivered", "acp.state.update-unknown-session",
         "A `session/update` naming a session the client does not know (yet) is still delivered to the application.",
         "client", client_setup(),
         [*c_ready(),
          send(chunk("ghost", "early")),
          expect(seen("session/update", "ghost", update="agent_message_chunk"))])
    flow("client-update-before-session-new-answer", "acp.state.update-unknown-session",
         "A `session/update` for the session being created, sent before the `session/new` answer, is delivered to the application.",
         "client", client_setup(),
         [*c_init(),
          call_ok("initialize", partial({"protocolVersion": 1})),
          call("session/new", new_session_params()),
          expect(req("session/new", partial({"cwd": CWD}), id=var("new"))),
          send(notif("session/update", {"sessionId": "s1", "update": {
              "sessionUpdate": "available_commands_update", "availableCommands": []}})),
          expect(seen("session/update", "s1", update="available_commands_update")),
          send(resp(var("new"), {"sessionId": "s1"})),
          call_ok("session/new", partial({"sessionId": "s1"}))])
    flow("client-load-replay-delivered", "acp.state.update-unknown-session",
         "The history an agent replays during `session/load`, before answering it, is delivered to the application although the session is not known yet.",
         "client", client_setup(),
         [*c_init({"loadSession": True}),
          call_ok("initialize", partial({"protocolVersion": 1})),
          call("session/load", {"sessionId": "old-7", "cwd": CWD, "mcpServers": []}),
          expect(req("session/load", partial({"sessionId": "old-7"}), id=var("load"))),
          send(notif("session/update", {"sessionId": "old-7", "update": {
              "sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "earlier"}}})),
          expect(seen("session/update", "old-7", update="user_message_chunk")),
          send(resp(var("load"), {})),
          call_ok("session/load", {})])
    flow("client-request-right-after-session-new-answer", U,
         "An agent request naming the session it has just created, sent right after the `session/new` answer, is served: the session is known once the answer was read.",
         "client", client_setup(permission="allow"),
         [*c_init(),
          call_ok("initialize", partial({"protocolVersion": 1})),
          call("session/new", new_session_params()),
          expect(req("session/new", partial({"cwd": CWD}), id=var("new"))),
          send(resp(var("new"), {"sessionId": "s1"})),
          send(permission_request("a1", "s1")),
          expect(seen("session/request_permission", "s1")),
          expect(resp("a1", {"outcome": {"outcome": "selected", "optionId": "allow"}})),
          call_ok("session/new", partial({"sessionId": "s1"}))])
    flow("client-session-close-forgets", U,
         "After the client's `session/close` succeeded, the session is unknown: an agent request naming it is answered -32002.",
         "client", client_setup(permission="allow"),
         [*c_ready({"sessionCapabilities": {"close": {}}}),
          call("session/close", {"sessionId": "s1"}),
          expect(req("session/close", partial({"sessionId": "s1"}), id=var("close"))),
          send(resp(var("close"), {})),
          call_ok("session/close", {}),
          send(permission_request("a1", "s1")),
          expect(err("a1", error(-32002, sessionId="s1")))])

    P = "acp.state.cancel-permission"
    flow("client-permission-answered", P,
         "A permission request for a known session reaches the application, which answers with its configured option.",
         "client", client_setup(permission="allow"),
         [*c_ready(),
          send(permission_request("a1", "s1")),
          expect(seen("session/request_permission", "s1")),
          expect(resp("a1", {"outcome": {"outcome": "selected", "optionId": "allow"}}))])
    flow("client-cancel-answers-permission", P,
         "The client application's `session/cancel` answers the session's pending permission request with the `cancelled` outcome, on its behalf; the prompt then ends with the agent's `cancelled` answer.",
         "client", client_setup(),
         [*c_ready(),
          call("session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]}),
          expect(req("session/prompt", partial({"sessionId": "s1"}), id=var("prompt"))),
          send(permission_request("a1", "s1")),
          expect(seen("session/request_permission", "s1")),
          call("session/cancel", {"sessionId": "s1"}),
          expect(notif("session/cancel", partial({"sessionId": "s1"}))),
          expect(resp("a1", {"outcome": {"outcome": "cancelled"}})),
          call_ok("session/cancel", None),
          send(stop(var("prompt"), "cancelled")),
          call_ok("session/prompt", partial({"stopReason": "cancelled"}))])
    flow("client-cancel-answers-only-that-session", P,
         "The client's `session/cancel` answers the pending permission requests of that session only; another session's request stays pending (and is later cancelled by the agent with -32800).",
         "client", client_setup(),
         [*c_ready(),
          call("session/new", new_session_params()),
          expect(req("session/new", partial({"cwd": CWD}), id=var("new2"))),
          send(resp(var("new2"), {"sessionId": "s2"})),
          call_ok("session/new", partial({"sessionId": "s2"})),
          send(permission_request("a1", "s1")),
          expect(seen("session/request_permission", "s1")),
          send(permission_request("a2", "s2")),
          expect(seen("session/request_permission", "s2")),
          call("session/cancel", {"sessionId": "s1"}),
          expect(notif("session/cancel", partial({"sessionId": "s1"}))),
          expect(resp("a1", {"outcome": {"outcome": "cancelled"}})),
          call_ok("session/cancel", None),
          SILENCE,
          send(notif("$/cancel_request", {"requestId": "a2"})),
          expect(err("a2", error(-32800)))])
    flow("client-cancel-request-unknown-id", "acp.state.cancel-request",
         "`$/cancel_request` from the agent naming no pending request is ignored without a reply.",
         "client", client_setup(),
         [*c_ready(),
          send(notif("$/cancel_request", {"requestId": "a9"})),
          SILENCE])
    flow("client-cancel-request-permission", "acp.state.cancel-request",
         "`$/cancel_request` from the agent naming its pending permission request is answered -32800 for that request.",
         "client", client_setup(),
         [*c_ready(),
          send(permission_request("a1", "s1")),
          expect(seen("session/request_permission", "s1")),
          send(notif("$/cancel_request", {"requestId": "a1"})),
          expect(err("a1", error(-32800)))])

    flow("client-load-null-result", "acp.v1.result.empty-null",
         "An agent answering `session/load` with a null result is accepted as the empty LoadSessionResponse, and the loaded session becomes known.",
         "client", client_setup(permission="allow"),
         [*c_init({"loadSession": True}),
          call_ok("initialize", partial({"protocolVersion": 1})),
          call("session/load", {"sessionId": "old-7", "cwd": CWD, "mcpServers": []}),
          expect(req("session/load", partial({"sessionId": "old-7"}), id=var("load"))),
          send(resp(var("load"), None)),
          call_ok("session/load", {}),
          send(permission_request("a1", "old-7")),
          expect(seen("session/request_permission", "old-7")),
          expect(resp("a1", {"outcome": {"outcome": "selected", "optionId": "allow"}}))])
    flow("client-close-null-result", "acp.v1.result.empty-null",
         "An agent answering `session/close` with a null result is accepted as the empty CloseSessionResponse.",
         "client", client_setup(),
         [*c_ready({"sessionCapabilities": {"close": {}}}),
          call("session/close", {"sessionId": "s1"}),
          expect(req("session/close", partial({"sessionId": "s1"}), id=var("close"))),
          send(resp(var("close"), None)),
          call_ok("session/close", {})])
    O = "acp.state.outgoing-capability-gate"
    flow("client-load-not-advertised", O,
         "The client application's `session/load` when the agent did not advertise loadSession fails locally (CapabilityNotAdvertised) and nothing is sent.",
         "client", client_setup(),
         [*c_ready(),
          call("session/load", {"sessionId": "old-7", "cwd": CWD, "mcpServers": []}),
          call_local("session/load", "CapabilityNotAdvertised"),
          SILENCE])
    M = "acp.state.session-gate"
    flow("client-set-mode-without-modes", M,
         "The client application's `session/set_mode` for a session whose `session/new` answer carried no `modes` fails locally (NotAnnounced) and nothing is sent.",
         "client", client_setup(),
         [*c_ready(),
          call("session/set_mode", {"sessionId": "s1", "modeId": "code"}),
          call_local("session/set_mode", "NotAnnounced"),
          SILENCE])
    flow("client-set-mode-with-modes", M,
         "The client application's `session/set_mode` for a session whose `session/new` answer carried `modes` is sent, and the agent's answer ends the call.",
         "client", client_setup(),
         [*c_init(),
          call_ok("initialize", partial({"protocolVersion": 1})),
          call("session/new", new_session_params()),
          expect(req("session/new", partial({"cwd": CWD}), id=var("new"))),
          send(resp(var("new"), {"sessionId": "s1", "modes": MODES})),
          call_ok("session/new", partial({"sessionId": "s1"})),
          call("session/set_mode", {"sessionId": "s1", "modeId": "code"}),
          expect(req("session/set_mode", {"sessionId": "s1", "modeId": "code"}, id=var("mode"))),
          send(resp(var("mode"), {})),
          call_ok("session/set_mode", {})])
    flow("client-set-mode-after-load-without-modes", M,
         "A session loaded again with an answer without `modes` (a null result) follows the latest answer: the client sends `session/set_mode` while the `session/new` answer's `modes` stand, and refuses it locally (NotAnnounced) after the load.",
         "client", client_setup(),
         [*c_init({"loadSession": True}),
          call_ok("initialize", partial({"protocolVersion": 1})),
          call("session/new", new_session_params()),
          expect(req("session/new", partial({"cwd": CWD}), id=var("new"))),
          send(resp(var("new"), {"sessionId": "s1", "modes": MODES})),
          call_ok("session/new", partial({"sessionId": "s1"})),
          call("session/set_mode", {"sessionId": "s1", "modeId": "code"}),
          expect(req("session/set_mode", {"sessionId": "s1", "modeId": "code"}, id=var("mode"))),
          send(resp(var("mode"), {})),
          call_ok("session/set_mode", {}),
          call("session/load", {"sessionId": "s1", "cwd": CWD, "mcpServers": []}),
          expect(req("session/load", partial({"sessionId": "s1"}), id=var("load"))),
          send(resp(var("load"), None)),
          call_ok("session/load", {}),
          call("session/set_mode", {"sessionId": "s1", "modeId": "ask"}),
          call_local("session/set_mode", "NotAnnounced"),
          SILENCE])
    flow("client-error-reply", "acp.v1.error-reply",
         "An agent error answer to a call (-32002 with data) ends the call with that error object.",
         "client", client_setup(),
         [*c_ready(),
          call("session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]}),
          expect(req("session/prompt", partial({"sessionId": "s1"}), id=var("prompt"))),
          send(err(var("prompt"), {"code": -32002, "message": "Resource not found", "data": {"sessionId": "s1"}})),
          call_error("session/prompt", error(-32002, sessionId="s1"))])


REQUIREMENTS.update({
    "acp.state.initialize-first": {"source": "spec: notes/acp.md sections 4.1 and 5 (initialize is always the first message); sdk: -32600 as TS agents do",
        "text": "Until `initialize` has completed, every other request is answered -32600 and every notification is dropped, on both sides; nothing reaches the application. (What the agent reads after `initialize`, before answering it, waits instead: acp.state.pipelining.)"},
    "acp.state.pipelining": {"source": "spec: JSON-RPC 2.0 (a client need not wait for an answer before its next request); sdk: crates/acp endpoint module docs (Pipelined messages)",
        "text": "The agent answers pipelined requests by read order, not by which handler runs first: one read after `initialize` waits for it and is served if it succeeded (-32600 if it failed), one naming a session waits for a `session/new` read before it. A client application's call made while its `initialize` is unanswered waits for the answer instead of failing."},
    "acp.state.initialize-once": {"source": "spec: notes/acp.md section 4.1 (initialize: first message); sdk: a repeated initialize is an invalid request",
        "text": "`initialize` succeeds once per connection: after a successful one, another is answered -32600 and the negotiated state is kept; one that failed (an error answer, a panicking handler) does not count and may be retried."},
    "acp.state.local-initialize-first": {"source": "sdk: crates/acp role documentation (calls before initialize fail locally)",
        "text": "A client application's calls and notifications before `initialize` completed fail locally with NotInitialized and put nothing on the wire (unless its `initialize` is in flight: acp.state.pipelining)."},
    "acp.state.version-negotiation": {"source": "spec: notes/acp.md section 1 (Negotiation)",
        "text": "The agent answers the requested protocolVersion when it speaks it and otherwise its own (1 for a v1 agent); a client that does not speak the answered version fails `initialize` (UnsupportedVersion) and stays uninitialized."},
    "acp.state.content-gate": {"source": "spec: schema $defs/PromptCapabilities (text and resource_link are baseline, other content must be opted in to) and $defs/McpCapabilities; rules/acp.toml [[v1.values]]",
        "text": "A prompt block or MCP server kind the agent did not advertise, or one no schema lists, is answered -32602 with the path of the offending item; baseline kinds are always accepted."},
    "acp.state.capability-gate": {"source": "spec: notes/acp.md section 4.1 (Gate column) and section 5; spec: notes/acp.md section 3 (-32602 for an unadvertised elicitation mode)",
        "text": "A request for a gated method the receiving side did not advertise (absent, false or null) is answered -32601 with data.capability, an unadvertised elicitation mode -32602 at $.params.mode; an advertised one (true or an object) is dispatched."},
    "acp.state.session-gate": {"source": "spec: schema ClientRequest session/set_mode (\"The mode must be one of the modes advertised in `availableModes` during session creation or loading\") and NewSessionResponse.modes (\"Initial mode state if supported by the Agent\"); rules/acp.toml [v1.session_gates]",
        "text": "`session/set_mode` for a session whose latest opening answer (new, load, resume, fork) carried no `modes` is answered -32602 at $.params.sessionId, and a client application's call for it fails locally with NotAnnounced and sends nothing; with `modes` it is served."},
    "acp.state.outgoing-capability-gate": {"source": "spec: notes/acp.md section 5 (peers only use what the other side advertised); sdk: AcpError::CapabilityNotAdvertised",
        "text": "A call to a gated method the peer did not advertise fails locally with CapabilityNotAdvertised and nothing is sent."},
    "acp.state.unknown-session": {"source": "spec: notes/acp.md section 3 (-32002 with data.sessionId) and section 10 trap 6",
        "text": "A request naming a session the receiver does not know (never created or loaded here, or closed) is answered -32002 with data.sessionId; `session/cancel` for one is ignored."},
    "acp.state.update-unknown-session": {"source": "spec: notes/acp.md section 10 trap 9 (updates before the session/new response)",
        "text": "A `session/update` naming a session the client does not know is still delivered to the application."},
    "acp.state.one-prompt-per-session": {"source": "spec: notes/acp.md section 6 (one prompt turn at a time); sdk: -32600 with data.sessionId",
        "text": "A session has at most one prompt turn in flight: another `session/prompt` for it is answered -32600 with data.sessionId, other sessions are unaffected, and the session takes prompts again once the turn ended."},
    "acp.state.cancel-prompt": {"source": "spec: notes/acp.md section 6 (Cancellation: the agent MUST answer the prompt with stopReason cancelled, never an error)",
        "text": "After `session/cancel` the running prompt turn is answered with stopReason `cancelled` whatever the handler returns; a handler error outside cancellation is passed on and ends the turn."},
    "acp.state.cancel-outgoing-requests": {"source": "spec: notes/acp.md section 6 (on session/cancel the agent sends $/cancel_request for its outstanding requests)",
        "text": "The agent's calls to the client inside a turn resolve with the client's answers; on `session/cancel` the agent cancels its outstanding ones with `$/cancel_request`, ends them as cancelled and ignores late answers."},
    "acp.state.cancel-permission": {"source": "spec: notes/acp.md section 6 (the client MUST answer every pending session/request_permission with the cancelled outcome)",
        "text": "When the client sends `session/cancel`, every pending permission request of that session is answered {\"outcome\":{\"outcome\":\"cancelled\"}}; otherwise the application's answer is sent."},
    "acp.state.cancel-request": {"source": "spec: notes/acp.md section 6 ($/cancel_request: the receiver MUST still answer, partial result or -32800)",
        "text": "`$/cancel_request` naming a pending request makes the receiver answer it -32800 (and frees what it held, such as the prompt turn); one naming no pending request is ignored."},
    "acp.state.extensions": {"source": "spec: notes/acp.md section 8 (extension methods)",
        "text": "After `initialize`, an unhandled extension request is answered -32601, an unhandled extension notification is ignored, and a handled one reaches the application under its full name with its params unchanged."},
    "acp.state.invalid-params": {"source": "spec: JSON-RPC 2.0 section 5.1; sdk: -32602 data carries path, expected, found",
        "text": "Through a live connection, a request whose params fail validation is answered -32602 with data.path and leaves the session state unchanged."},
})


def build_flows():
    build_agent_flows()
    build_client_flows()
