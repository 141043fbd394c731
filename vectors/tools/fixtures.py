"""Payload fixtures and per-method specs shared by the ACP cases."""

from __future__ import annotations

from vectorlib import *  # noqa: F403


SID = "sess_1"
CWD = "/home/user/project"


def mt(tag):
    """A small, distinct `_meta` object."""
    return {"example.com/at": tag}


def ann(tag):
    return {"audience": ["user", "assistant"], "lastModified": "2026-01-02T03:04:05Z",
            "priority": 0.5, "_meta": mt(tag + ".annotations")}


TEXT_MIN = {"type": "text", "text": "Hello"}
TEXT_MAX = {"type": "text", "text": "Hello", "annotations": ann("text"), "_meta": mt("text")}
IMAGE_MIN = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
IMAGE_MAX = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "uri": "file:///tmp/shot.png",
             "annotations": ann("image"), "_meta": mt("image")}
AUDIO_MIN = {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"}
AUDIO_MAX = {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav",
             "annotations": ann("audio"), "_meta": mt("audio")}
LINK_MIN = {"type": "resource_link", "uri": "file:///repo/README.md", "name": "README.md"}
LINK_MAX = {"type": "resource_link", "uri": "file:///repo/README.md", "name": "README.md",
            "mimeType": "text/markdown", "title": "Readme", "description": "The project readme", "size": 1024,
            "annotations": ann("resource_link"), "_meta": mt("resource_link")}
RES_TEXT_MIN = {"type": "resource", "resource": {"uri": "file:///repo/src/main.rs", "text": "fn main() {}"}}
RES_TEXT_MAX = {"type": "resource", "resource": {"uri": "file:///repo/src/main.rs", "text": "fn main() {}",
                                                  "mimeType": "text/x-rust", "_meta": mt("resource.text")},
                "annotations": ann("resource"), "_meta": mt("resource")}
RES_BLOB_MIN = {"type": "resource", "resource": {"uri": "file:///repo/logo.bin", "blob": "AAECAw=="}}
RES_BLOB_MAX = {"type": "resource", "resource": {"uri": "file:///repo/logo.bin", "blob": "AAECAw==",
                                                  "mimeType": "application/octet-stream", "_meta": mt("resource.blob")},
                "annotations": ann("resource"), "_meta": mt("resource")}

TCC_CONTENT = {"type": "content", "content": TEXT_MAX, "_meta": mt("tool.content")}
TCC_DIFF = {"type": "diff", "path": "/repo/src/main.rs", "oldText": "fn main() {}",
            "newText": "fn main() { println!(\"hi\"); }", "_meta": mt("tool.diff")}
TCC_TERMINAL = {"type": "terminal", "terminalId": "term_1", "_meta": mt("tool.terminal")}
LOCATION_MAX = {"path": "/repo/src/main.rs", "line": 3, "_meta": mt("location")}

TOOL_CALL_MIN = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Read main.rs"}
TOOL_CALL_MAX = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Edit main.rs", "name": "edit_file",
                 "kind": "edit", "status": "in_progress", "content": [TCC_CONTENT, TCC_DIFF, TCC_TERMINAL],
                 "locations": [LOCATION_MAX], "rawInput": {"path": "/repo/src/main.rs", "lines": [1, 2]},
                 "rawOutput": {"ok": True}, "_meta": mt("tool_call")}
TOOL_UPDATE_FIELDS = {"toolCallId": "call_1", "kind": "execute", "status": "completed", "title": "Run tests",
                      "name": "bash", "content": [TCC_CONTENT, TCC_DIFF, TCC_TERMINAL], "locations": [LOCATION_MAX],
                      "rawInput": {"command": "cargo test"}, "rawOutput": {"exitCode": 0},
                      "_meta": mt("tool_call_update")}

ENV_MAX = {"name": "RUST_LOG", "value": "debug", "_meta": mt("env")}
HEADER_MAX = {"name": "Authorization", "value": "Bearer token", "_meta": mt("header")}
STDIO_MIN = {"name": "files", "command": "/usr/local/bin/mcp-files", "args": [], "env": []}
STDIO_MAX = {"name": "files", "command": "/usr/local/bin/mcp-files", "args": ["--root", "/repo"], "env": [ENV_MAX],
             "_meta": mt("mcp.stdio")}
HTTP_MIN = {"type": "http", "name": "web", "url": "https://mcp.example.com/mcp", "headers": []}
HTTP_MAX = {"type": "http", "name": "web", "url": "https://mcp.example.com/mcp", "headers": [HEADER_MAX],
            "_meta": mt("mcp.http")}
SSE_MIN = {"type": "sse", "name": "events", "url": "https://mcp.example.com/sse", "headers": []}
SSE_MAX = {"type": "sse", "name": "events", "url": "https://mcp.example.com/sse", "headers": [HEADER_MAX],
           "_meta": mt("mcp.sse")}

MODES_MAX = {"currentModeId": "ask",
             "availableModes": [{"id": "ask", "name": "Ask", "description": "Asks before acting", "_meta": mt("mode.ask")},
                                {"id": "code", "name": "Code", "description": "Edits freely", "_meta": mt("mode.code")}],
             "_meta": mt("modes")}
OPT_FAST = {"value": "fast", "name": "Fast", "description": "Quick answers", "_meta": mt("option.fast")}
OPT_SMART = {"value": "smart", "name": "Smart", "description": "Careful answers", "_meta": mt("option.smart")}
CFG_SELECT_FLAT = {"id": "model", "name": "Model", "description": "Which model answers", "category": "model",
                   "type": "select", "currentValue": "fast", "options": [OPT_FAST, OPT_SMART], "_meta": mt("config.model")}
CFG_SELECT_GROUPED = {"id": "effort", "name": "Effort", "description": "How hard to think", "category": "thought_level",
                      "type": "select", "currentValue": "fast",
                      "options": [{"group": "quick", "name": "Quick", "options": [OPT_FAST], "_meta": mt("group.quick")},
                                  {"group": "deep", "name": "Deep", "options": [OPT_SMART], "_meta": mt("group.deep")}],
                      "_meta": mt("config.effort")}
CFG_BOOLEAN = {"id": "web", "name": "Web search", "description": "Allow web search", "category": "model_config",
               "type": "boolean", "currentValue": True, "_meta": mt("config.web")}
CFG_SELECT_MIN = {"id": "model", "name": "Model", "type": "select", "currentValue": "fast",
                  "options": [{"value": "fast", "name": "Fast"}]}
CFG_BOOLEAN_MIN = {"id": "web", "name": "Web search", "type": "boolean", "currentValue": False}

STRING_PROP_MAX = {"type": "string", "title": "Email", "description": "Where to reach you", "minLength": 3,
                   "maxLength": 320, "pattern": "^.+@.+$", "format": "email", "default": "me@example.com",
                   "enum": ["me@example.com", "you@example.com"],
                   "oneOf": [{"const": "me@example.com", "title": "Me", "description": "My address", "_meta": mt("enum.me")}],
                   "_meta": mt("prop.email")}
NUMBER_PROP_MAX = {"type": "number", "title": "Budget", "description": "In euros", "minimum": 0.5, "maximum": 99.5,
                   "default": 10.25, "_meta": mt("prop.budget")}
INTEGER_PROP_MAX = {"type": "integer", "title": "Age", "description": "In years", "minimum": 0, "maximum": 150,
                    "default": 30, "_meta": mt("prop.age")}
BOOLEAN_PROP_MAX = {"type": "boolean", "title": "Subscribe", "description": "Send news", "default": False,
                    "_meta": mt("prop.subscribe")}
ARRAY_PROP_MAX = {"type": "array", "title": "Tags", "description": "Pick some", "minItems": 1, "maxItems": 3,
                  "items": {"type": "string", "enum": ["a", "b", "c"], "_meta": mt("items")}, "default": ["a"],
                  "_meta": mt("prop.tags")}
ARRAY_TITLED_PROP_MAX = {"type": "array", "title": "Colours", "description": "Pick colours", "minItems": 0, "maxItems": 2,
                         "items": {"anyOf": [{"const": "r", "title": "Red", "description": "Warm", "_meta": mt("enum.r")},
                                             {"const": "b", "title": "Blue", "description": "Cold", "_meta": mt("enum.b")}],
                                   "_meta": mt("items.titled")},
                         "default": ["r"], "_meta": mt("prop.colours")}
SCHEMA_MAX = {"type": "object", "title": "Contact details", "description": "We need a few things",
              "properties": {"email": STRING_PROP_MAX, "budget": NUMBER_PROP_MAX, "age": INTEGER_PROP_MAX,
                             "subscribe": BOOLEAN_PROP_MAX, "tags": ARRAY_PROP_MAX, "colours": ARRAY_TITLED_PROP_MAX},
              "required": ["email"], "_meta": mt("schema")}



# per-method specs ----------------------------------------------------------------

CLIENT_CAPS_DEFAULT = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False,
                       "auth": {"terminal": False}}
AGENT_CAPS_DEFAULT = {"loadSession": False, "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
                      "mcpCapabilities": {"http": False, "sse": False}, "sessionCapabilities": {}, "auth": {}}

INIT_PARAMS_MAX = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True, "_meta": mt("fs")},
        "terminal": True,
        "session": {"compaction": {}, "configOptions": {"boolean": {"_meta": mt("boolean")}, "_meta": mt("configOptions")},
                    "notices": {}, "_meta": mt("session")},
        "auth": {"terminal": True, "_meta": mt("auth")},
        "elicitation": {"form": {"_meta": mt("form")}, "url": {"_meta": mt("url")}, "_meta": mt("elicitation")},
        "plan": {"_meta": mt("plan")},
        "subagents": {"_meta": mt("subagents")},
        "_meta": {"zed.dev": {"workspace": True}},
    },
    "clientInfo": {"name": "my-editor", "title": "My Editor", "version": "1.0.0", "_meta": mt("clientInfo")},
    "_meta": mt("initialize"),
}
AUTH_AGENT_MAX = {"id": "agent-login", "name": "Log in", "description": "Opens a browser", "_meta": mt("auth.agent")}
AUTH_TERMINAL_MAX = {"type": "terminal", "id": "tty-login", "name": "Terminal login", "description": "Log in interactively",
                     "args": ["--login"], "env": {"LOGIN_MODE": "tty"}, "_meta": mt("auth.terminal")}
INIT_RESULT_MAX = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True, "_meta": mt("prompt")},
        "mcpCapabilities": {"http": True, "sse": True, "_meta": mt("mcp")},
        "sessionCapabilities": {"list": {"_meta": mt("list")}, "delete": {"_meta": mt("delete")},
                                "additionalDirectories": {"_meta": mt("dirs")}, "resume": {"_meta": mt("resume")},
                                "close": {"_meta": mt("close")},
                                "systemPrompt": {"mode": {"override": {"_meta": mt("override")}, "_meta": mt("mode")},
                                                 "_meta": mt("systemPrompt")},
                                "_meta": mt("sessionCapabilities")},
        "auth": {"logout": {"_meta": mt("logout")}, "_meta": mt("auth")},
        "_meta": mt("agentCapabilities"),
    },
    "authMethods": [AUTH_AGENT_MAX, AUTH_TERMINAL_MAX],
    "agentInfo": {"name": "my-agent", "title": "My Agent", "version": "0.1.0", "_meta": mt("agentInfo")},
    "_meta": mt("initialize.result"),
}
SYSTEM_PROMPT_MAX = {"mode": "override", "content": [TEXT_MAX], "_meta": mt("systemPrompt")}
SESSION_SETUP_RESULT_MAX = {"modes": MODES_MAX, "configOptions": [CFG_SELECT_FLAT, CFG_SELECT_GROUPED, CFG_BOOLEAN]}
PERMISSION_OPTIONS_MAX = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once", "_meta": mt("opt.allow")},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always", "_meta": mt("opt.always")},
    {"optionId": "deny", "name": "Reject", "kind": "reject_once", "_meta": mt("opt.deny")},
    {"optionId": "never", "name": "Never", "kind": "reject_always", "_meta": mt("opt.never")},
]


def without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def with_(d, **kw):
    return {**d, **kw}


# Each spec: method, params (min, max), invalid params, results (min, max), invalid result.
# `missing`: (field, params) -> -32602 at $.params; `wrong`: (path, params, what);
# `result_bad`: (path, result, what).
METHOD_SPECS = [
    dict(method="initialize",
         params_min={"protocolVersion": 1},
         params_min_x={"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT},
         params_max=INIT_PARAMS_MAX,
         missing=("protocolVersion", {"clientCapabilities": {}}),
         wrong=("$.params.protocolVersion", {"protocolVersion": "1"}, "the string \"1\" as protocolVersion"),
         result_min={"protocolVersion": 1},
         result_min_x={"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
         result_max=INIT_RESULT_MAX,
         result_bad=("$.result.protocolVersion", {"protocolVersion": -1}, "protocolVersion -1 (below uint16)")),
    dict(method="authenticate",
         params_min={"methodId": "agent-login"},
         params_max={"methodId": "agent-login", "_meta": mt("authenticate")},
         missing=("methodId", {}),
         wrong=("$.params.methodId", {"methodId": 7}, "a number as methodId"),
         result_min={}, result_max={"_meta": mt("authenticate.result")},
         result_bad=("$.result", "ok", "the string \"ok\" as the result"),
         result_bad_name="result-string"),
    dict(method="logout",
         params_min={}, params_max={"_meta": mt("logout")},
         wrong=("$.params", ["x"], "an array as params"),
         result_min={}, result_max={"_meta": mt("logout.result")},
         result_bad=("$.result", [], "an array as the result"),
         result_bad_name="result-array"),
    dict(method="session/new",
         params_min={"cwd": CWD, "mcpServers": []},
         params_max={"cwd": CWD, "additionalDirectories": ["/home/user/shared", "/opt/data"],
                     "mcpServers": [STDIO_MAX, HTTP_MAX, SSE_MAX], "systemPrompt": SYSTEM_PROMPT_MAX,
                     "_meta": mt("session/new")},
         missing=("mcpServers", {"cwd": CWD}),
         wrong=("$.params.cwd", {"cwd": 42, "mcpServers": []}, "a number as cwd"),
         result_min={"sessionId": SID},
         result_max={"sessionId": SID, **SESSION_SETUP_RESULT_MAX, "_meta": mt("session/new.result")},
         result_bad=("$.result", {"modes": None}, "a result without sessionId"),
         result_bad_name="result-missing-session-id"),
    dict(method="session/load",
         params_min={"sessionId": SID, "cwd": CWD, "mcpServers": []},
         params_max={"sessionId": SID, "cwd": CWD, "additionalDirectories": ["/home/user/shared"],
                     "mcpServers": [STDIO_MAX, HTTP_MAX], "systemPrompt": SYSTEM_PROMPT_MAX,
                     "_meta": mt("session/load")},
         missing=("sessionId", {"cwd": CWD, "mcpServers": []}),
         wrong=("$.params.mcpServers", {"sessionId": SID, "cwd": CWD, "mcpServers": {}}, "an object as mcpServers"),
         result_min={},
         result_max={**SESSION_SETUP_RESULT_MAX, "_meta": mt("session/load.result")},
         result_bad=("$.result", 5, "the number 5 as the result"),
         result_bad_name="result-number"),
    dict(method="session/list",
         params_min={}, params_max={"cwd": CWD, "cursor": "opaque-cursor-2", "_meta": mt("session/list")},
         wrong=("$.params.cursor", {"cursor": 2}, "a number as cursor"),
         result_min={"sessions": []},
         result_max={"sessions": [{"sessionId": SID, "cwd": CWD, "additionalDirectories": ["/opt/data"],
                                   "title": "Fix the build", "updatedAt": "2026-03-04T05:06:07Z", "_meta": mt("info")}],
                     "nextCursor": "opaque-cursor-3", "_meta": mt("session/list.result")},
         result_bad=("$.result", {"nextCursor": "c"}, "a result without sessions"),
         result_bad_name="result-missing-sessions"),
    dict(method="session/delete",
         params_min={"sessionId": SID}, params_max={"sessionId": SID, "_meta": mt("session/delete")},
         missing=("sessionId", {}),
         wrong=("$.params.sessionId", {"sessionId": None}, "null as sessionId"),
         result_min={}, result_max={"_meta": mt("session/delete.result")},
         result_bad=("$.result", True, "true as the result"),
         result_bad_name="result-bool"),
    dict(method="session/resume",
         params_min={"sessionId": SID, "cwd": CWD},
         params_max={"sessionId": SID, "cwd": CWD, "additionalDirectories": ["/opt/data"],
                     "mcpServers": [SSE_MAX], "systemPrompt": SYSTEM_PROMPT_MAX, "_meta": mt("session/resume")},
         missing=("cwd", {"sessionId": SID}),
         wrong=("$.params.additionalDirectories[1]", {"sessionId": SID, "cwd": CWD, "additionalDirectories": ["/a", 3]},
                "a number inside additionalDirectories"),
         result_min={}, result_max={**SESSION_SETUP_RESULT_MAX, "_meta": mt("session/resume.result")},
         result_bad=("$.result", "resumed", "a string as the result"),
         result_bad_name="result-string"),
    dict(method="session/close",
         params_min={"sessionId": SID}, params_max={"sessionId": SID, "_meta": mt("session/close")},
         missing=("sessionId", {"_meta": {}}),
         wrong=("$.params.sessionId", {"sessionId": ["sess_1"]}, "an array as sessionId"),
         result_min={}, result_max={"_meta": mt("session/close.result")},
         result_bad=("$.result", [{}], "an array as the result"),
         result_bad_name="result-array"),
    dict(method="session/set_mode",
         params_min={"sessionId": SID, "modeId": "code"},
         params_max={"sessionId": SID, "modeId": "code", "_meta": mt("session/set_mode")},
         missing=("modeId", {"sessionId": SID}),
         wrong=("$.params.modeId", {"sessionId": SID, "modeId": {"id": "code"}}, "an object as modeId"),
         result_min={}, result_max={"_meta": mt("session/set_mode.result")},
         result_bad=("$.result", 0, "the number 0 as the result"),
         result_bad_name="result-number"),
    dict(method="session/set_config_option",
         params_min={"sessionId": SID, "configId": "model", "value": "smart"},
         params_max={"sessionId": SID, "configId": "web", "type": "boolean", "value": True,
                     "_meta": mt("session/set_config_option")},
         missing=("configId", {"sessionId": SID, "value": "smart"}),
         wrong=("$.params.value", {"sessionId": SID, "configId": "model", "value": 3}, "a number as value"),
         result_min={"configOptions": []},
         result_max={"configOptions": [CFG_SELECT_FLAT, CFG_SELECT_GROUPED, CFG_BOOLEAN],
                     "_meta": mt("session/set_config_option.result")},
         result_bad=("$.result", {}, "a result without configOptions"),
         result_bad_name="result-missing-config-options"),
    dict(method="session/prompt",
         params_min={"sessionId": SID, "prompt": [TEXT_MIN]},
         params_max={"sessionId": SID, "prompt": [TEXT_MAX, IMAGE_MAX, AUDIO_MAX, LINK_MAX, RES_TEXT_MAX, RES_BLOB_MAX],
                     "_meta": mt("session/prompt")},
         missing=("prompt", {"sessionId": SID}),
         wrong=("$.params.prompt", {"sessionId": SID, "prompt": "Hello"}, "a string as prompt"),
         result_min={"stopReason": "end_turn"},
         result_max={"stopReason": "max_turn_requests", "_meta": mt("session/prompt.result")},
         result_bad=("$.result.stopReason", {"stopReason": "finished"}, "the unknown stop reason \"finished\"")),
    dict(method="session/cancel",
         params_min={"sessionId": SID}, params_max={"sessionId": SID, "_meta": mt("session/cancel")},
         missing=("sessionId", {}),
         wrong=("$.params.sessionId", {"sessionId": 1}, "a number as sessionId")),
    dict(method="session/request_permission",
         params_min={"sessionId": SID, "toolCall": {"toolCallId": "call_1"}, "options": []},
         params_max={"sessionId": SID, "toolCall": TOOL_UPDATE_FIELDS, "options": PERMISSION_OPTIONS_MAX,
                     "_meta": mt("session/request_permission")},
         missing=("options", {"sessionId": SID, "toolCall": {"toolCallId": "call_1"}}),
         wrong=("$.params.options[0].kind", {"sessionId": SID, "toolCall": {"toolCallId": "call_1"},
                                             "options": [{"optionId": "a", "name": "A", "kind": "allow_sometimes"}]},
                "the unknown permission kind \"allow_sometimes\""),
         result_min={"outcome": {"outcome": "cancelled"}},
         result_max={"outcome": {"outcome": "selected", "optionId": "allow", "_meta": mt("outcome")},
                     "_meta": mt("session/request_permission.result")},
         result_bad=("$.result.outcome", {"outcome": {"outcome": "selected"}}, "a selected outcome without optionId")),
    dict(method="fs/read_text_file",
         params_min={"sessionId": SID, "path": "/repo/src/main.rs"},
         params_max={"sessionId": SID, "path": "/repo/src/main.rs", "line": 10, "limit": 50,
                     "_meta": mt("fs/read_text_file")},
         missing=("path", {"sessionId": SID}),
         wrong=("$.params.line", {"sessionId": SID, "path": "/repo/a", "line": "10"}, "a string as line"),
         result_min={"content": ""},
         result_max={"content": "fn main() {}\n", "_meta": mt("fs/read_text_file.result")},
         result_bad=("$.result.content", {"content": None}, "null as content")),
    dict(method="fs/write_text_file",
         params_min={"sessionId": SID, "path": "/repo/notes.txt", "content": ""},
         params_max={"sessionId": SID, "path": "/repo/notes.txt", "content": "line 1\nline 2\n",
                     "_meta": mt("fs/write_text_file")},
         missing=("content", {"sessionId": SID, "path": "/repo/notes.txt"}),
         wrong=("$.params.content", {"sessionId": SID, "path": "/repo/notes.txt", "content": ["a"]}, "an array as content"),
         result_min={}, result_max={"_meta": mt("fs/write_text_file.result")},
         result_bad=("$.result", "written", "a string as the result"),
         result_bad_name="result-string"),
    dict(method="terminal/create",
         params_min={"sessionId": SID, "command": "cargo"},
         params_max={"sessionId": SID, "command": "cargo", "args": ["test", "--all"], "env": [ENV_MAX],
                     "cwd": "/repo", "outputByteLimit": 1048576, "_meta": mt("terminal/create")},
         missing=("command", {"sessionId": SID, "args": ["test"]}),
         wrong=("$.params.env[0]", {"sessionId": SID, "command": "cargo", "env": [{"name": "A"}]},
                "an env entry without value"),
         result_min={"terminalId": "term_1"},
         result_max={"terminalId": "term_1", "_meta": mt("terminal/create.result")},
         result_bad=("$.result", {}, "a result without terminalId"),
         result_bad_name="result-missing-terminal-id"),
    dict(method="terminal/output",
         params_min={"sessionId": SID, "terminalId": "term_1"},
         params_max={"sessionId": SID, "terminalId": "term_1", "_meta": mt("terminal/output")},
         missing=("terminalId", {"sessionId": SID}),
         wrong=("$.params.terminalId", {"sessionId": SID, "terminalId": 1}, "a number as terminalId"),
         result_min={"output": "", "truncated": False},
         result_max={"output": "running 3 tests\n", "truncated": True,
                     "exitStatus": {"exitCode": 101, "signal": "SIGTERM", "_meta": mt("exitStatus")},
                     "_meta": mt("terminal/output.result")},
         result_bad=("$.result.truncated", {"output": "x", "truncated": "no"}, "a string as truncated")),
    dict(method="terminal/wait_for_exit",
         params_min={"sessionId": SID, "terminalId": "term_1"},
         params_max={"sessionId": SID, "terminalId": "term_1", "_meta": mt("terminal/wait_for_exit")},
         missing=("sessionId", {"terminalId": "term_1"}),
         wrong=("$.params.sessionId", {"sessionId": {}, "terminalId": "term_1"}, "an object as sessionId"),
         result_min={},
         result_max={"exitCode": 0, "signal": "SIGKILL", "_meta": mt("terminal/wait_for_exit.result")},
         result_bad=("$.result", "exited", "a string as the result"),
         result_bad_name="result-string"),
    dict(method="terminal/kill",
         params_min={"sessionId": SID, "terminalId": "term_1"},
         params_max={"sessionId": SID, "terminalId": "term_1", "_meta": mt("terminal/kill")},
         missing=("terminalId", {"sessionId": SID}),
         wrong=("$.params.terminalId", {"sessionId": SID, "terminalId": None}, "null as terminalId"),
         result_min={}, result_max={"_meta": mt("terminal/kill.result")},
         result_bad=("$.result", 1, "the number 1 as the result"),
         result_bad_name="result-number"),
    dict(method="terminal/release",
         params_min={"sessionId": SID, "terminalId": "term_1"},
         params_max={"sessionId": SID, "terminalId": "term_1", "_meta": mt("terminal/release")},
         missing=("terminalId", {"sessionId": SID}),
         wrong=("$.params.sessionId", {"sessionId": True, "terminalId": "term_1"}, "true as sessionId"),
         result_min={}, result_max={"_meta": mt("terminal/release.result")},
         result_bad=("$.result", ["released"], "an array as the result"),
         result_bad_name="result-array"),
    dict(method="elicitation/create",
         params_min={"message": "Need details", "mode": "form", "sessionId": SID, "requestedSchema": {}},
         params_min_x={"message": "Need details", "mode": "form", "sessionId": SID,
                       "requestedSchema": {"type": "object", "properties": {}}},
         params_max={"message": "Please fill in your details", "mode": "form", "sessionId": SID, "toolCallId": "call_1",
                     "requestedSchema": SCHEMA_MAX, "_meta": mt("elicitation/create")},
         missing=("message", {"mode": "form", "sessionId": SID, "requestedSchema": {}}),
         wrong=("$.params.message", {"message": 5, "mode": "form", "sessionId": SID, "requestedSchema": {}},
                "a number as message"),
         result_min={"action": "cancel"},
         result_max={"action": "accept",
                     "content": {"email": "me@example.com", "budget": 12.5, "age": 41, "subscribe": True, "tags": ["a", "b"]},
                     "_meta": mt("elicitation/create.result")},
         result_bad=("$.result.content.age", {"action": "accept", "content": {"age": {"years": 41}}},
                     "an object as a content value")),
    dict(method="session/update",
         params_min={"sessionId": SID, "update": {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN}},
         params_max={"sessionId": SID, "update": TOOL_CALL_MAX, "_meta": mt("session/update")},
         missing=("update", {"sessionId": SID}),
         wrong=("$.params.update", {"sessionId": SID, "update": "hello"}, "a string as update")),
    dict(method="elicitation/complete",
         params_min={"elicitationId": "elic_1"},
         params_max={"elicitationId": "elic_1", "_meta": mt("elicitation/complete")},
         missing=("elicitationId", {}),
         wrong=("$.params.elicitationId", {"elicitationId": 1}, "a number as elicitationId")),
    dict(method="$/cancel_request",
         params_min={"requestId": 7},
         params_max={"requestId": "req-7", "_meta": mt("$/cancel_request")},
         missing=("requestId", {"_meta": {}}),
         wrong=("$.params.requestId", {"requestId": 1.5}, "the fraction 1.5 as requestId")),
]



# acp/v1/<method>/ --------------------------------------------------------------

def method_info(m):
    params_t = result_t = side = None
    for name, d in DEFS.items():
        if d.get("x-method") != m:
            continue
        side = d["x-side"]
        if name.endswith("Response"):
            result_t = name
        else:
            params_t = name
    kind = "request" if result_t else "notification"
    return kind, side, params_t, result_t


def folder(m):
    return "acp/v1/" + m.replace("/", ".")


def sender(side):
    return {"agent": C2A, "client": A2C, "protocol": C2A}[side]


def other(direction):
    return A2C if direction == C2A else C2A


def has_required(type_name):
    d = DEFS[type_name]
    return bool(d.get("required"))


def kebab(name):
    out = ""
    for ch in name:
        out += ("-" + ch.lower()) if ch.isupper() else ch
    return out


def last_segment(path):
    seg = path.replace("]", "").replace("[", ".").split(".")[-1]
    return kebab(seg.strip('"'))


def a_(m):
    return "An" if m[0] in "aeiou" else "A"


T = "acp/v1/types"
SU = "session/update"
SN = "SessionNotification"
PR = "session/prompt"


def upd(update, **extra):
    return {"sessionId": SID, "update": update, **extra}


def prompt(*blocks, **extra):
    return {"sessionId": SID, "prompt": list(blocks), **extra}


def update_case(cid, requirement, desc, update, expect_update=ABSENT, warnings=None, **kw):
    params = upd(update)
    exp = ABSENT if expect_update is ABSENT else upd(expect_update)
    case(cid, requirement, desc, x_notification(SU, SN, exp, warnings), input=notif(SU, params), direction=A2C, **kw)


def update_bad(cid, requirement, desc, update):
    case(cid, requirement, desc, x_ignored("invalid-notification"), input=notif(SU, upd(update)), direction=A2C)


def prompt_case(cid, requirement, desc, params, expect_params=ABSENT, warnings=None):
    case(cid, requirement, desc, x_request(PR, 1, "PromptRequest", expect_params, warnings), input=req(PR, params))


def prompt_bad(cid, requirement, desc, params, path):
    case(cid, requirement, desc, x_reply_error(-32602, 1, path), input=req(PR, params))
