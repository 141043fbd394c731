"""Flows with our agent role under test (the flow plays the client)."""

from __future__ import annotations

from vectorlib import *  # noqa: F403
from fixtures import CWD
from flow_steps import *  # noqa: F403


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
         "While a prompt turn runs in a session, a second `session/prompt` for it waits (nothing is written for it) until that turn ends; another session prompts normally; a `session/cancel` read after both ends the running turn and the waiting one, each answered {\"stopReason\":\"cancelled\"}; then the session takes prompts again.",
         "agent", NO_CAPS,
         [*a_ready(sessions=2),
          send(text_prompt("sess-1", "wait", 3)),
          expect(chunk("sess-1", "waiting")),
          send(text_prompt("sess-1", "echo twice", 4)),
          SILENCE,
          *a_echo(5, "sess-2", "other"),
          send(notif("session/cancel", {"sessionId": "sess-1"})),
          expect_unordered(stop(3, "cancelled"), stop(4, "cancelled")),
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
