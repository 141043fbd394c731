"""ACP v1 type cases: elicitation, leniency, defaults, three-state fields, numbers, _meta, duplicate keys, unions."""

from __future__ import annotations

from vectorlib import *  # noqa: F403
from fixtures import *  # noqa: F403


EL = "elicitation/create"
ET = "CreateElicitationRequest"


def form(props, required=None, **extra):
    schema = {"properties": props}
    if required is not None:
        schema["required"] = required
    return {"message": "Fill this in", "mode": "form", "sessionId": SID, "requestedSchema": schema, **extra}


def form_x(props, required=None, **extra):
    p = form(props, required, **extra)
    p["requestedSchema"] = {"type": "object", **p["requestedSchema"]}
    return p


def build_elicitation():
    F = f"{T}/elicitation"
    R = "acp.v1.type.elicitation"

    def ok(cid, requirement, desc, params, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc, x_request(EL, 1, ET, expect, warnings), input=req(EL, params), direction=A2C)

    def bad(cid, requirement, desc, params, path):
        case(f"{F}/{cid}", requirement, desc, x_reply_error(-32602, 1, path), input=req(EL, params), direction=A2C)

    props = {
        "string-min": {"type": "string"},
        "string-max": STRING_PROP_MAX,
        "number-min": {"type": "number"},
        "number-max": NUMBER_PROP_MAX,
        "integer-min": {"type": "integer"},
        "integer-max": INTEGER_PROP_MAX,
        "boolean-min": {"type": "boolean"},
        "boolean-max": BOOLEAN_PROP_MAX,
        "array-enum-min": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "array-enum-max": ARRAY_PROP_MAX,
        "array-titled-min": {"type": "array", "items": {"anyOf": [{"const": "r", "title": "Red"}]}},
        "array-titled-max": ARRAY_TITLED_PROP_MAX,
    }
    for name, prop in props.items():
        ok(f"form-{name}", R,
           f"A form elicitation whose schema has one `{name.rsplit('-', 1)[0]}` property ({name.rsplit('-', 1)[1]}imal) is dispatched and re-encodes with the schema `type` default filled in.",
           form({"field": prop}), form_x({"field": prop}))
        if name.endswith("-max"):
            max_check(f"{F}/form-{name}", "ElicitationPropertySchema", prop, "$.params.requestedSchema.properties.field")
    for fmt in ("email", "uri", "date", "date-time"):
        prop = {"type": "string", "format": fmt}
        ok(f"form-string-format-{fmt}", R, f"A string property with format \"{fmt}\" is accepted and kept.",
           form({"f": prop}), form_x({"f": prop}))
    bad("form-string-format-unknown", "acp.v1.enum.closed-rejected",
        "A string property with the unknown format \"phone\" is rejected: the format enum is closed and the field is not lenient.",
        form({"f": {"type": "string", "format": "phone"}}), "$.params.requestedSchema.properties.f.format")
    url_min = {"message": "Sign in", "mode": "url", "sessionId": SID, "elicitationId": "elic_1",
               "url": "https://auth.example.com/start"}
    url_max = {**url_min, "toolCallId": "call_1", "_meta": mt("url")}
    ok("url-min", R, "A url-mode elicitation with only the required members is dispatched and re-encodes unchanged.",
       url_min, url_min)
    ok("url-max", R, "A url-mode elicitation tied to a tool call, with `_meta`, is dispatched and re-encodes unchanged.",
       url_max, url_max)
    max_check(f"{F}/url-max", ET, url_max, "$.params")
    rs = {"message": "Sign in", "mode": "url", "requestId": 5, "elicitationId": "elic_2", "url": "https://auth.example.com/x"}
    ok("url-request-scope", R, "A url-mode elicitation scoped to a request id instead of a session is dispatched unchanged.",
       rs, rs)
    rs = {"message": "Token?", "mode": "form", "requestId": "init-1", "requestedSchema": {"type": "object", "properties": {}}}
    ok("form-request-scope", R, "A form elicitation scoped to a string request id is dispatched unchanged.", rs, rs)
    raw = {"message": "Pick a file", "mode": "_file_picker", "sessionId": SID, "filters": ["*.rs"]}
    ok("mode-custom", "acp.v1.union.open-unknown-kept",
       "An elicitation with the custom mode \"_file_picker\" is kept as an unknown variant with its raw JSON and no warning (the mode union is open).",
       raw, raw)
    raw = {"message": "Scan this", "mode": "qr_code", "requestId": 9, "code": "XYZ"}
    ok("mode-future", "acp.v1.union.open-unknown-kept",
       "An elicitation with the future mode \"qr_code\" is kept raw without a warning (the mode union is open).", raw, raw)
    bad("form-missing-requested-schema", "acp.v1.union.known-tag-strict",
        "A form elicitation without `requestedSchema` is answered with -32602 at `$.params` (a known mode never falls back to the open variant).",
        {"message": "m", "mode": "form", "sessionId": SID}, "$.params")
    bad("url-missing-url", "acp.v1.union.known-tag-strict",
        "A url elicitation without `url` is answered with -32602 at `$.params`.",
        {"message": "m", "mode": "url", "sessionId": SID, "elicitationId": "e"}, "$.params")
    bad("missing-scope", R,
        "A form elicitation with neither `sessionId` nor `requestId` is answered with -32602 at `$.params`.",
        {"message": "m", "mode": "form", "requestedSchema": {}}, "$.params")
    bad("missing-mode", R,
        "An elicitation without `mode` matches no variant and is answered with -32602 at `$.params`.",
        {"message": "m", "sessionId": SID, "requestedSchema": {}}, "$.params")
    raw_prop = {"type": "_color", "palette": ["red", "blue"]}
    ok("property-type-custom", "acp.v1.union.open-unknown-kept",
       "A form property with the custom type \"_color\" is kept raw without a warning (the property schema union is open).",
       form({"c": raw_prop}), form_x({"c": raw_prop}))
    raw_items = {"type": "_icon", "set": "material"}
    prop = {"type": "array", "items": raw_items}
    ok("multi-select-items-custom", "acp.v1.union.open-unknown-kept",
       "A multi-select property whose items have the custom type \"_icon\" keeps the items raw without a warning.",
       form({"icons": prop}), form_x({"icons": prop}))
    bad("property-known-type-malformed", "acp.v1.union.known-tag-strict",
        "A number property whose `minimum` is a string is an error at that value (the known tag does not fall back to the open variant).",
        form({"n": {"type": "number", "minimum": "0"}}), "$.params.requestedSchema.properties.n.minimum")
    bad("property-array-missing-items", "acp.v1.union.known-tag-strict",
        "An array property without `items` is an error at `$.params.requestedSchema.properties.a`.",
        form({"a": {"type": "array"}}), "$.params.requestedSchema.properties.a")
    ok("schema-type-wrong-defaulted", "acp.v1.lenient.default-on-error",
       "A requested schema whose `type` is \"array\" (only \"object\" is allowed) gets the default \"object\" back with a warning.",
       {**form({}), "requestedSchema": {"type": "array", "properties": {}}}, form_x({}),
       ["$.params.requestedSchema.type"])
    ok("schema-required-list", R, "A requested schema with a `required` list keeps it.",
       form({"a": {"type": "string"}}, ["a"]), form_x({"a": {"type": "string"}}, ["a"]))
    ok("tool-call-id-number-dropped", "acp.v1.lenient.default-on-error",
       "A session-scoped elicitation whose toolCallId is a number drops it with a warning (the field defaults on error).",
       form({}, toolCallId=5), form_x({}), ["$.params.toolCallId"])

    P = pend(3, EL)

    def res(cid, requirement, desc, result, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc, x_response(3, EL, "CreateElicitationResponse", expect, warnings),
             input=resp(3, result), direction=C2A, pending=P)

    r = {"action": "_later", "remindAt": "2026-05-01"}
    res("action-custom", "acp.v1.union.open-unknown-kept",
        "An elicitation result with the custom action \"_later\" is kept raw without a warning (the action union is open).", r, r)
    r = {"action": "accept", "content": {"s": "x", "i": -3, "n": 2.5, "b": False, "arr": ["a"]}}
    res("accept-each-value-type", R,
        "An accepted elicitation whose content holds a string, an integer, a number, a boolean and a string array re-encodes unchanged.", r, r)
    r = {"action": "accept", "content": None}
    res("accept-content-null", "acp.v1.optional.three-state",
        "An accepted elicitation with \"content\": null keeps the explicit null.", r, r)
    case(f"{F}/accept-content-array-of-numbers", R,
         "An accepted elicitation whose content value is an array of numbers fails the call at that value.",
         x_call_failed(3, "$.result.content.a"), input=resp(3, {"action": "accept", "content": {"a": [1, 2]}}),
         direction=C2A, pending=P)



def build_lenient():
    F = f"{T}/lenient"
    D = "acp.v1.lenient.default-on-error"
    K = "acp.v1.lenient.skip-invalid-items"
    u = with_(TOOL_CALL_MIN, kind="bogus_kind")
    update_case(f"{F}/tool-call-kind-bogus", D,
                "A `tool_call` with kind \"bogus_kind\" is accepted; the kind is dropped (no schema default) with a warning.",
                u, TOOL_CALL_MIN, ["$.params.update.kind"])
    u = with_(TOOL_CALL_MIN, status="done")
    update_case(f"{F}/tool-call-status-bogus", D,
                "A `tool_call` with status \"done\" is accepted; the status is dropped with a warning.",
                u, TOOL_CALL_MIN, ["$.params.update.status"])
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "kind": 3, "title": ["x"]}
    update_case(f"{F}/tool-call-update-two-bad-fields", D,
                "A `tool_call_update` whose kind is a number and whose title is an array drops both with one warning each.",
                u, {"sessionUpdate": "tool_call_update", "toolCallId": "call_1"},
                ["$.params.update.kind", "$.params.update.title"])
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "content": "done", "locations": {"path": "/a"}}
    update_case(f"{F}/tool-call-update-arrays-wrong-shape", D,
                "A `tool_call_update` whose content is a string and whose locations is an object drops both with warnings.",
                u, {"sessionUpdate": "tool_call_update", "toolCallId": "call_1"},
                ["$.params.update.content", "$.params.update.locations"])
    u = with_(TOOL_CALL_MIN, locations=[{"path": "/a", "line": -1}, {"path": "/b", "line": 2}])
    update_case(f"{F}/location-line-negative", D,
                "A tool call location with line -1 (outside uint32) loses the line with a warning; the location itself is kept.",
                u, with_(TOOL_CALL_MIN, locations=[{"path": "/a"}, {"path": "/b", "line": 2}]),
                ["$.params.update.locations[0].line"])
    u = with_(TOOL_CALL_MIN, locations=[{"line": 3}, {"path": "/b"}])
    update_case(f"{F}/location-missing-path-skipped", K,
                "A tool call location without `path` is dropped with a warning and the other locations are kept.",
                u, with_(TOOL_CALL_MIN, locations=[{"path": "/b"}]), ["$.params.update.locations[0]"])
    u = {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN, "messageId": 12}
    update_case(f"{F}/message-id-number", D,
                "A message chunk whose messageId is a number drops the id with a warning.",
                u, {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN}, ["$.params.update.messageId"])
    prompt_case(f"{F}/meta-number", D,
                "Request params whose `_meta` is the number 5 are accepted; `_meta` is dropped with a warning.",
                prompt(TEXT_MIN, _meta=5), prompt(TEXT_MIN), ["$.params._meta"])
    prompt_case(f"{F}/meta-array", D,
                "Request params whose `_meta` is an array are accepted; `_meta` is dropped with a warning.",
                prompt(TEXT_MIN, _meta=["a"]), prompt(TEXT_MIN), ["$.params._meta"])
    prompt_case(f"{F}/meta-string-in-block", D,
                "A content block whose `_meta` is a string keeps the block and drops `_meta` with a warning at its path.",
                prompt(with_(TEXT_MIN, _meta="x")), prompt(TEXT_MIN), ["$.params.prompt[0]._meta"])
    b = with_(LINK_MIN, size="big", mimeType=5, title=False)
    prompt_case(f"{F}/resource-link-optional-fields-wrong", D,
                "A resource link whose size, mimeType and title have the wrong types keeps the link and drops the three fields with warnings.",
                prompt(b), prompt(LINK_MIN),
                ["$.params.prompt[0].size", "$.params.prompt[0].mimeType", "$.params.prompt[0].title"])
    b = with_(TEXT_MIN, annotations={"audience": ["user", "robot", "assistant"], "priority": "high"})
    prompt_case(f"{F}/annotations-bad-parts", D,
                "Annotations with an unknown audience role and a string priority drop the bad role (skip-invalid-items) and the priority (default-on-error), with warnings.",
                prompt(b), prompt(with_(TEXT_MIN, annotations={"audience": ["user", "assistant"]})),
                ["$.params.prompt[0].annotations.audience[1]", "$.params.prompt[0].annotations.priority"])
    b = with_(TEXT_MIN, annotations="important")
    prompt_case(f"{F}/annotations-not-object", D,
                "A text block whose annotations is a string keeps the block and drops the annotations with a warning.",
                prompt(b), prompt(TEXT_MIN), ["$.params.prompt[0].annotations"])
    P0 = pend(0, "initialize")

    def init_res(cid, requirement, desc, result, expect, warnings):
        case(f"{F}/{cid}", requirement, desc, x_response(0, "initialize", "InitializeResponse", expect, warnings),
             input=resp(0, result), direction=A2C, pending=P0)

    init_res("load-session-string", D,
             "An initialize result with \"loadSession\": \"yes\" is accepted with loadSession false (its default) and a warning.",
             {"protocolVersion": 1, "agentCapabilities": {"loadSession": "yes"}},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.agentCapabilities.loadSession"])
    init_res("agent-capabilities-string", D,
             "An initialize result whose agentCapabilities is a string gets the full default capabilities with a warning.",
             {"protocolVersion": 1, "agentCapabilities": "all"},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.agentCapabilities"])
    init_res("prompt-capabilities-image-string", D,
             "An initialize result with promptCapabilities.image \"true\" (a string) keeps the other flags and defaults image to false with a warning.",
             {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": {"image": "true", "audio": True}}},
             {"protocolVersion": 1,
              "agentCapabilities": with_(AGENT_CAPS_DEFAULT, promptCapabilities={"image": False, "audio": True, "embeddedContext": False}),
              "authMethods": []},
             ["$.result.agentCapabilities.promptCapabilities.image"])
    init_res("session-capability-list-true", D,
             "An initialize result with sessionCapabilities.list true (a boolean where an object marker is expected) drops the marker with a warning.",
             {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"list": True, "close": {}}}},
             {"protocolVersion": 1, "agentCapabilities": with_(AGENT_CAPS_DEFAULT, sessionCapabilities={"close": {}}),
              "authMethods": []},
             ["$.result.agentCapabilities.sessionCapabilities.list"])
    init_res("auth-methods-not-array", D,
             "An initialize result whose authMethods is an object gets the default empty list with a warning.",
             {"protocolVersion": 1, "authMethods": {"id": "x"}},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.authMethods"])
    init_res("agent-info-string", D,
             "An initialize result whose agentInfo is a string drops agentInfo with a warning.",
             {"protocolVersion": 1, "agentInfo": "my-agent 1.0"},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.agentInfo"])
    init_res("agent-info-missing-version", D,
             "An initialize result whose agentInfo lacks the required `version` drops agentInfo with a warning (the field defaults on error).",
             {"protocolVersion": 1, "agentInfo": {"name": "my-agent"}},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.agentInfo"])
    case(f"{F}/client-capabilities-fs-bool", D,
         "An initialize request whose clientCapabilities.fs is true (not an object) gets the default fs capabilities with a warning.",
         x_request("initialize", 1, "InitializeRequest",
                   {"protocolVersion": 1, "clientCapabilities": with_(CLIENT_CAPS_DEFAULT, terminal=True)},
                   ["$.params.clientCapabilities.fs"]),
         input=req("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": True, "terminal": True}}))
    case(f"{F}/client-capabilities-elicitation-bool", D,
         "An initialize request whose clientCapabilities.elicitation is true drops it with a warning (it is an optional object).",
         x_request("initialize", 1, "InitializeRequest", {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT},
                   ["$.params.clientCapabilities.elicitation"]),
         input=req("initialize", {"protocolVersion": 1, "clientCapabilities": {"elicitation": True}}))
    case(f"{F}/client-info-number", D,
         "An initialize request whose clientInfo is a number drops clientInfo with a warning.",
         x_request("initialize", 1, "InitializeRequest", {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT},
                   ["$.params.clientInfo"]),
         input=req("initialize", {"protocolVersion": 1, "clientInfo": 1}))
    cmds = [{"name": "review", "description": "Review"}, {"name": "broken"}, {"name": "test", "description": "Run tests"}]
    update_case(f"{F}/available-commands-bad-item", K,
                "An `available_commands_update` whose second command lacks `description` drops that command with a warning at `$.params.update.availableCommands[1]`.",
                {"sessionUpdate": "available_commands_update", "availableCommands": cmds},
                {"sessionUpdate": "available_commands_update", "availableCommands": [cmds[0], cmds[2]]},
                ["$.params.update.availableCommands[1]"])
    cmds = [{"name": "review", "description": "Review", "input": {"hint": 3}}]
    update_case(f"{F}/available-command-input-bad", D,
                "A command whose input hint is a number keeps the command and drops `input` with a warning.",
                {"sessionUpdate": "available_commands_update", "availableCommands": cmds},
                {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "review", "description": "Review"}]},
                ["$.params.update.availableCommands[0].input"])
    entries = [{"content": "a", "priority": "urgent", "status": "pending"}, {"content": "b", "priority": "low", "status": "pending"}]
    update_case(f"{F}/plan-entry-bad-priority", K,
                "A plan entry with the unknown priority \"urgent\" (a closed enum) is dropped with a warning and the other entries are kept.",
                {"sessionUpdate": "plan", "entries": entries},
                {"sessionUpdate": "plan", "entries": [entries[1]]}, ["$.params.update.entries[0]"])
    entries = ["just text", {"content": "b", "priority": "high", "status": "completed"}, 5]
    update_case(f"{F}/plan-entries-not-objects", K,
                "Plan entries that are not objects are dropped one by one with a warning each.",
                {"sessionUpdate": "plan", "entries": entries},
                {"sessionUpdate": "plan", "entries": [entries[1]]},
                ["$.params.update.entries[0]", "$.params.update.entries[2]"])
    opts = [CFG_SELECT_MIN, {"id": "x", "type": "select"}]
    update_case(f"{F}/config-option-update-bad-item", K,
                "A `config_option_update` whose second option lacks name, currentValue and options drops that option with a warning.",
                {"sessionUpdate": "config_option_update", "configOptions": opts},
                {"sessionUpdate": "config_option_update", "configOptions": [CFG_SELECT_MIN]},
                ["$.params.update.configOptions[1]"])
    cs = {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed",
          "summary": [TEXT_MIN, {"type": "text"}], "error": 5}
    update_case(f"{F}/compaction-summary-bad-block", K,
                "A compaction update with a malformed summary block and a numeric error drops both with warnings and keeps the rest.",
                cs, {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed", "summary": [TEXT_MIN]},
                ["$.params.update.summary[1]", "$.params.update.error"])
    u = {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": "0.1", "currency": "USD"}}
    update_case(f"{F}/usage-cost-malformed", D,
                "A usage update whose cost amount is a string drops the whole cost object with a warning (cost defaults on error).",
                u, {"sessionUpdate": "usage_update", "used": 1, "size": 2}, ["$.params.update.cost"])
    P = pend(3, "session/list")
    sessions = [{"sessionId": "s1", "cwd": "/a"}, {"sessionId": "s2"}, {"sessionId": "s3", "cwd": "/c", "title": 9,
                                                                        "additionalDirectories": ["/d", 1]}]
    case(f"{F}/sessions-bad-item", K,
         "A session list whose second entry lacks `cwd` drops it with a warning; the third keeps its entry but drops a bad title and a bad directory with warnings.",
         x_response(3, "session/list", "ListSessionsResponse",
                    {"sessions": [sessions[0], {"sessionId": "s3", "cwd": "/c", "additionalDirectories": ["/d"]}], "nextCursor": None},
                    ["$.result.sessions[1]", "$.result.sessions[2].title", "$.result.sessions[2].additionalDirectories[1]"]),
         input=resp(3, {"sessions": sessions, "nextCursor": None}), direction=A2C, pending=P)
    case(f"{F}/next-cursor-number", D,
         "A session list whose nextCursor is a number drops it with a warning.",
         x_response(3, "session/list", "ListSessionsResponse", {"sessions": []}, ["$.result.nextCursor"]),
         input=resp(3, {"sessions": [], "nextCursor": 2}), direction=A2C, pending=P)
    P = pend(3, "session/new")
    modes = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code"}]}
    case(f"{F}/available-modes-bad-item", K,
         "A session mode without `name` is dropped from availableModes with a warning and the rest of the result is kept.",
         x_response(3, "session/new", "NewSessionResponse",
                    {"sessionId": SID, "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}},
                    ["$.result.modes.availableModes[1]"]),
         input=resp(3, {"sessionId": SID, "modes": modes}), direction=A2C, pending=P)
    case(f"{F}/modes-missing-current-mode", D,
         "A new-session result whose modes object lacks `currentModeId` drops `modes` with a warning (the field defaults on error).",
         x_response(3, "session/new", "NewSessionResponse", {"sessionId": SID}, ["$.result.modes"]),
         input=resp(3, {"sessionId": SID, "modes": {"availableModes": []}}), direction=A2C, pending=P)
    case(f"{F}/config-options-not-array", D,
         "A new-session result whose configOptions is an object drops configOptions with a warning.",
         x_response(3, "session/new", "NewSessionResponse", {"sessionId": SID}, ["$.result.configOptions"]),
         input=resp(3, {"sessionId": SID, "configOptions": {"model": "fast"}}), direction=A2C, pending=P)
    P = pend(3, "terminal/wait_for_exit")
    case(f"{F}/exit-code-negative", D,
         "A wait_for_exit result with exitCode -1 (outside uint32) drops the exit code with a warning and keeps the signal.",
         x_response(3, "terminal/wait_for_exit", "WaitForTerminalExitResponse", {"signal": "SIGSEGV"}, ["$.result.exitCode"]),
         input=resp(3, {"exitCode": -1, "signal": "SIGSEGV"}), direction=C2A, pending=P)
    P = pend(3, "session/prompt")
    case(f"{F}/result-meta-number", D,
         "A prompt result whose `_meta` is a number keeps the stop reason and drops `_meta` with a warning.",
         x_response(3, "session/prompt", "PromptResponse", {"stopReason": "end_turn"}, ["$.result._meta"]),
         input=resp(3, {"stopReason": "end_turn", "_meta": 1}), direction=A2C, pending=P)
    case(f"{F}/required-field-not-lenient", "acp.v1.enum.closed-rejected",
         "A prompt result with stopReason \"error\" (not in the closed enum, and stopReason is required, not lenient) fails the call at `$.result.stopReason`.",
         x_call_failed(3, "$.result.stopReason"), input=resp(3, {"stopReason": "error"}), direction=A2C, pending=P)
    P = pend(3, "session/request_permission")
    case(f"{F}/permission-tool-call-kind-bogus", D,
         "A permission request whose tool call has an unknown kind is dispatched with the kind dropped and a warning.",
         x_request("session/request_permission", 1, "RequestPermissionRequest",
                   {"sessionId": SID, "toolCall": {"toolCallId": "call_1"}, "options": []}, ["$.params.toolCall.kind"]),
         input=req("session/request_permission", {"sessionId": SID, "toolCall": {"toolCallId": "call_1", "kind": "browse"}, "options": []}),
         direction=A2C)


def build_defaults():
    F = f"{T}/defaults"
    R = "acp.v1.defaults.filled"
    P0 = pend(0, "initialize")

    def init_res(cid, desc, result, expect):
        case(f"{F}/{cid}", R, desc, x_response(0, "initialize", "InitializeResponse", expect),
             input=resp(0, result), direction=A2C, pending=P0)

    init_res("agent-capabilities-empty",
             "An initialize result with \"agentCapabilities\": {} re-encodes with every capability default filled in.",
             {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []})
    init_res("agent-capabilities-partial",
             "An initialize result that sets only promptCapabilities.image and mcpCapabilities.http re-encodes with the sibling defaults filled in.",
             {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": {"image": True}, "mcpCapabilities": {"http": True}}},
             {"protocolVersion": 1,
              "agentCapabilities": with_(AGENT_CAPS_DEFAULT,
                                         promptCapabilities={"image": True, "audio": False, "embeddedContext": False},
                                         mcpCapabilities={"http": True, "sse": False}),
              "authMethods": []})
    init_res("session-capability-markers",
             "Empty object markers in sessionCapabilities and auth are kept as {} and no other marker is invented.",
             {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"list": {}, "resume": {}}, "auth": {"logout": {}}}},
             {"protocolVersion": 1,
              "agentCapabilities": with_(AGENT_CAPS_DEFAULT, sessionCapabilities={"list": {}, "resume": {}}, auth={"logout": {}}),
              "authMethods": []})
    init_res("session-capability-null-marker",
             "A null session capability marker (meaning unsupported) is kept as null.",
             {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"list": None}}},
             {"protocolVersion": 1, "agentCapabilities": with_(AGENT_CAPS_DEFAULT, sessionCapabilities={"list": None}),
              "authMethods": []})

    def init_req(cid, desc, params, expect):
        case(f"{F}/{cid}", R, desc, x_request("initialize", 1, "InitializeRequest", expect), input=req("initialize", params))

    init_req("client-capabilities-empty",
             "An initialize request with \"clientCapabilities\": {} re-encodes with fs, terminal and auth defaults filled in.",
             {"protocolVersion": 1, "clientCapabilities": {}},
             {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT})
    init_req("client-capabilities-fs-empty",
             "An initialize request with \"fs\": {} re-encodes both fs flags as false.",
             {"protocolVersion": 1, "clientCapabilities": {"fs": {}, "auth": {}}},
             {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT})
    init_req("client-capabilities-partial",
             "An initialize request that sets only fs.readTextFile keeps it and fills in the remaining defaults, leaving absent optional objects absent.",
             {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}, "session": {}}},
             {"protocolVersion": 1, "clientCapabilities": with_(CLIENT_CAPS_DEFAULT, fs={"readTextFile": True, "writeTextFile": False},
                                                                session={})})
    case(f"{F}/elicitation-schema-empty", R,
         "A form elicitation with an empty requestedSchema re-encodes with `type: \"object\"` and `properties: {}` filled in.",
         x_request(EL, 1, ET, form_x({})), input=req(EL, {"message": "Fill this in", "mode": "form", "sessionId": SID, "requestedSchema": {}}),
         direction=A2C)


def build_three_state():
    F = f"{T}/three-state"
    R = "acp.v1.optional.three-state"
    base = {"sessionUpdate": "session_info_update"}
    update_case(f"{F}/session-info-title-absent", R,
                "A session_info_update without `title` re-encodes without `title` (unchanged).", base, base)
    u = with_(base, title=None)
    update_case(f"{F}/session-info-title-null", R,
                "A session_info_update with \"title\": null re-encodes with an explicit null (clear), distinct from absent.", u, u)
    u = with_(base, title="New title")
    update_case(f"{F}/session-info-title-value", R,
                "A session_info_update with a title string re-encodes with that string (replace).", u, u)
    u = with_(base, title=None, updatedAt="2026-03-04T05:06:07Z")
    update_case(f"{F}/session-info-mixed", R,
                "A session_info_update that clears the title and sets updatedAt keeps both states.", u, u)
    u = with_(base, updatedAt=None, _meta=None)
    update_case(f"{F}/session-info-updated-at-and-meta-null", R,
                "A session_info_update with updatedAt and `_meta` both null keeps both explicit nulls.", u, u)
    c = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"}
    update_case(f"{F}/compaction-fields-absent", R,
                "A compaction_update without summary and error re-encodes without them (leave unchanged).", c, c)
    u = with_(c, summary=None, error=None)
    update_case(f"{F}/compaction-fields-null", R,
                "A compaction_update with summary and error null keeps the explicit nulls (clear).", u, u)
    u = with_(c, summary=[])
    update_case(f"{F}/compaction-summary-empty", R,
                "A compaction_update with an empty summary array keeps the empty array (distinct from null and absent).", u, u)
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "title": None, "content": None, "locations": None}
    update_case(f"{F}/tool-call-update-nulls", R,
                "A tool_call_update with title, content and locations null keeps the explicit nulls.", u, u)
    u = {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN, "messageId": None}
    update_case(f"{F}/message-id-null", R,
                "A message chunk with \"messageId\": null keeps the explicit null.", u, u)
    P = pend(3, "session/new")
    r = {"sessionId": SID, "modes": None, "configOptions": None}
    case(f"{F}/new-session-result-nulls", R,
         "A new-session result with modes and configOptions null keeps both explicit nulls.",
         x_response(3, "session/new", "NewSessionResponse", r), input=resp(3, r), direction=A2C, pending=P)



def build_strings():
    F = f"{T}/strings"
    R = "acp.v1.strings.unicode"
    text = '{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"sess_1","path":"/a\\ud800"}}\n'
    case(f"{F}/path-lone-surrogate", R, "A read_text_file request whose path holds a lone surrogate escape is answered with -32602 at `$.params.path`.",
         x_reply_error(-32602, 1, "$.params.path"), input_text=text, direction=A2C)


def build_numbers():
    F = f"{T}/numbers"
    R = "acp.v1.numbers.bounds"
    RD = "fs/read_text_file"

    def read(cid, desc, text, expect):
        case(f"{F}/{cid}", R, desc, expect, input_text=text, direction=A2C)

    base = '{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"sess_1","path":"/a",'
    ok = lambda extra: x_request(RD, 1, "ReadTextFileRequest", {"sessionId": SID, "path": "/a", **extra})
    read("uint32-line-negative", "A read_text_file request with line -1 (outside uint32, not lenient) is answered with -32602 at `$.params.line`.",
         base + '"line":-1}}\n', x_reply_error(-32602, 1, "$.params.line"))
    read("uint32-line-zero", "A read_text_file request with line 0 is inside uint32 and is dispatched (the 1-based convention is not a decoding rule).",
         base + '"line":0}}\n', ok({"line": 0}))
    read("uint32-limit-max", "A read_text_file request with limit 4294967295 (the largest uint32) is dispatched with that limit.",
         base + '"limit":4294967295}}\n', ok({"limit": 4294967295}))
    read("uint32-limit-overflow", "A read_text_file request with limit 4294967296 (one above uint32) is answered with -32602 at `$.params.limit`.",
         base + '"limit":4294967296}}\n', x_reply_error(-32602, 1, "$.params.limit"))
    read("uint32-line-fraction", "A read_text_file request with line 1.5 is answered with -32602 at `$.params.line`.",
         base + '"line":1.5}}\n', x_reply_error(-32602, 1, "$.params.line"))
    read("uint32-line-exponent-fraction", "A read_text_file request with line 2.5e0 (a fraction in exponent form) is answered with -32602 at `$.params.line`.",
         base + '"line":2.5e0}}\n', x_reply_error(-32602, 1, "$.params.line"))
    read("uint32-line-null", "A read_text_file request with \"line\": null is dispatched and keeps the explicit null.",
         base + '"line":null}}\n', ok({"line": None}))
    ib = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
    iok = lambda v: x_request("initialize", 1, "InitializeRequest", {"protocolVersion": v, "clientCapabilities": CLIENT_CAPS_DEFAULT})
    case(f"{F}/uint16-protocol-version-max", R, "An initialize request with protocolVersion 65535 (the largest uint16) is dispatched.",
         iok(65535), input_text=ib + "65535}}\n")
    case(f"{F}/uint16-protocol-version-overflow", R, "An initialize request with protocolVersion 65536 (one above uint16) is answered with -32602 at `$.params.protocolVersion`.",
         x_reply_error(-32602, 1, "$.params.protocolVersion"), input_text=ib + "65536}}\n")
    case(f"{F}/uint16-protocol-version-negative", R, "An initialize request with protocolVersion -1 is answered with -32602 at `$.params.protocolVersion`.",
         x_reply_error(-32602, 1, "$.params.protocolVersion"), input_text=ib + "-1}}\n")
    case(f"{F}/uint16-protocol-version-zero", R, "An initialize request with protocolVersion 0 is inside uint16 and is dispatched.",
         iok(0), input_text=ib + "0}}\n")
    case(f"{F}/uint16-protocol-version-beyond-double", R, "An initialize request with protocolVersion 1e400 (beyond a double) is answered with -32602 at `$.params.protocolVersion`.",
         x_reply_error(-32602, 1, "$.params.protocolVersion"), input_text=ib + "1e400}}\n")
    case(f"{F}/uint16-protocol-version-fraction", R, "An initialize request with protocolVersion 1.5 is answered with -32602 at `$.params.protocolVersion`.",
         x_reply_error(-32602, 1, "$.params.protocolVersion"), input_text=ib + "1.5}}\n")
    tb = '{"jsonrpc":"2.0","id":1,"method":"terminal/create","params":{"sessionId":"sess_1","command":"ls","outputByteLimit":'
    case(f"{F}/uint64-output-limit-max", R, "A terminal/create request with outputByteLimit 18446744073709551615 (the largest uint64) is dispatched with that exact value.",
         x_request("terminal/create", 1, "CreateTerminalRequest", {"sessionId": SID, "command": "ls", "outputByteLimit": 18446744073709551615}),
         input_text=tb + "18446744073709551615}}\n", direction=A2C)
    case(f"{F}/uint64-output-limit-overflow", R, "A terminal/create request with outputByteLimit 18446744073709551616 (one above uint64) is answered with -32602 at `$.params.outputByteLimit`.",
         x_reply_error(-32602, 1, "$.params.outputByteLimit"), input_text=tb + "18446744073709551616}}\n", direction=A2C)
    case(f"{F}/uint64-output-limit-negative", R, "A terminal/create request with outputByteLimit -1 is answered with -32602 at `$.params.outputByteLimit`.",
         x_reply_error(-32602, 1, "$.params.outputByteLimit"), input_text=tb + "-1}}\n", direction=A2C)
    ub = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"usage_update",'
    case(f"{F}/uint64-usage-max", R, "A usage update with used and size at the largest uint64 is dispatched with the exact values.",
         x_notification(SU, SN, upd({"sessionUpdate": "usage_update", "used": 18446744073709551615, "size": 18446744073709551615})),
         input_text=ub + '"used":18446744073709551615,"size":18446744073709551615}}}\n', direction=A2C)
    case(f"{F}/uint64-usage-negative", R, "A usage update with used -5 is dropped as an invalid notification.",
         x_ignored("invalid-notification"), input_text=ub + '"used":-5,"size":10}}}\n', direction=A2C)
    case(f"{F}/uint64-usage-fraction", R, "A usage update with size 10.5 is dropped as an invalid notification.",
         x_ignored("invalid-notification"), input_text=ub + '"used":5,"size":10.5}}}\n', direction=A2C)
    case(f"{F}/double-cost-amount", R, "A usage cost with a fractional amount, written in exponent form, is dispatched with the same value.",
         x_notification(SU, SN, upd({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 0.0125, "currency": "EUR"}})),
         input_text=ub + '"used":1,"size":2,"cost":{"amount":1.25e-2,"currency":"EUR"}}}}\n', direction=A2C)
    case(f"{F}/double-cost-amount-integer", R, "A usage cost whose amount is the integer 3 is a valid double and is dispatched with the value 3.",
         x_notification(SU, SN, upd({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 3, "currency": "USD"}})),
         input_text=ub + '"used":1,"size":2,"cost":{"amount":3,"currency":"USD"}}}}\n', direction=A2C)
    eb = '{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","mode":"form","sessionId":"sess_1","requestedSchema":{"properties":{"n":{"type":"integer","minimum":'
    case(f"{F}/int64-integer-property-min", R, "An integer property whose minimum is the smallest int64 is accepted with the exact value.",
         x_request(EL, 1, ET, {"message": "m", "mode": "form", "sessionId": SID,
                               "requestedSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": -9223372036854775808}}}}),
         input_text=eb + "-9223372036854775808}}}}}\n", direction=A2C)
    case(f"{F}/int64-integer-property-overflow", R, "An integer property whose minimum is 9223372036854775808 (one above int64) is answered with -32602 at that value.",
         x_reply_error(-32602, 1, "$.params.requestedSchema.properties.n.minimum"),
         input_text=eb + "9223372036854775808}}}}}\n", direction=A2C)
    pb = '{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"resource_link","uri":"file:///a","name":"a","size":'
    case(f"{F}/int64-size-overflow-lenient", "acp.v1.lenient.default-on-error",
         "A resource link whose size is one above int64 keeps the link and drops the size with a warning (size defaults on error).",
         x_request(PR, 1, "PromptRequest", prompt({"type": "resource_link", "uri": "file:///a", "name": "a"}), ["$.params.prompt[0].size"]),
         input_text=pb + "9223372036854775808}]}}\n")
    case(f"{F}/int64-size-negative", R, "A resource link with size -1 is inside int64 and is kept (the field is signed).",
         x_request(PR, 1, "PromptRequest", prompt({"type": "resource_link", "uri": "file:///a", "name": "a", "size": -1})),
         input_text=pb + "-1}]}}\n")


def build_meta_and_unknown_fields():
    F = f"{T}/meta"
    R = "acp.v1.meta.verbatim"
    meta = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "vendor=abc",
            "baggage": "user=alice", "zed.dev": {"nested": {"deep": [1, {"x": None}, "s"]}, "flag": True}, "n": 1.5}
    prompt_case(f"{F}/reserved-and-nested-keys", R,
                "`_meta` holding the reserved trace keys and nested vendor objects is kept verbatim.",
                prompt(TEXT_MIN, _meta=meta), prompt(TEXT_MIN, _meta=meta))
    prompt_case(f"{F}/empty", R, "An empty `_meta` object is kept as {}.", prompt(TEXT_MIN, _meta={}), prompt(TEXT_MIN, _meta={}))
    prompt_case(f"{F}/null", "acp.v1.optional.three-state", "\"_meta\": null is kept as an explicit null.",
                prompt(TEXT_MIN, _meta=None), prompt(TEXT_MIN, _meta=None))
    inner = with_(TEXT_MIN, _meta={"a": {"b": "c"}}, annotations={"_meta": {"d": []}})
    prompt_case(f"{F}/on-nested-objects", R,
                "`_meta` on a content block and on its annotations is kept verbatim at each level.",
                prompt(inner), prompt(inner))
    p = prompt(TEXT_MIN)
    case(f"{F}/duplicate-key-inside", R,
         "Repeated keys inside `_meta` are not checked (it is free-form JSON) and the request is dispatched.",
         x_request(PR, 1, "PromptRequest", {"sessionId": "sess_1", "prompt": [{"type": "text", "text": "Hello"}], "_meta": {"k": 2}}),
         input_text='{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"text","text":"Hello"}],"_meta":{"k":1,"k":2}}}\n')
    r = {"stopReason": "end_turn", "_meta": {"usage": {"inputTokens": 10, "outputTokens": 20}}}
    case(f"{F}/in-result", R, "`_meta` on a prompt result is kept verbatim.",
         x_response(3, PR, "PromptResponse", r), input=resp(3, r), direction=A2C, pending=pend(3, PR))
    raw_in = {"cmd": ["ls", "-la"], "env": None, "n": 0, "deep": {"x": {"y": {"z": []}}}}
    u = with_(TOOL_CALL_MIN, rawInput=raw_in, rawOutput="plain string")
    update_case(f"{F}/raw-input-output-free-form", R,
                "A tool call's rawInput (nested object) and rawOutput (a plain string) are free-form and kept verbatim.", u, u)

    F = f"{T}/unknown-fields"
    R = "acp.v1.fields.unknown-dropped"
    prompt_case(f"{F}/params-top-level", R, "Unknown members at the top of request params are accepted and dropped on re-encoding.",
                prompt(TEXT_MIN, priority="high", extra={"a": 1}), prompt(TEXT_MIN))
    prompt_case(f"{F}/in-content-block", R, "An unknown member inside a known content block is accepted and dropped on re-encoding.",
                prompt(with_(TEXT_MIN, format="markdown")), prompt(TEXT_MIN))
    u = with_(TOOL_CALL_MIN, progress=0.5)
    update_case(f"{F}/in-session-update", R, "An unknown member inside a known session update is accepted and dropped on re-encoding.",
                u, TOOL_CALL_MIN)
    case(f"{F}/in-result", R, "An unknown member in a prompt result is accepted and dropped on re-encoding.",
         x_response(3, PR, "PromptResponse", {"stopReason": "refusal"}),
         input=resp(3, {"stopReason": "refusal", "reason": "policy"}), direction=A2C, pending=pend(3, PR))
    case(f"{F}/in-capabilities", R, "Unknown capability flags in clientCapabilities are accepted and dropped on re-encoding (custom ones belong in `_meta`).",
         x_request("initialize", 1, "InitializeRequest", {"protocolVersion": 1, "clientCapabilities": with_(CLIENT_CAPS_DEFAULT, terminal=True)}),
         input=req("initialize", {"protocolVersion": 1, "clientCapabilities": {"terminal": True, "nes": True, "holodeck": {}}}))
    case(f"{F}/in-notification", R, "An unknown member in `session/cancel` params is accepted and dropped on re-encoding.",
         x_notification("session/cancel", "CancelNotification", {"sessionId": SID}),
         input=notif("session/cancel", {"sessionId": SID, "reason": "user"}))


def build_duplicate_keys():
    F = f"{T}/duplicate-keys"
    R = "acp.v1.params.duplicate-keys"
    case(f"{F}/params-session-id", R,
         "Request params in which the known key `sessionId` appears twice are answered with -32602.",
         x_reply_error(-32602, 1),
         input_text='{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"a","sessionId":"b","prompt":[]}}\n')
    case(f"{F}/nested-known-key", R,
         "A content block in which the known key `text` appears twice makes the request fail with -32602.",
         x_reply_error(-32602, 1),
         input_text='{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"a","prompt":[{"type":"text","text":"x","text":"y"}]}}\n')
    case(f"{F}/params-unknown-key", R,
         "Request params in which an unknown key appears twice are dispatched normally.",
         x_request(PR, 1, "PromptRequest", {"sessionId": "a", "prompt": []}),
         input_text='{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"a","prompt":[],"x":1,"x":2}}\n')
    case(f"{F}/raw-input-key", R,
         "Repeated keys inside a tool call's free-form rawInput are not checked and the notification is dispatched.",
         x_notification(SU, SN, {"sessionId": "a", "update": {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "rawInput": {"a": 2}}}),
         input_text='{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","rawInput":{"a":1,"a":2}}}}\n',
         direction=A2C)
    case(f"{F}/result-known-key", R,
         "A prompt result in which `stopReason` appears twice fails the pending call at the repeated key.",
         x_call_failed(3, "$.result.stopReason"),
         input_text='{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","stopReason":"cancelled"}}\n',
         direction=A2C, pending=pend(3, PR))


def build_default_on_null():
    """`x-deserialize-default-on-null`: `null` reads as the field's empty value, with a warning."""
    F = f"{T}/default-on-null"
    R = "acp.v1.lenient.default-on-null"
    stdio = {"name": "fs", "command": "/bin/mcp", "args": [], "env": []}
    case(f"{F}/session-new-mcp-servers-null", R,
         "session/new with `mcpServers: null` (required, annotated default-on-null) decodes with an empty list and a warning.",
         x_request("session/new", 1, "NewSessionRequest", {"cwd": "/repo", "mcpServers": []}, ["$.params.mcpServers"]),
         input=req("session/new", {"cwd": "/repo", "mcpServers": None}))
    case(f"{F}/mcp-stdio-env-null", R,
         "A stdio MCP server with `env: null` decodes with an empty env and a warning at that member.",
         x_request("session/new", 1, "NewSessionRequest", {"cwd": "/repo", "mcpServers": [stdio]},
                   ["$.params.mcpServers[0].env"]),
         input=req("session/new", {"cwd": "/repo", "mcpServers": [{**stdio, "env": None}]}))
    case(f"{F}/mcp-http-headers-null", R,
         "An HTTP MCP server with `headers: null` decodes with no headers and a warning.",
         x_request("session/new", 1, "NewSessionRequest",
                   {"cwd": "/repo", "mcpServers": [{"type": "http", "name": "h", "url": "https://mcp.example.com", "headers": []}]},
                   ["$.params.mcpServers[0].headers"]),
         input=req("session/new", {"cwd": "/repo", "mcpServers": [{"type": "http", "name": "h", "url": "https://mcp.example.com", "headers": None}]}))
    case(f"{F}/terminal-create-args-null", R,
         "terminal/create with `args: null` (optional, default-on-null) decodes as if `args` were absent, with a warning.",
         x_request("terminal/create", 1, "CreateTerminalRequest", {"sessionId": "sess_1", "command": "ls"}, ["$.params.args"]),
         input=req("terminal/create", {"sessionId": "sess_1", "command": "ls", "args": None}), direction=A2C)


def build_unions_misc():
    F = f"{T}/unions"
    P = pend(3, "session/request_permission")
    r = {"outcome": {"outcome": "deferred", "until": "later"}}
    case(f"{F}/permission-outcome-unknown", "acp.v1.union.closed-unknown-kept",
         "A permission result with the unknown outcome \"deferred\" is kept raw as an unknown variant with a warning at `$.result.outcome`.",
         x_response(3, "session/request_permission", "RequestPermissionResponse", r, ["$.result.outcome"]),
         input=resp(3, r), direction=C2A, pending=P)
    case(f"{F}/permission-outcome-missing-tag", "acp.v1.union.known-tag-strict",
         "A permission result whose outcome object has no `outcome` tag fails the call at `$.result.outcome`.",
         x_call_failed(3, "$.result.outcome"), input=resp(3, {"outcome": {"optionId": "allow"}}), direction=C2A, pending=P)
    r = {"outcome": {"outcome": "cancelled"}}
    case(f"{F}/permission-outcome-cancelled", "acp.v1.type.permission-outcome",
         "A permission result with the cancelled outcome is decoded as that variant.",
         x_response(3, "session/request_permission", "RequestPermissionResponse", r), input=resp(3, r), direction=C2A, pending=P)
    P = pend(3, "session/new")
    for sev in ("info", "warning", "error"):
        u = {"sessionUpdate": "notice", "severity": sev, "title": "t"}
        update_case(f"{F}/notice-severity-{sev}", "acp.v1.type.session-update",
                    f"A notice with severity \"{sev}\" is dispatched with that severity.", u, u)
    u = {"sessionUpdate": "notice", "severity": "critical", "title": "Disk full"}
    update_case(f"{F}/notice-severity-unknown", "acp.v1.union.open-unknown-kept",
                "A notice with the unknown severity \"critical\" keeps it as a string without a warning (the severity enum is open).", u, u)
    u = {"sessionUpdate": "notice", "severity": "_debug", "title": "Trace"}
    update_case(f"{F}/notice-severity-custom", "acp.v1.union.open-unknown-kept",
                "A notice with the custom severity \"_debug\" keeps it without a warning.", u, u)
    for st in ("in_progress", "completed", "failed", "cancelled"):
        u = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": st}
        update_case(f"{F}/compaction-status-{st.replace('_', '-')}", "acp.v1.type.session-update",
                    f"A compaction update with status \"{st}\" is dispatched with that status.", u, u)
    u = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "paused"}
    update_case(f"{F}/compaction-status-unknown", "acp.v1.union.open-unknown-kept",
                "A compaction update with the unknown status \"paused\" keeps it without a warning (the status enum is open).", u, u)
    update_bad(f"{F}/notice-severity-not-string", "acp.v1.type.session-update",
               "A notice whose severity is the number 2 (not a string) is dropped as an invalid notification.",
               {"sessionUpdate": "notice", "severity": 2, "title": "t"})
    u = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "status": "cancelled"}
    update_case(f"{F}/tool-status-v2-value", "acp.v1.lenient.default-on-error",
                "A tool call with the v2-only status \"cancelled\" (unknown to the closed v1 enum) drops the status with a warning.",
                u, {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t"}, ["$.params.update.status"])
    u = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "kind": "unknown"}
    update_case(f"{F}/tool-kind-v2-value", "acp.v1.lenient.default-on-error",
                "A tool call with the v2-only kind \"unknown\" drops the kind with a warning.",
                u, {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t"}, ["$.params.update.kind"])
