"""Flows with our client role under test (the flow plays the agent)."""

from __future__ import annotations

from vectorlib import *  # noqa: F403
from fixtures import CWD
from flow_steps import *  # noqa: F403

# --------------------------------------

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
