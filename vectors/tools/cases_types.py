"""ACP v1 type cases: session updates, content, tool-call content, MCP servers, auth methods, config options."""

from __future__ import annotations

from vectorlib import *  # noqa: F403
from fixtures import *  # noqa: F403


def build_session_updates():
    F = f"{T}/session-update"
    R = "acp.v1.type.session-update"
    chunk_min = lambda k: {"sessionUpdate": k, "content": TEXT_MIN}
    chunk_max = lambda k: {"sessionUpdate": k, "content": TEXT_MAX, "messageId": "msg_1", "_meta": mt(k)}
    variants = {
        "user_message_chunk": (chunk_min("user_message_chunk"), chunk_max("user_message_chunk")),
        "agent_message_chunk": (chunk_min("agent_message_chunk"), chunk_max("agent_message_chunk")),
        "agent_thought_chunk": (chunk_min("agent_thought_chunk"), chunk_max("agent_thought_chunk")),
        "tool_call": (TOOL_CALL_MIN, TOOL_CALL_MAX),
        "tool_call_update": ({"sessionUpdate": "tool_call_update", "toolCallId": "call_1"},
                             {"sessionUpdate": "tool_call_update", **TOOL_UPDATE_FIELDS}),
        "plan": ({"sessionUpdate": "plan", "entries": []},
                 {"sessionUpdate": "plan", "entries": [
                     {"content": "Read the code", "priority": "high", "status": "completed", "_meta": mt("entry.1")},
                     {"content": "Write the fix", "priority": "medium", "status": "in_progress", "_meta": mt("entry.2")},
                     {"content": "Run the tests", "priority": "low", "status": "pending", "_meta": mt("entry.3")}],
                  "_meta": mt("plan")}),
        "available_commands_update": ({"sessionUpdate": "available_commands_update", "availableCommands": []},
                                      {"sessionUpdate": "available_commands_update", "availableCommands": [
                                          {"name": "review", "description": "Review the diff",
                                           "input": {"hint": "what to focus on", "_meta": mt("input")}, "_meta": mt("command")}],
                                       "_meta": mt("available_commands_update")}),
        "current_mode_update": ({"sessionUpdate": "current_mode_update", "currentModeId": "code"},
                                {"sessionUpdate": "current_mode_update", "currentModeId": "code", "_meta": mt("current_mode_update")}),
        "config_option_update": ({"sessionUpdate": "config_option_update", "configOptions": []},
                                 {"sessionUpdate": "config_option_update",
                                  "configOptions": [CFG_SELECT_FLAT, CFG_SELECT_GROUPED, CFG_BOOLEAN],
                                  "_meta": mt("config_option_update")}),
        "session_info_update": ({"sessionUpdate": "session_info_update"},
                                {"sessionUpdate": "session_info_update", "title": "Fix the build",
                                 "updatedAt": "2026-03-04T05:06:07Z", "_meta": mt("session_info_update")}),
        "usage_update": ({"sessionUpdate": "usage_update", "used": 1200, "size": 200000},
                         {"sessionUpdate": "usage_update", "used": 1200, "size": 200000,
                          "cost": {"amount": 0.42, "currency": "USD", "_meta": mt("cost")}, "_meta": mt("usage_update")}),
        "notice": ({"sessionUpdate": "notice", "severity": "info", "title": "Heads up"},
                   {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited",
                    "description": "Retrying in 10 seconds", "_meta": mt("notice")}),
        "compaction_update": ({"sessionUpdate": "compaction_update", "compactionId": "cmp_1", "status": "in_progress"},
                              {"sessionUpdate": "compaction_update", "compactionId": "cmp_1", "status": "failed",
                               "summary": [TEXT_MAX], "error": "context too large", "_meta": mt("compaction_update")}),
        "compaction_summary_chunk": ({"sessionUpdate": "compaction_summary_chunk", "compactionId": "cmp_1", "content": TEXT_MIN},
                                     {"sessionUpdate": "compaction_summary_chunk", "compactionId": "cmp_1", "content": TEXT_MAX,
                                      "_meta": mt("compaction_summary_chunk")}),
        # Stable since schema crate 1.20.0 (unstable before): plans by id, subagents, messages
        # between sessions.
        "plan_update": ({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "plan_1", "entries": []}},
                        {"sessionUpdate": "plan_update",
                         "plan": {"type": "markdown", "planId": "plan_1", "content": "# Plan\n1. Read the code",
                                  "path": "/home/user/project/PLAN.md", "_meta": mt("markdown")},
                         "_meta": mt("plan_update")}),
        "plan_removed": ({"sessionUpdate": "plan_removed", "planId": "plan_1"},
                         {"sessionUpdate": "plan_removed", "planId": "plan_1", "_meta": mt("plan_removed")}),
        "subagent_update": ({"sessionUpdate": "subagent_update", "sessionId": "sess_child"},
                            {"sessionUpdate": "subagent_update", "sessionId": "sess_child", "title": "Test runner",
                             "description": "Runs the test suite", "capabilities": {"cancel": {"_meta": mt("cancel")},
                                                                                    "_meta": mt("capabilities")},
                             "state": {"state": "idle", "stopReason": "end_turn", "_meta": mt("state")},
                             "cwd": "/home/user/project", "additionalDirectories": ["/opt/data"],
                             "_meta": mt("subagent_update")}),
        "session_message": ({"sessionUpdate": "session_message", "messageId": "msg_1"},
                            {"sessionUpdate": "session_message", "messageId": "msg_1", "senderSessionId": "sess_child",
                             "recipientSessionId": "sess_parent", "senderMessageId": "msg_0",
                             "recipientMessageId": "msg_2", "content": [TEXT_MAX], "_meta": mt("session_message")}),
        "session_message_chunk": ({"sessionUpdate": "session_message_chunk", "messageId": "msg_1", "content": TEXT_MIN},
                                  {"sessionUpdate": "session_message_chunk", "messageId": "msg_1", "content": TEXT_MAX,
                                   "_meta": mt("session_message_chunk")}),
    }
    assert len(variants) == 19
    for kind, (mn, mx) in variants.items():
        update_case(f"{F}/{kind}-min", R,
                    f"A `{kind}` session update with only its required members is dispatched and re-encodes unchanged.", mn, mn)
        update_case(f"{F}/{kind}-max", R,
                    f"A `{kind}` session update with every optional member and `_meta` everywhere is dispatched and re-encodes unchanged.",
                    mx, mx)
        max_check(f"{F}/{kind}-max", "SessionUpdate", mx, "$.params.update")
    for st in ("pending", "in_progress", "completed", "failed"):
        u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": st}
        update_case(f"{F}/tool_call_update-status-{st.replace('_', '-')}", R,
                    f"A `tool_call_update` with status \"{st}\" is dispatched with that status.", u, u)
    for k in ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"):
        u = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "t", "kind": k}
        update_case(f"{F}/tool_call-kind-{k.replace('_', '-')}", R,
                    f"A `tool_call` with kind \"{k}\" is dispatched with that kind.", u, u)
    raw = {"sessionUpdate": "future_kind", "widgetId": "w1", "payload": {"a": [1, 2]}}
    update_case(f"{F}/unknown-kind", "acp.v1.union.closed-unknown-kept",
                "A session update with the unknown tag \"future_kind\" is dispatched as an unknown variant that keeps the raw JSON, with a warning at `$.params.update`.",
                raw, raw, ["$.params.update"])
    update_bad(f"{F}/known-kind-malformed", "acp.v1.union.known-tag-strict",
               "A `tool_call` update without the required `title` fails validation (it does not fall back to the unknown variant) and the notification is dropped.",
               {"sessionUpdate": "tool_call", "toolCallId": "call_1"})
    update_bad(f"{F}/missing-tag", "acp.v1.union.known-tag-strict",
               "A session update object without `sessionUpdate` matches no variant and the notification is dropped.",
               {"content": TEXT_MIN})
    update_bad(f"{F}/tag-not-string", "acp.v1.union.known-tag-strict",
               "A session update whose `sessionUpdate` is the number 3 is malformed and the notification is dropped.",
               {"sessionUpdate": 3, "content": TEXT_MIN})
    update_bad(f"{F}/current_mode_update-mode-id", "acp.v1.current-mode-update.field",
               "A `current_mode_update` carrying `modeId` (as the prose docs show) instead of the required `currentModeId` is dropped as invalid.",
               {"sessionUpdate": "current_mode_update", "modeId": "code"})
    update_bad(f"{F}/usage_update-missing-size", R,
               "A `usage_update` without the required `size` is dropped as invalid.",
               {"sessionUpdate": "usage_update", "used": 10})
    update_bad(f"{F}/notice-empty-title", R,
               "A `notice` whose title is the empty string violates `minLength: 1` and the notification is dropped.",
               {"sessionUpdate": "notice", "severity": "info", "title": ""})
    update_bad(f"{F}/plan-missing-entries", R,
               "A `plan` update without the required `entries` array is dropped as invalid.",
               {"sessionUpdate": "plan"})
    update_bad(f"{F}/agent_message_chunk-missing-content", R,
               "An `agent_message_chunk` without `content` is dropped as invalid.",
               {"sessionUpdate": "agent_message_chunk", "messageId": "m1"})
    update_bad(f"{F}/tool_call_update-missing-id", R,
               "A `tool_call_update` without `toolCallId` is dropped as invalid.",
               {"sessionUpdate": "tool_call_update", "status": "completed"})
    case(f"{F}/missing-session-id", R,
         "A `session/update` notification without `sessionId` is dropped as invalid.",
         x_ignored("invalid-notification"), input=notif(SU, {"update": {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN}}),
         direction=A2C)



def build_content_blocks():
    F = f"{T}/content-block"
    R = "acp.v1.type.content-block"
    blocks = {"text": (TEXT_MIN, TEXT_MAX), "image": (IMAGE_MIN, IMAGE_MAX), "audio": (AUDIO_MIN, AUDIO_MAX),
              "resource_link": (LINK_MIN, LINK_MAX), "resource-text": (RES_TEXT_MIN, RES_TEXT_MAX),
              "resource-blob": (RES_BLOB_MIN, RES_BLOB_MAX)}
    for kind, (mn, mx) in blocks.items():
        prompt_case(f"{F}/{kind}-min", R if not kind.startswith("resource-") else "acp.v1.union.untagged-structural",
                    f"A prompt holding one minimal `{kind}` content block is dispatched and re-encodes unchanged.",
                    prompt(mn), prompt(mn))
        prompt_case(f"{F}/{kind}-max", R if not kind.startswith("resource-") else "acp.v1.union.untagged-structural",
                    f"A prompt holding one `{kind}` content block with every optional member (annotations, `_meta`) is dispatched and re-encodes unchanged.",
                    prompt(mx), prompt(mx))
        max_check(f"{F}/{kind}-max", "ContentBlock", mx, "$.params.prompt[0]")
    raw = {"type": "video", "data": "AAAA", "mimeType": "video/mp4", "durationMs": 1200}
    prompt_case(f"{F}/unknown-type-video", "acp.v1.union.closed-unknown-kept",
                "A prompt block with the unknown type \"video\" is kept as an unknown variant holding the raw JSON, with a warning at `$.params.prompt[1]`.",
                prompt(TEXT_MIN, raw), prompt(TEXT_MIN, raw), ["$.params.prompt[1]"])
    update_case(f"{F}/unknown-type-in-chunk", "acp.v1.union.closed-unknown-kept",
                "An `agent_message_chunk` whose content block has the unknown type \"video\" is dispatched with the raw block kept and a warning at `$.params.update.content`.",
                {"sessionUpdate": "agent_message_chunk", "content": raw},
                {"sessionUpdate": "agent_message_chunk", "content": raw}, ["$.params.update.content"])
    prompt_bad(f"{F}/missing-type", "acp.v1.union.known-tag-strict",
               "A prompt block without `type` matches no variant and the request is answered with -32602 at `$.params.prompt[0]`.",
               prompt({"text": "Hello"}), "$.params.prompt[0]")
    prompt_bad(f"{F}/type-not-string", "acp.v1.union.known-tag-strict",
               "A prompt block whose `type` is the number 1 is answered with -32602 at `$.params.prompt[0].type`.",
               prompt({"type": 1, "text": "Hello"}), "$.params.prompt[0].type")
    prompt_bad(f"{F}/text-missing-text", "acp.v1.union.known-tag-strict",
               "A `text` block without `text` is an error at `$.params.prompt[0]` (a known tag never falls back to the unknown variant).",
               prompt({"type": "text"}), "$.params.prompt[0]")
    prompt_bad(f"{F}/text-text-number", "acp.v1.union.known-tag-strict",
               "A `text` block whose `text` is a number is an error at `$.params.prompt[0].text`.",
               prompt({"type": "text", "text": 5}), "$.params.prompt[0].text")
    prompt_bad(f"{F}/image-missing-mime-type", "acp.v1.union.known-tag-strict",
               "An `image` block without `mimeType` is an error at `$.params.prompt[0]`.",
               prompt({"type": "image", "data": "iVBORw0KGgo="}), "$.params.prompt[0]")
    prompt_bad(f"{F}/resource_link-missing-uri", "acp.v1.union.known-tag-strict",
               "A `resource_link` block without `uri` is an error at `$.params.prompt[0]`.",
               prompt({"type": "resource_link", "name": "a"}), "$.params.prompt[0]")
    prompt_bad(f"{F}/resource-neither-text-nor-blob", "acp.v1.union.untagged-structural",
               "An embedded resource with neither `text` nor `blob` matches no variant and is an error at `$.params.prompt[0].resource`.",
               prompt({"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain"}}), "$.params.prompt[0].resource")
    prompt_bad(f"{F}/resource-missing-uri", "acp.v1.union.untagged-structural",
               "An embedded text resource without `uri` is an error at `$.params.prompt[0].resource`.",
               prompt({"type": "resource", "resource": {"text": "x"}}), "$.params.prompt[0].resource")
    prompt_bad(f"{F}/prompt-item-not-object", R,
               "A prompt array holding a bare string instead of a block is an error at `$.params.prompt[0]`.",
               prompt("Hello"), "$.params.prompt[0]")


def build_tool_call_content():
    F = f"{T}/tool-call-content"
    R = "acp.v1.type.tool-call-content"
    for name, item in (("content", TCC_CONTENT), ("diff", TCC_DIFF), ("terminal", TCC_TERMINAL)):
        u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "content": [item]}
        update_case(f"{F}/{name}", R,
                    f"A tool call update whose content is one `{name}` item is dispatched and re-encodes unchanged.", u, u)
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1",
         "content": [{"type": "diff", "path": "/repo/new.txt", "newText": "hello"}]}
    update_case(f"{F}/diff-new-file", R,
                "A `diff` item without `oldText` (a new file) is dispatched and re-encodes without `oldText`.", u, u)
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1",
         "content": [{"type": "diff", "path": "/repo/gone.txt", "oldText": None, "newText": ""}]}
    update_case(f"{F}/diff-old-text-null", "acp.v1.optional.three-state",
                "A `diff` item with \"oldText\": null keeps the explicit null on re-encoding.", u, u)
    raw = {"type": "widget", "widgetId": "w-9", "props": {"x": 1}}
    u = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Render", "content": [TCC_CONTENT, raw]}
    update_case(f"{F}/unknown-type-widget", "acp.v1.union.closed-unknown-kept",
                "A tool call content item with the unknown type \"widget\" is kept as an unknown variant with its raw JSON and a warning at its path.",
                u, u, ["$.params.update.content[1]"])
    u = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Edit",
         "content": [{"type": "diff", "path": "/repo/a.txt"}, TCC_TERMINAL]}
    update_case(f"{F}/diff-missing-new-text-skipped", "acp.v1.lenient.skip-invalid-items",
                "A `diff` item without `newText` is malformed; because tool call content skips invalid items it is dropped with a warning and the rest is kept.",
                u, {**u, "content": [TCC_TERMINAL]}, ["$.params.update.content[0]"])
    u = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Edit",
         "content": [{"type": "text", "text": "not wrapped"}]}
    update_case(f"{F}/bare-content-block-kept-unknown", "acp.v1.union.closed-unknown-kept",
                "A bare `{type: \"text\"}` block placed directly in tool call content (as a docs page shows) has an unknown tool-call-content tag and is kept raw with a warning.",
                u, u, ["$.params.update.content[0]"])
    req_params = {"sessionId": SID, "toolCall": {"toolCallId": "call_1", "content": [TCC_DIFF]}, "options": []}
    case(f"{F}/in-permission-request", R,
         "A `session/request_permission` whose tool call carries a `diff` item is dispatched and re-encodes unchanged.",
         x_request("session/request_permission", 1, "RequestPermissionRequest", req_params),
         input=req("session/request_permission", req_params), direction=A2C)


def new_session(servers):
    return {"cwd": CWD, "mcpServers": servers}


def build_mcp_servers():
    F = f"{T}/mcp-server"
    R = "acp.v1.union.untagged-default"
    NS = "session/new"

    def ok(cid, requirement, desc, servers, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc,
             x_request(NS, 1, "NewSessionRequest", new_session(expect), warnings), input=req(NS, new_session(servers)))

    def bad(cid, requirement, desc, servers, path):
        case(f"{F}/{cid}", requirement, desc, x_reply_error(-32602, 1, path), input=req(NS, new_session(servers)))

    ok("stdio-min", R, "An MCP server object without `type` decodes as the stdio variant and re-encodes without `type`.",
       [STDIO_MIN], [STDIO_MIN])
    ok("stdio-max", R, "A stdio MCP server with args, env and `_meta` decodes as stdio and re-encodes unchanged.",
       [STDIO_MAX], [STDIO_MAX])
    ok("http-min", "acp.v1.type.mcp-server", "An MCP server with type \"http\" and empty headers decodes as the http variant.",
       [HTTP_MIN], [HTTP_MIN])
    ok("http-max", "acp.v1.type.mcp-server", "An http MCP server with headers and `_meta` re-encodes unchanged.",
       [HTTP_MAX], [HTTP_MAX])
    ok("sse-min", "acp.v1.type.mcp-server", "An MCP server with type \"sse\" decodes as the (deprecated) sse variant.",
       [SSE_MIN], [SSE_MIN])
    ok("sse-max", "acp.v1.type.mcp-server", "An sse MCP server with headers and `_meta` re-encodes unchanged.",
       [SSE_MAX], [SSE_MAX])
    raw = {"type": "websocket", "name": "ws", "url": "wss://mcp.example.com/ws", "headers": []}
    ok("unknown-type", "acp.v1.union.closed-unknown-kept",
       "An MCP server with the unknown type \"websocket\" is kept raw as an unknown variant with a warning at `$.params.mcpServers[1]`.",
       [STDIO_MIN, raw], [STDIO_MIN, raw], ["$.params.mcpServers[1]"])
    bad("stdio-missing-args", R, "A stdio MCP server (no `type`) without the required `args` is an error at `$.params.mcpServers[0]`.",
        [{"name": "files", "command": "/bin/mcp", "env": []}], "$.params.mcpServers[0]")
    bad("stdio-missing-command", R, "An MCP server without `type` and without `command` cannot be stdio and is an error at `$.params.mcpServers[0]`.",
        [{"name": "files", "args": [], "env": []}], "$.params.mcpServers[0]")
    bad("http-missing-headers", "acp.v1.union.known-tag-strict",
        "An http MCP server without the required `headers` is an error at `$.params.mcpServers[0]` (it does not fall back to stdio or unknown).",
        [{"type": "http", "name": "web", "url": "https://mcp.example.com/mcp"}], "$.params.mcpServers[0]")
    bad("http-header-missing-value", "acp.v1.type.mcp-server",
        "An http MCP server whose header lacks `value` is an error at `$.params.mcpServers[0].headers[0]`.",
        [{"type": "http", "name": "web", "url": "https://x", "headers": [{"name": "A"}]}], "$.params.mcpServers[0].headers[0]")
    bad("stdio-env-not-array", "acp.v1.type.mcp-server",
        "A stdio MCP server whose env is an object instead of an array of name/value pairs is an error at `$.params.mcpServers[0].env`.",
        [{"name": "files", "command": "/bin/mcp", "args": [], "env": {"A": "1"}}], "$.params.mcpServers[0].env")


def init_result(methods):
    return {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": methods}


def build_auth_methods():
    F = f"{T}/auth-method"
    P = pend(0, "initialize")

    def ok(cid, requirement, desc, methods, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc,
             x_response(0, "initialize", "InitializeResponse", init_result(expect), warnings),
             input=resp(0, init_result(methods)), direction=A2C, pending=P)

    ok("agent-min", "acp.v1.union.untagged-default",
       "An auth method without `type` decodes as the agent variant and re-encodes without `type`.",
       [{"id": "login", "name": "Log in"}], [{"id": "login", "name": "Log in"}])
    ok("agent-max", "acp.v1.union.untagged-default",
       "An agent auth method with description and `_meta` re-encodes unchanged.", [AUTH_AGENT_MAX], [AUTH_AGENT_MAX])
    ok("terminal-min", "acp.v1.type.auth-method",
       "An auth method with type \"terminal\" and only id and name decodes as the terminal variant.",
       [{"type": "terminal", "id": "tty", "name": "TTY"}], [{"type": "terminal", "id": "tty", "name": "TTY"}])
    ok("terminal-max", "acp.v1.type.auth-method",
       "A terminal auth method with args, env and `_meta` re-encodes unchanged.", [AUTH_TERMINAL_MAX], [AUTH_TERMINAL_MAX])
    raw = {"type": "oauth", "id": "o", "label": "OAuth", "authorizeUrl": "https://auth.example.com"}
    ok("unknown-type", "acp.v1.union.closed-unknown-kept",
       "An auth method with the unknown type \"oauth\" (and no `name`) is kept raw as an unknown variant with a warning at its path, not decoded or dropped as an agent method.",
       [AUTH_AGENT_MAX, raw], [AUTH_AGENT_MAX, raw], ["$.result.authMethods[1]"])
    ok("missing-name-skipped", "acp.v1.lenient.skip-invalid-items",
       "An agent auth method without `name` is malformed; `authMethods` skips invalid items, so it is dropped with a warning and the others are kept.",
       [{"id": "broken"}, {"id": "login", "name": "Log in"}], [{"id": "login", "name": "Log in"}], ["$.result.authMethods[0]"])



def build_config_options():
    F = f"{T}/config-option"
    P = pend(3, "session/new")

    def new_result(cid, requirement, desc, options, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc,
             x_response(3, "session/new", "NewSessionResponse", {"sessionId": SID, "configOptions": expect}, warnings),
             input=resp(3, {"sessionId": SID, "configOptions": options}), direction=A2C, pending=P)

    new_result("select-flat", "acp.v1.union.untagged-structural",
               "A select config option whose options are a flat list of values decodes as the ungrouped form and re-encodes unchanged.",
               [CFG_SELECT_FLAT], [CFG_SELECT_FLAT])
    new_result("select-grouped", "acp.v1.union.untagged-structural",
               "A select config option whose options are a list of groups decodes as the grouped form and re-encodes unchanged.",
               [CFG_SELECT_GROUPED], [CFG_SELECT_GROUPED])
    new_result("select-min", "acp.v1.type.config-option",
               "A select config option with only id, name, type, currentValue and one option re-encodes unchanged.",
               [CFG_SELECT_MIN], [CFG_SELECT_MIN])
    new_result("boolean-min", "acp.v1.type.config-option",
               "A boolean config option with currentValue false re-encodes unchanged.",
               [CFG_BOOLEAN_MIN], [CFG_BOOLEAN_MIN])
    for cat in ("mode", "model", "model_config", "thought_level"):
        o = with_(CFG_SELECT_MIN, category=cat)
        new_result(f"category-{cat.replace('_', '-')}", "acp.v1.type.config-option",
                   f"A config option with the category \"{cat}\" keeps it.", [o], [o])
    o = with_(CFG_SELECT_MIN, category="_mine")
    new_result("category-custom", "acp.v1.union.open-unknown-kept",
               "A config option with the custom category \"_mine\" keeps it as a string without a warning (the category enum is open).",
               [o], [o])
    o = with_(CFG_SELECT_MIN, category="future_category")
    new_result("category-future", "acp.v1.union.open-unknown-kept",
               "A config option with the unknown, non-underscore category \"future_category\" keeps it without a warning (the enum is open).",
               [o], [o])
    o = with_(CFG_SELECT_MIN, category=7)
    new_result("category-number-dropped", "acp.v1.lenient.default-on-error",
               "A config option whose category is a number loses the category with a warning (the field defaults on error).",
               [o], [CFG_SELECT_MIN], ["$.result.configOptions[0].category"])
    raw = {"id": "temp", "name": "Temperature", "type": "slider", "min": 0, "max": 1, "currentValue": 0.3}
    new_result("unknown-type", "acp.v1.union.closed-unknown-kept",
               "A config option with the unknown type \"slider\" is kept raw as an unknown variant with a warning at its path.",
               [CFG_SELECT_MIN, raw], [CFG_SELECT_MIN, raw], ["$.result.configOptions[1]"])
    new_result("select-missing-current-value-skipped", "acp.v1.lenient.skip-invalid-items",
               "A select option without `currentValue` is malformed; `configOptions` skips invalid items, so it is dropped with a warning.",
               [without(CFG_SELECT_MIN, "currentValue"), CFG_BOOLEAN_MIN], [CFG_BOOLEAN_MIN], ["$.result.configOptions[0]"])
    g = {"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}, {"value": "b"}]}
    o = with_(CFG_SELECT_MIN, options=[g])
    new_result("group-option-skipped", "acp.v1.lenient.skip-invalid-items",
               "A grouped select whose group holds an option without `name` drops that option with a warning and keeps the rest.",
               [o], [with_(CFG_SELECT_MIN, options=[{"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}])],
               ["$.result.configOptions[0].options[0].options[1]"])

    SC = "session/set_config_option"
    ST = "SetSessionConfigOptionRequest"

    def set_ok(cid, requirement, desc, params, expect):
        case(f"{F}/{cid}", requirement, desc, x_request(SC, 1, ST, expect), input=req(SC, params))

    base = {"sessionId": SID, "configId": "web"}
    set_ok("set-boolean", "acp.v1.union.untagged-structural",
           "A set_config_option request with type \"boolean\" and value false decodes as the boolean form.",
           {**base, "type": "boolean", "value": False}, {**base, "type": "boolean", "value": False})
    set_ok("set-value-id", "acp.v1.union.untagged-structural",
           "A set_config_option request without `type` and with a string value decodes as the value-id form.",
           {**base, "value": "on"}, {**base, "value": "on"})
    set_ok("set-unknown-type-string-value", "acp.v1.union.untagged-structural",
           "A set_config_option request with an unknown `type` and a string value decodes as the value-id form (per the schema) and re-encodes without `type`.",
           {**base, "type": "_slider", "value": "0.3"}, {**base, "value": "0.3"})
    for cid, params, desc in (
            ("set-boolean-missing-value", {**base, "type": "boolean"},
             "A set_config_option request with type \"boolean\" but no value matches neither form and is answered with -32602 at `$.params`."),
            ("set-missing-value", base,
             "A set_config_option request without `value` matches neither form and is answered with -32602 at `$.params`."),
            ("set-boolean-value-number", {**base, "type": "boolean", "value": 1},
             "A set_config_option request with type \"boolean\" and the number 1 as value is answered with -32602 at `$.params.value`: the known tag selects the boolean form, whose value is wrong.")):
        path = "$.params.value" if cid == "set-boolean-value-number" else "$.params"
        case(f"{F}/{cid}", "acp.v1.union.known-tag-strict", desc, x_reply_error(-32602, 1, path), input=req(SC, params))
