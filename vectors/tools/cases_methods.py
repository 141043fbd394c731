"""Per-method ACP v1 cases (vectors/acp/v1/<method>/)."""

from __future__ import annotations

from vectorlib import *  # noqa: F403
from fixtures import *  # noqa: F403


def build_methods():
    for spec in METHOD_SPECS:
        m = spec["method"]
        kind, side, pt, rt = method_info(m)
        assert pt, m
        f = folder(m)
        d = sender(side)
        RP = f"acp.v1.params.{m}"
        REQUIREMENTS[RP] = {"source": S + f"$defs/{pt}",
                            "text": f"The params of `{m}` decode as `{pt}`: required members present and well-typed, optional ones lenient only where the schema says so."}
        noun = "request" if kind == "request" else "notification"

        def send(params=ABSENT, id=1):
            return req(m, params, id=id) if kind == "request" else notif(m, params)

        def ok(params=ABSENT, warnings=None):
            if kind == "request":
                return x_request(m, 1, pt, params, warnings)
            return x_notification(m, pt, params, warnings)

        def bad(path):
            if kind == "request":
                return x_reply_error(-32602, 1, path)
            return x_ignored("invalid-notification")

        def bad_desc(what, path):
            if kind == "request":
                return f"answered with -32602 at `{path}`"
            return f"dropped without a reply (validation fails at `{path}`)"

        dirs = [d] if side != "protocol" else [C2A, A2C]
        for dd in dirs:
            suffix = "" if side != "protocol" else ("-from-client" if dd == C2A else "-from-agent")
            sender_name = "client" if dd == C2A else "agent"
            mx = spec.get("params_min_x", ABSENT)
            extra = " and re-encodes with the schema defaults filled in" if mx is not ABSENT else " and re-encodes unchanged"
            if mx is ABSENT:
                mx = spec["params_min"]
            case(f"{f}/params-min{suffix}", RP,
                 f"{a_(m)} `{m}` {noun} sent by the {sender_name} with only the required params is dispatched as `{pt}`{extra}.",
                 ok(mx), input=send(spec["params_min"]), direction=dd)
        case(f"{f}/params-max", RP,
             f"{a_(m)} `{m}` {noun} carrying every optional field, with `_meta` on every object that allows it, is dispatched as `{pt}` and re-encodes unchanged.",
             ok(spec["params_max"]), input=send(spec["params_max"]), direction=d)
        max_check(f"{f}/params-max", pt, spec["params_max"], "$.params")
        if "missing" in spec:
            field, params = spec["missing"]
            case(f"{f}/params-missing-{kebab(field)}", RP,
                 f"{a_(m)} `{m}` {noun} whose params lack the required `{field}` is {bad_desc(field, '$.params')}, the path of the object that lacks it.",
                 bad("$.params"), input=send(params), direction=d)
        path, params, what = spec["wrong"]
        case(f"{f}/params-wrong-type-{last_segment(path)}", RP,
             f"{a_(m)} `{m}` {noun} with {what} is {bad_desc(what, path)}.",
             bad(path), input=send(params), direction=d)
        if has_required(pt):
            case(f"{f}/params-absent", RP,
                 f"{a_(m)} `{m}` {noun} without params, although `{pt}` has required members, is {bad_desc('', '$.params')}.",
                 bad("$.params"), input=send(), direction=d)
        else:
            case(f"{f}/params-absent", "jsonrpc.params.null-is-absent",
                 f"{a_(m)} `{m}` {noun} without params decodes as an empty `{pt}` because none of its members is required.",
                 ok({}), input=send(), direction=d)
            case(f"{f}/params-null", "jsonrpc.params.null-is-absent",
                 f"{a_(m)} `{m}` {noun} with \"params\": null decodes as an empty `{pt}`, exactly like absent params.",
                 ok({}), input=send(None), direction=d)
        if side != "protocol":
            if kind == "request":
                case(f"{f}/wrong-direction", "acp.v1.direction",
                     f"{a_(m)} `{m}` request sent by the {'agent' if d == C2A else 'client'} reaches the side that does not handle it and is answered with -32601.",
                     x_reply_error(-32601, 1), input=send(spec["params_min"]), direction=other(d))
            else:
                case(f"{f}/wrong-direction", "acp.v1.direction",
                     f"{a_(m)} `{m}` notification sent by the {'agent' if d == C2A else 'client'} reaches the side that does not handle it and is dropped as unknown.",
                     x_ignored("unknown-notification"), input=send(spec["params_min"]), direction=other(d))
        if kind != "request":
            continue
        RR = f"acp.v1.result.{m}"
        REQUIREMENTS[RR] = {"source": S + f"$defs/{rt}",
                            "text": f"The result of `{m}` decodes as `{rt}` when the response matches a pending `{m}` call."}
        rd = other(d)
        P = pend(3, m)
        rmx = spec.get("result_min_x", ABSENT)
        extra = " and re-encodes with the schema defaults filled in" if rmx is not ABSENT else " and re-encodes unchanged"
        if rmx is ABSENT:
            rmx = spec["result_min"]
        case(f"{f}/result-min", RR,
             f"A response to a pending `{m}` call whose result holds only the required members is decoded as `{rt}`{extra}.",
             x_response(3, m, rt, rmx), input=resp(3, spec["result_min"]), direction=rd, pending=P)
        case(f"{f}/result-max", RR,
             f"A response to a pending `{m}` call whose result carries every optional field, with `_meta` on every object that allows it, is decoded as `{rt}` and re-encodes unchanged.",
             x_response(3, m, rt, spec["result_max"]), input=resp(3, spec["result_max"]), direction=rd, pending=P)
        max_check(f"{f}/result-max", rt, spec["result_max"], "$.result")
        path, result, what = spec["result_bad"]
        slug = spec.get("result_bad_name") or f"result-invalid-{last_segment(path)}"
        case(f"{f}/{slug}", RR,
             f"A response to a pending `{m}` call with {what} fails the call locally at `{path}` and nothing is sent back.",
             x_call_failed(3, path), input=resp(3, result), direction=rd, pending=P)

    build_method_extras()



# method extras ------------------------------------------------------------------

def build_method_extras():
    case("acp/v1/session.load/result-null", "acp.v1.result.empty-null",
         "A `session/load` response whose result is null (as the prose docs show) is accepted as an empty `LoadSessionResponse` and re-encodes as {}.",
         x_response(3, "session/load", "LoadSessionResponse", {}), input=resp(3, None), direction=A2C,
         pending=pend(3, "session/load"))
    case("acp/v1/session.load/result-with-session-id", "acp.v1.fields.unknown-dropped",
         "A `session/load` result that carries a `sessionId` (not part of `LoadSessionResponse`) is accepted and the extra member is dropped on re-encoding.",
         x_response(3, "session/load", "LoadSessionResponse", {"modes": MODES_MAX}),
         input=resp(3, {"sessionId": SID, "modes": MODES_MAX}), direction=A2C, pending=pend(3, "session/load"))
    case("acp/v1/fs.write_text_file/result-null", "acp.v1.result.empty-null",
         "A `fs/write_text_file` response whose result is null is accepted as an empty `WriteTextFileResponse` and re-encodes as {}.",
         x_response(3, "fs/write_text_file", "WriteTextFileResponse", {}), input=resp(3, None), direction=C2A,
         pending=pend(3, "fs/write_text_file"))
    case("acp/v1/authenticate/result-null", "acp.v1.result.empty-null",
         "An `authenticate` response whose result is null is accepted as an empty `AuthenticateResponse` and re-encodes as {}.",
         x_response(3, "authenticate", "AuthenticateResponse", {}), input=resp(3, None), direction=A2C,
         pending=pend(3, "authenticate"))
    case("acp/v1/session.prompt/result-null", "acp.v1.result.session/prompt",
         "A `session/prompt` response whose result is null fails the call at `$.result`, because `PromptResponse` requires `stopReason` and so is no empty result that `null` could stand for (a wrong type).",
         x_call_failed(3, "$.result"), input=resp(3, None), direction=A2C, pending=pend(3, "session/prompt"))
    for stop in ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"):
        case(f"acp/v1/session.prompt/result-stop-{stop.replace('_', '-')}", "acp.v1.result.session/prompt",
             f"A `session/prompt` response with stopReason \"{stop}\" is decoded as `PromptResponse`.",
             x_response(3, "session/prompt", "PromptResponse", {"stopReason": stop}),
             input=resp(3, {"stopReason": stop}), direction=A2C, pending=pend(3, "session/prompt"))
    case("acp/v1/session.prompt/error-reply-auth-required", "acp.v1.error-reply",
         "An error response -32000 (authentication required) to a pending `session/prompt` call resolves it with that error.",
         x_error_reply(3, -32000, "Authentication required"),
         input=err(3, {"code": -32000, "message": "Authentication required"}), direction=A2C, pending=pend(3, "session/prompt"))
    case("acp/v1/session.prompt/error-reply-resource-not-found", "acp.v1.error-reply",
         "An error response -32002 with `data.sessionId` to a pending `session/prompt` call resolves it with that error.",
         x_error_reply(3, -32002, "Resource not found"),
         input=err(3, {"code": -32002, "message": "Resource not found", "data": {"sessionId": SID}}), direction=A2C,
         pending=pend(3, "session/prompt"))
    case("acp/v1/session.request_permission/error-reply-cancelled", "acp.v1.error-reply",
         "An error response -32800 (request cancelled) to a pending `session/request_permission` call resolves it with that error.",
         x_error_reply(3, -32800, "Request cancelled"),
         input=err(3, {"code": -32800, "message": "Request cancelled"}), direction=C2A,
         pending=pend(3, "session/request_permission"))
    case("acp/v1/session.prompt/params-array", "jsonrpc.params.structured",
         "A `session/prompt` request whose params is an array (by-position params) is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req("session/prompt", [SID, [TEXT_MIN]]))
    case("acp/v1/session.prompt/params-scalar", "jsonrpc.params.structured",
         "A `session/prompt` request whose params is a string is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req("session/prompt", "hello"))
    case("acp/v1/session.prompt/prompt-empty", "acp.v1.params.session/prompt",
         "A `session/prompt` request with an empty prompt array is valid and is dispatched as `PromptRequest`.",
         x_request("session/prompt", 1, "PromptRequest", {"sessionId": SID, "prompt": []}),
         input=req("session/prompt", {"sessionId": SID, "prompt": []}))
    case("acp/v1/session.prompt/id-string", "jsonrpc.id.echo",
         "A `session/prompt` request with a string id is dispatched with that id.",
         x_request("session/prompt", "p-1", "PromptRequest", {"sessionId": SID, "prompt": [TEXT_MIN]}), input=req("session/prompt", {"sessionId": SID, "prompt": [TEXT_MIN]}, id="p-1"))
    case("acp/v1/session.prompt/id-null", "jsonrpc.id.null",
         "A `session/prompt` request with id null is dispatched as a request with id null.",
         x_request("session/prompt", None, "PromptRequest", {"sessionId": SID, "prompt": [TEXT_MIN]}), input=req("session/prompt", {"sessionId": SID, "prompt": [TEXT_MIN]}, id=None))
    K = "acp.v1.dispatch.kind"
    case("acp/v1/session.prompt/sent-as-notification", K,
         "A `session/prompt` message without an id is a notification the agent does not know (the method is a request) and is dropped.",
         x_ignored("unknown-notification"), input=notif("session/prompt", {"sessionId": SID, "prompt": [TEXT_MIN]}))
    case("acp/v1/session.cancel/sent-as-request", K,
         "A `session/cancel` message with an id is a request the agent does not know (the method is a notification) and is answered with -32601.",
         x_reply_error(-32601, 4), input=req("session/cancel", {"sessionId": SID}, id=4))
    case("acp/v1/session.update/sent-as-request", K,
         "A `session/update` message with an id is a request the client does not know (the method is a notification) and is answered with -32601.",
         x_reply_error(-32601, 4), input=req("session/update", {"sessionId": SID, "update": {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN}}, id=4),
         direction=A2C)
    case("acp/v1/$.cancel_request/sent-as-request", K,
         "A `$/cancel_request` message with an id is not a known request and is answered with -32601.",
         x_reply_error(-32601, 4), input=req("$/cancel_request", {"requestId": 7}, id=4))
    case("acp/v1/$.cancel_request/request-id-null", "acp.v1.params.$/cancel_request",
         "A `$/cancel_request` notification whose requestId is null (a valid v1 request id) is dispatched with requestId null.",
         x_notification("$/cancel_request", "CancelRequestNotification", {"requestId": None}),
         input=notif("$/cancel_request", {"requestId": None}))
    case("acp/v1/$.cancel_request/request-id-string-from-agent", "acp.v1.params.$/cancel_request",
         "A `$/cancel_request` notification from the agent whose requestId is a string is dispatched to the client unchanged.",
         x_notification("$/cancel_request", "CancelRequestNotification", {"requestId": "req-9"}),
         input=notif("$/cancel_request", {"requestId": "req-9"}), direction=A2C)
    case("acp/v1/$.cancel_request/request-id-bool", "acp.v1.params.$/cancel_request",
         "A `$/cancel_request` notification whose requestId is true is dropped without a reply (validation fails at `$.params.requestId`).",
         x_ignored("invalid-notification"), input=notif("$/cancel_request", {"requestId": True}))
    case("acp/v1/initialize/protocol-version-2", "acp.v1.params.initialize",
         "An `initialize` request asking for protocolVersion 2 still decodes (negotiation happens in the handler, not the decoder).",
         x_request("initialize", 1, "InitializeRequest", {"protocolVersion": 2, "clientCapabilities": CLIENT_CAPS_DEFAULT}),
         input=req("initialize", {"protocolVersion": 2}))
    case("acp/v1/initialize/wire-example", "acp.v1.params.initialize",
         "The `initialize` request from the notes' wire example is dispatched and re-encodes with the missing `auth` capability defaulted.",
         x_request("initialize", 0, "InitializeRequest",
                   {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True,
                                                                  "auth": {"terminal": False}},
                    "clientInfo": {"name": "my-editor", "version": "1.0.0"}}),
         input_text='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"my-editor","version":"1.0.0"}}}\n')
    case("acp/v1/initialize/result-wire-example", "acp.v1.result.initialize",
         "The `initialize` result from the notes' wire example is decoded and re-encodes with the missing capability defaults filled in.",
         x_response(0, "initialize", "InitializeResponse",
                    {"protocolVersion": 1,
                     "agentCapabilities": {"loadSession": True,
                                           "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                                           "mcpCapabilities": {"http": False, "sse": False}, "sessionCapabilities": {}, "auth": {}},
                     "authMethods": [], "agentInfo": {"name": "my-agent", "version": "0.1.0"}}),
         input_text='{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"embeddedContext":true}},"authMethods":[],"agentInfo":{"name":"my-agent","version":"0.1.0"}}}\n',
         direction=A2C, pending=pend(0, "initialize"))
    case("acp/v1/session.new/mcp-servers-all-kinds-min", "acp.v1.params.session/new",
         "A `session/new` request listing a minimal stdio, http and sse MCP server is dispatched and re-encodes unchanged.",
         x_request("session/new", 1, "NewSessionRequest", {"cwd": CWD, "mcpServers": [STDIO_MIN, HTTP_MIN, SSE_MIN]}),
         input=req("session/new", {"cwd": CWD, "mcpServers": [STDIO_MIN, HTTP_MIN, SSE_MIN]}))
    case("acp/v1/session.set_config_option/params-max-value-id", "acp.v1.params.session/set_config_option",
         "A `session/set_config_option` request with a value id and `_meta` is dispatched and re-encodes unchanged.",
         x_request("session/set_config_option", 1, "SetSessionConfigOptionRequest",
                   {"sessionId": SID, "configId": "model", "value": "smart", "_meta": mt("set")}),
         input=req("session/set_config_option", {"sessionId": SID, "configId": "model", "value": "smart", "_meta": mt("set")}))
    case("acp/v1/session.request_permission/result-selected-min", "acp.v1.result.session/request_permission",
         "A `session/request_permission` result selecting an option is decoded with the chosen optionId.",
         x_response(3, "session/request_permission", "RequestPermissionResponse", {"outcome": {"outcome": "selected", "optionId": "allow"}}),
         input=resp(3, {"outcome": {"outcome": "selected", "optionId": "allow"}}), direction=C2A,
         pending=pend(3, "session/request_permission"))
    case("acp/v1/terminal.output/result-exit-status-empty", "acp.v1.result.terminal/output",
         "A `terminal/output` result with an empty exitStatus object is decoded and keeps the empty object.",
         x_response(3, "terminal/output", "TerminalOutputResponse", {"output": "done", "truncated": False, "exitStatus": {}}),
         input=resp(3, {"output": "done", "truncated": False, "exitStatus": {}}), direction=C2A, pending=pend(3, "terminal/output"))
    case("acp/v1/elicitation.create/result-decline", "acp.v1.result.elicitation/create",
         "An `elicitation/create` result with action \"decline\" is decoded as `CreateElicitationResponse`.",
         x_response(3, "elicitation/create", "CreateElicitationResponse", {"action": "decline"}),
         input=resp(3, {"action": "decline"}), direction=C2A, pending=pend(3, "elicitation/create"))
    case("acp/v1/elicitation.create/result-accept-without-content", "acp.v1.result.elicitation/create",
         "An `elicitation/create` result with action \"accept\" and no content (a URL elicitation) is decoded unchanged.",
         x_response(3, "elicitation/create", "CreateElicitationResponse", {"action": "accept"}),
         input=resp(3, {"action": "accept"}), direction=C2A, pending=pend(3, "elicitation/create"))
    case("acp/v1/elicitation.create/result-missing-action", "acp.v1.result.elicitation/create",
         "An `elicitation/create` result without `action` fails the call at `$.result`.",
         x_call_failed(3, "$.result"), input=resp(3, {"content": {"a": "b"}}), direction=C2A,
         pending=pend(3, "elicitation/create"))



# acp/v1/types/ --------------------------------------------------------------------
