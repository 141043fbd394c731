"""A2A answer cases: what a client receives for each operation on JSON-RPC and HTTP+JSON
(vectors/a2a/v1/<Operation>/answer/<binding>/…)."""

from __future__ import annotations

from a2a_lib import *

BINDINGS = ("jsonrpc", "rest")
TS = "2026-11-21T10:00:00.000Z"
STATUS_DONE = {"state": "TASK_STATE_COMPLETED", "timestamp": TS}
TASK_MIN = {"id": "t-1", "status": {"state": "TASK_STATE_SUBMITTED"}}
AGENT_MSG = {"messageId": "m-9", "role": "ROLE_AGENT", "parts": [{"text": "hi back"}]}
TASK_FULL = {
    "id": "t-1", "contextId": "ctx-1",
    "status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": AGENT_MSG, "timestamp": TS},
    "artifacts": [{"artifactId": "a-1", "name": "echo", "description": "the echo",
                   "parts": [{"text": "hello"}, {"raw": "aGk="}], "metadata": {"n": 1},
                   "extensions": ["https://example.com/ext"]}],
    "history": [{"messageId": "m-1", "contextId": "ctx-1", "taskId": "t-1", "role": "ROLE_USER",
                 "parts": [{"text": "hello"}]}],
    "metadata": {"owner": "vectors"},
}
PUSH_CFG = {"id": "cfg-1", "taskId": "t-1", "url": "https://example.com/hook", "token": "tok",
            "authentication": {"scheme": "Bearer"}}
CARD = {
    "name": "Echo", "description": "Echoes text", "version": "1.0.0",
    "supportedInterfaces": [{"url": "https://example.com/a2a", "protocolBinding": "JSONRPC",
                             "protocolVersion": "1.0"}],
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "Echoes", "tags": ["echo"]}],
}

CARD_FULL = {
    "name": "Echo", "description": "Echoes text",
    "supportedInterfaces": [
        {"url": "https://example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://example.com/a2a/rest", "protocolBinding": "HTTP+JSON", "tenant": "acme",
         "protocolVersion": "1.0"}],
    "provider": {"url": "https://example.com", "organization": "Example"},
    "version": "1.0.0", "documentationUrl": "https://example.com/docs",
    "capabilities": {"streaming": True, "pushNotifications": False,
                     "extensions": [{"uri": "https://example.com/ext", "description": "an extension",
                                     "required": False, "params": {"level": 2}}],
                     "extendedAgentCard": True},
    "securitySchemes": {
        "key": {"apiKeySecurityScheme": {"description": "a key", "location": "header", "name": "X-API-Key"}},
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
        "oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
            "tokenUrl": "https://example.com/token", "scopes": {"read": "read tasks"}}},
            "oauth2MetadataUrl": "https://example.com/.well-known/oauth-authorization-server"}},
        "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://example.com/.well-known/openid"}},
        "mtls": {"mtlsSecurityScheme": {"description": "client certificates"}},
    },
    "securityRequirements": [{"schemes": {"bearer": {"list": []}, "oauth": {"list": ["read"]}}}],
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain", "application/json"],
    "skills": [{"id": "echo", "name": "Echo", "description": "Echoes", "tags": ["echo"], "examples": ["hello"],
                "inputModes": ["text/plain"], "outputModes": ["text/plain"],
                "securityRequirements": [{"schemes": {"key": {"list": []}}}]}],
    "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln", "header": {"kid": "k1"}}],
    "iconUrl": "https://example.com/icon.png",
}

# Per operation: valid results (name, value, what) and invalid ones (name, value, path
# from the result, kind, what).
VALID = {
    "SendMessage": [("task", {"task": TASK_MIN}, "a task"), ("message", {"message": AGENT_MSG}, "a direct message"),
                    ("task-full", {"task": TASK_FULL}, "a task with every member")],
    "SendStreamingMessage": [
        ("task", {"task": TASK_MIN}, "a task event"),
        ("message", {"message": AGENT_MSG}, "a message event"),
        ("status-update", {"statusUpdate": {"taskId": "t-1", "contextId": "ctx-1", "status": STATUS_DONE,
                                            "metadata": {"k": "v"}}}, "a status update event"),
        ("artifact-update", {"artifactUpdate": {"taskId": "t-1", "contextId": "ctx-1", "artifact": {
            "artifactId": "a-1", "parts": [{"text": "chunk"}]}, "append": True, "lastChunk": True}},
         "an artifact update event"),
    ],
    "GetTask": [("min", TASK_MIN, "a minimal task"), ("full", TASK_FULL, "a task with every member")],
    "ListTasks": [
        ("empty", {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}, "an empty page"),
        ("page", {"tasks": [TASK_MIN, TASK_FULL], "nextPageToken": "p-2", "pageSize": 2, "totalSize": 5},
         "a page of two tasks"),
    ],
    "CancelTask": [("canceled", {"id": "t-1", "status": {"state": "TASK_STATE_CANCELED", "timestamp": TS}},
                    "a canceled task")],
    "SubscribeToTask": [("status-update", {"statusUpdate": {"taskId": "t-1", "contextId": "ctx-1",
                                                            "status": {"state": "TASK_STATE_WORKING"}}},
                         "a status update event")],
    "CreateTaskPushNotificationConfig": [("full", PUSH_CFG, "the stored config")],
    "GetTaskPushNotificationConfig": [("min", {"url": "https://example.com/hook"}, "a config with only a url")],
    "ListTaskPushNotificationConfigs": [("empty", {}, "no configs"),
                                        ("page", {"configs": [PUSH_CFG], "nextPageToken": "n"}, "one config")],
    "GetExtendedAgentCard": [("card", CARD, "an agent card"),
                             ("card-full", CARD_FULL, "an agent card with every member and each security scheme")],
    "DeleteTaskPushNotificationConfig": [("empty", {}, "the empty message")],
}

INVALID = {
    "SendMessage": [
        ("neither", {}, "$", "missing-one-of", "neither `task` nor `message`"),
        ("both", {"task": TASK_MIN, "message": AGENT_MSG}, "$.message", "one-of-twice", "both `task` and `message`"),
        ("task-without-status", {"task": {"id": "t-1"}}, "$.task", "missing-field", "a task without `status`"),
        ("state-unknown", {"task": {"id": "t-1", "status": {"state": "TASK_STATE_DONE"}}}, "$.task.status.state",
         "not-listed", "an unknown task state"),
    ],
    "SendStreamingMessage": [
        ("status-update-without-task-id", {"statusUpdate": {"contextId": "c", "status": STATUS_DONE}},
         "$.statusUpdate", "missing-field", "a status update without `taskId`"),
        ("unknown-event", {"taskEvent": {"id": "t-1"}}, "$", "missing-one-of", "an event of no known kind"),
    ],
    "GetTask": [
        ("without-id", {"status": {"state": "TASK_STATE_WORKING"}}, "$", "missing-field", "a task without `id`"),
        ("artifact-without-parts", {"id": "t-1", "status": {"state": "TASK_STATE_WORKING"},
                                    "artifacts": [{"artifactId": "a", "parts": []}]},
         "$.artifacts[0].parts", "too-short", "an artifact with an empty `parts` list"),
        ("bad-timestamp", {"id": "t-1", "status": {"state": "TASK_STATE_WORKING", "timestamp": "noon"}},
         "$.status.timestamp", "wrong-format", "a status timestamp that is not RFC 3339"),
        ("state-unspecified", {"id": "t-1", "status": {"state": "TASK_STATE_UNSPECIFIED"}}, "$.status.state",
         "not-listed", "the state TASK_STATE_UNSPECIFIED"),
    ],
    "ListTasks": [("tasks-not-array", {"tasks": {}, "nextPageToken": "", "pageSize": 1, "totalSize": 0},
                   "$.tasks", "wrong-type", "`tasks` that is an object")],
    "CancelTask": [("id-number", {"id": 1, "status": {"state": "TASK_STATE_CANCELED"}}, "$.id", "wrong-type",
                    "a numeric task `id`")],
    "SubscribeToTask": [("artifact-update-without-artifact", {"artifactUpdate": {"taskId": "t", "contextId": "c"}},
                         "$.artifactUpdate", "missing-field", "an artifact update without `artifact`")],
    "CreateTaskPushNotificationConfig": [("without-url", {"id": "cfg-1", "taskId": "t-1"}, "$", "missing-field",
                                          "a config without `url`")],
    "GetTaskPushNotificationConfig": [("url-number", {"url": 5}, "$.url", "wrong-type", "a numeric `url`")],
    "ListTaskPushNotificationConfigs": [("config-without-url", {"configs": [{"id": "c"}]}, "$.configs[0]",
                                         "missing-field", "a config without `url`")],
    "GetExtendedAgentCard": [
        ("without-name", {k: v for k, v in CARD.items() if k != "name"}, "$", "missing-field",
         "a card without `name`"),
        ("security-scheme-none", {**CARD, "securitySchemes": {"x": {}}}, "$.securitySchemes.x", "missing-one-of",
         "a security scheme of no known kind"),
        ("skills-empty", {**CARD, "skills": []}, "$.skills", "too-short", "an empty `skills` list"),
    ],
    "DeleteTaskPushNotificationConfig": [],
}


def build_answers():
    for op in OPS:
        rt = res_type(op)
        r_ok = requirement(f"a2a.v1.answer.{op}", PROTO + f" (message {rt}, rpc {op})",
                           f"The answer to `{op}` decodes as `{rt}` on every binding and re-encodes canonically.")
        r_bad = requirement("a2a.v1.answer.invalid", "sdk: the client validates what it receives",
                            "An answer that does not decode as the operation's response message fails the call with a "
                            "local decode error naming the JSON path and the kind of failure.")
        for b in BINDINGS:
            base = f"{op}/answer/{b}"
            for name, value, what in VALID[op]:
                answer_case(f"{base}/{name}", r_ok, f"The answer to `{op}` holding {what} decodes as `{rt}`.",
                            b, op, value, decoded(op, value))
            for name, value, path, kind, what in INVALID[op]:
                answer_case(f"{base}/{name}", r_bad, f"The answer to `{op}` holding {what} fails the call at "
                            f"`{path}` ({kind}).", b, op, value, call_failed(b, path, kind))
    build_answer_leniency()
    build_error_answers()


def build_answer_leniency():
    op = "GetTask"
    cases = [
        ("unknown-fields", "a2a.v1.protojson.unknown-fields", "unknown members at every level",
         {"id": "t-1", "futureTop": 1, "status": {"state": "TASK_STATE_WORKING", "futureInner": [1]}}),
        ("state-by-number", "a2a.v1.protojson.enum", "the state given as its number 3 (COMPLETED)",
         {"id": "t-1", "status": {"state": 3}}),
        ("snake-case-names", "a2a.v1.protojson.proto-names", "proto field names (`context_id`, `artifact_id`)",
         {"id": "t-1", "context_id": "ctx-1", "status": {"state": "TASK_STATE_WORKING"},
          "artifacts": [{"artifact_id": "a-1", "parts": [{"text": "x", "media_type": "text/plain"}]}]}),
        ("nulls", "a2a.v1.protojson.null-absent", "null optional members",
         {"id": "t-1", "contextId": None, "status": {"state": "TASK_STATE_WORKING", "timestamp": None},
          "metadata": None}),
        ("data-null", "a2a.v1.protojson.value-null", "an artifact whose data part holds null",
         {"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [{"artifactId": "a",
                                                                                  "parts": [{"data": None}]}]}),
        ("timestamp-offset", "a2a.v1.protojson.timestamp", "a status timestamp with an offset and microseconds",
         {"id": "t-1", "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-11-21T12:00:00.123456+02:00"}}),
    ]
    for b in BINDINGS:
        for name, req, what, value in cases:
            answer_case(f"{op}/answer/{b}/{name}", req, f"A task answer with {what} decodes and re-encodes "
                        "canonically.", b, op, value, decoded(op, value))
    r_empty = requirement("a2a.v1.answer.empty-result", "spec: JSON-RPC 2.0 section 5 (result is required) and "
                          "google.protobuf.Empty", "The answer of DeleteTaskPushNotificationConfig is the empty "
                          "message; a JSON-RPC `result` of null reads as it.")
    answer_case("DeleteTaskPushNotificationConfig/answer/jsonrpc/null-result", r_empty, "A JSON-RPC answer to "
                "DeleteTaskPushNotificationConfig with \"result\": null decodes as the empty message.", "jsonrpc",
                "DeleteTaskPushNotificationConfig", None, {"outcome": "decoded", "type": "Empty", "result": {}})


def build_error_answers():
    r_err = requirement("a2a.v1.answer.error", NOTES + " sections 9.5 and 11.6 (JSON-RPC error objects; AIP-193 "
                        "google.rpc.Status bodies with ErrorInfo)", "An error answer resolves the call with the "
                        "peer's error: its JSON-RPC code, or its HTTP status, status name and ErrorInfo reason.")
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org", "metadata": {"taskId": "t-404"}}
    for op in ("GetTask", "CancelTask", "SendMessage"):
        answer_case(f"{op}/answer/jsonrpc/error-task-not-found", r_err, f"A JSON-RPC error -32001 answering `{op}` "
                    "resolves the call with that error.", "jsonrpc", op, None,
                    {"outcome": "error_reply", "error": {"code": -32001, "reason": "TASK_NOT_FOUND"}},
                    envelope={"jsonrpc": "2.0", "id": "$request-id",
                              "error": {"code": -32001, "message": "Task not found", "data": [info]}})
        answer_case(f"{op}/answer/rest/error-task-not-found", r_err, f"An HTTP 404 AIP-193 body answering `{op}` "
                    "resolves the call with that error.", "rest", op, None,
                    {"outcome": "error_reply", "http_status": 404,
                     "error": {"status": "NOT_FOUND", "reason": "TASK_NOT_FOUND"}}, status=404,
                    envelope={"error": {"code": 404, "status": "NOT_FOUND", "message": "Task not found",
                                        "details": [info]}})
    answer_case("GetTask/answer/jsonrpc/error-without-data", r_err, "A JSON-RPC error without `data` resolves the "
                "call with its code.", "jsonrpc", "GetTask", None,
                {"outcome": "error_reply", "error": {"code": -32603}},
                envelope={"jsonrpc": "2.0", "id": "$request-id", "error": {"code": -32603, "message": "boom"}})
    answer_case("SendStreamingMessage/answer/rest/error-before-stream", r_err, "An HTTP 400 AIP-193 body answering "
                "SendStreamingMessage (before any event) resolves the call with that error.", "rest",
                "SendStreamingMessage", None,
                {"outcome": "error_reply", "http_status": 400,
                 "error": {"status": "FAILED_PRECONDITION", "reason": "UNSUPPORTED_OPERATION"}}, status=400,
                envelope={"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "no streaming",
                                    "details": [{**info, "reason": "UNSUPPORTED_OPERATION", "metadata": {}}]}})
    answer_case("SendStreamingMessage/answer/jsonrpc/error-event", r_err, "A stream whose first event is a JSON-RPC "
                "error object ends the call with that error.", "jsonrpc", "SendStreamingMessage", None,
                {"outcome": "error_reply", "error": {"code": -32004, "reason": "UNSUPPORTED_OPERATION"}},
                envelope={"jsonrpc": "2.0", "id": "$request-id",
                          "error": {"code": -32004, "message": "no",
                                    "data": [{**info, "reason": "UNSUPPORTED_OPERATION", "metadata": {}}]}})
    answer_case("GetTask/answer/rest/error-not-json", r_err, "An HTTP 500 whose body is not JSON resolves the call "
                "with an error carrying that status.", "rest", "GetTask", None,
                {"outcome": "error_reply", "http_status": 500}, status=500, text="upstream failed")
    r_env = requirement("a2a.v1.answer.envelope", "spec: JSON-RPC 2.0 section 5", "A JSON-RPC answer must be a "
                        "response object carrying `jsonrpc: \"2.0\"` and the request's id.")
    answer_case("GetTask/answer/jsonrpc/wrong-id", r_env, "A JSON-RPC answer carrying another id than the request's "
                "fails the call.", "jsonrpc", "GetTask", None, {"outcome": "call_failed"},
                envelope={"jsonrpc": "2.0", "id": "other-id", "result": TASK_MIN})
    answer_case("GetTask/answer/rest/not-json", r_env, "A 200 answer whose body is not JSON fails the call.", "rest",
                "GetTask", None, {"outcome": "call_failed"}, text="<html>ok</html>")
    answer_case("GetTask/answer/jsonrpc/id-as-string", r_env, "A JSON-RPC answer whose id is the request's number "
                "written as a string is another id and fails the call.", "jsonrpc", "GetTask", None,
                {"outcome": "call_failed"},
                envelope={"jsonrpc": "2.0", "id": "$request-id-as-string", "result": TASK_MIN})
    answer_case("GetTask/answer/jsonrpc/result-and-error", r_env, "A JSON-RPC answer holding both `result` and "
                "`error` is no valid response and fails the call.", "jsonrpc", "GetTask", None,
                {"outcome": "call_failed"},
                envelope={"jsonrpc": "2.0", "id": "$request-id", "result": TASK_MIN,
                          "error": {"code": -32603, "message": "both"}})
    answer_case("GetTask/answer/jsonrpc/no-jsonrpc-member", r_env, "A JSON-RPC answer without `jsonrpc` fails the "
                "call.", "jsonrpc", "GetTask", None, {"outcome": "call_failed"},
                envelope={"id": "$request-id", "result": TASK_MIN})
