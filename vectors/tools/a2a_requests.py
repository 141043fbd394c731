"""A2A request cases: every operation on JSON-RPC and HTTP+JSON, as the server receives
them (vectors/a2a/v1/<Operation>/request/<binding>/…), and the cases about the envelope,
the routes and the version header."""

from __future__ import annotations

import copy

from a2a_lib import *

BINDINGS = ("jsonrpc", "rest")

MSG = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
PUSH = {"url": "https://example.com/hook", "token": "tok-1",
        "authentication": {"scheme": "Bearer", "credentials": "secret"}}
DEEP: dict = {"v": 1}
for _ in range(19):
    DEEP = {"d": DEEP}
MSG_FULL = {
    "messageId": "m-2", "contextId": "ctx-1", "taskId": "t-1", "role": "ROLE_USER",
    "parts": [
        {"text": "hello", "metadata": {"k": "v"}, "filename": "a.txt", "mediaType": "text/plain"},
        {"raw": "aGVsbG8=", "filename": "b.bin", "mediaType": "application/octet-stream"},
        {"url": "https://example.com/c.png", "mediaType": "image/png"},
        {"data": {"answer": 42, "list": [1, "two", None]}},
    ],
    "metadata": {"trace": "abc"}, "extensions": ["https://example.com/ext/1"], "referenceTaskIds": ["t-0"],
}

# Per operation: the smallest valid request, a request with every field, the required
# members (path of the object that lacks it, request without it) and a member of the
# wrong type (path, request, kind). Paths are written from the request object (`$`).
SPECS = {
    "SendMessage": {
        "min": {"message": MSG},
        "full": {"tenant": "acme", "message": MSG_FULL, "configuration": {
            "acceptedOutputModes": ["text/plain", "application/json"], "taskPushNotificationConfig": PUSH,
            "historyLength": 3, "returnImmediately": True}, "metadata": {"origin": "vectors"}},
        "missing": [("message", "$", {"configuration": {"historyLength": 1}})],
        "wrong": [("$.message", {"message": "hello"}, "wrong-type")],
    },
    "GetTask": {
        "min": {"id": "t-1"},
        "full": {"tenant": "acme", "id": "t-1", "historyLength": 2},
        "missing": [("id", "$", {"historyLength": 2})],
        "wrong": [("$.id", {"id": 7}, "wrong-type")],
    },
    "ListTasks": {
        "min": {},
        "full": {"tenant": "acme", "contextId": "ctx-1", "status": "TASK_STATE_WORKING", "pageSize": 10,
                 "pageToken": "p-2", "historyLength": 0, "statusTimestampAfter": "2026-01-02T03:04:05.678Z",
                 "includeArtifacts": True},
        "missing": [],
        "wrong": [("$.contextId", {"contextId": ["ctx-1"]}, "wrong-type")],
    },
    "CancelTask": {
        "min": {"id": "t-1"},
        "full": {"tenant": "acme", "id": "t-1", "metadata": {"reason": "user"}},
        "missing": [("id", "$", {"metadata": {"reason": "user"}})],
        "wrong": [("$.metadata", {"id": "t-1", "metadata": ["user"]}, "wrong-type")],
    },
    "SubscribeToTask": {
        "min": {"id": "t-1"},
        "full": {"tenant": "acme", "id": "t-1"},
        "missing": [("id", "$", {})],
        "wrong": [("$.id", {"id": True}, "wrong-type")],
    },
    "CreateTaskPushNotificationConfig": {
        "min": {"taskId": "t-1", "url": "https://example.com/hook"},
        "full": {"tenant": "acme", "id": "cfg-1", "taskId": "t-1", **PUSH},
        "missing": [("url", "$", {"taskId": "t-1", "token": "tok-1"}),
                    ("scheme", "$.authentication",
                     {"taskId": "t-1", "url": "https://example.com/hook", "authentication": {"credentials": "x"}})],
        "wrong": [("$.url", {"taskId": "t-1", "url": 5}, "wrong-type")],
    },
    "GetTaskPushNotificationConfig": {
        "min": {"taskId": "t-1", "id": "cfg-1"},
        "full": {"tenant": "acme", "taskId": "t-1", "id": "cfg-1"},
        "missing": [("taskId", "$", {"id": "cfg-1"}), ("id", "$", {"taskId": "t-1"})],
        "wrong": [("$.id", {"taskId": "t-1", "id": {"v": 1}}, "wrong-type")],
    },
    "ListTaskPushNotificationConfigs": {
        "min": {"taskId": "t-1"},
        "full": {"tenant": "acme", "taskId": "t-1", "pageSize": 5, "pageToken": "p-1"},
        "missing": [("taskId", "$", {"pageSize": 5})],
        "wrong": [("$.pageSize", {"taskId": "t-1", "pageSize": "five"}, "out-of-range")],
    },
    "GetExtendedAgentCard": {
        "min": {},
        "full": {"tenant": "acme"},
        "missing": [],
        "wrong": [("$.tenant", {"tenant": 1}, "wrong-type")],
    },
    "DeleteTaskPushNotificationConfig": {
        "min": {"taskId": "t-1", "id": "cfg-1"},
        "full": {"tenant": "acme", "taskId": "t-1", "id": "cfg-1"},
        "missing": [("id", "$", {"taskId": "t-1"})],
        "wrong": [("$.taskId", {"taskId": 1.5, "id": "cfg-1"}, "wrong-type")],
    },
}
SPECS["SendStreamingMessage"] = copy.deepcopy(SPECS["SendMessage"])


def rest_has_body(op: str) -> bool:
    return METHODS[op]["http"][0]["body"]


def path_vars(op: str) -> set[str]:
    return {camel(n) for n in path_fields(METHODS[op]["http"][0])}


def build_per_operation():
    for op in OPS:
        spec = SPECS[op]
        rt = req_type(op)
        r_ok = requirement(f"a2a.v1.request.{op}", PROTO + f" (message {rt}, rpc {op})",
                           f"A `{op}` request decodes as `{rt}` on every binding: required members present and "
                           "well-typed, the others optional.")
        r_bad = requirement("a2a.v1.request.invalid-params", NOTES + " section 5.4; JSON-RPC 2.0 section 5.1",
                            "A request whose params do not decode as the operation's request message is refused "
                            "with -32602 (JSON-RPC) or HTTP 400 with reason INVALID_PARAMS (HTTP+JSON), naming the "
                            "JSON path of the offending value and the kind of failure.")
        for b in BINDINGS:
            base = f"{op}/request/{b}"
            request_case(f"{base}/min", r_ok, f"A `{op}` request with only its required members is dispatched "
                         f"as `{rt}` and re-encodes unchanged.", b, op, spec["min"], dispatched(op, spec["min"]))
            request_case(f"{base}/full", r_ok, f"A `{op}` request with every member set is dispatched as `{rt}` "
                         "and re-encodes unchanged.", b, op, spec["full"], dispatched(op, spec["full"]))
            for field, at, params in spec["missing"]:
                if b == "rest" and at == "$" and field in path_vars(op):
                    continue  # a path variable cannot be left out of a path
                request_case(f"{base}/missing-{field}", r_bad, f"A `{op}` request without the required `{field}` "
                             f"is refused as invalid params at `{at}`, the object that lacks it.",
                             b, op, params, invalid(b, at, "missing-field"))
            for path, params, kind in spec["wrong"]:
                name = path.rsplit(".", 1)[-1]
                if b == "rest" and (name in path_vars(op) or not rest_has_body(op)):
                    continue  # path and query values are text; see the query cases
                request_case(f"{base}/wrong-type-{name}", r_bad, f"A `{op}` request whose `{name}` has the wrong "
                             f"type is refused as invalid params at `{path}` ({kind}).", b, op, params,
                             invalid(b, path, kind))
        # leniency every operation shares (JSON-RPC: the whole request is the params)
        r_unknown = requirement("a2a.v1.protojson.unknown-fields", NOTES + " section 5.7 (unknown fields SHOULD be "
                                "ignored)", "Unknown members of a request or answer are ignored and not re-encoded.")
        p = {**spec["min"], "futureField": {"x": 1}}
        request_case(f"{op}/request/jsonrpc/unknown-field", r_unknown, f"A `{op}` request with an unknown member "
                     "is dispatched without it.", "jsonrpc", op, p, dispatched(op, spec["min"]))
        if rest_has_body(op):
            request_case(f"{op}/request/rest/unknown-field", r_unknown, f"A `{op}` body with an unknown member is "
                         "dispatched without it.", "rest", op, p, dispatched(op, spec["min"]))
        else:
            request_case(f"{op}/request/rest/unknown-query", r_unknown, f"A `{op}` call with an unknown query "
                         "parameter is dispatched without it.", "rest", op, spec["min"],
                         dispatched(op, spec["min"]), query_extra="futureParam=1")
        r_null = requirement("a2a.v1.protojson.null-absent", "spec: ProtoJSON (null is accepted for every field "
                             "and means its default)", "A member whose value is null reads as absent.")
        p = {**spec["min"], "tenant": None}
        request_case(f"{op}/request/jsonrpc/null-tenant", r_null, f"A `{op}` request with \"tenant\": null is "
                     "dispatched as if the member were absent.", "jsonrpc", op, p, dispatched(op, spec["min"]))
        if op == "GetExtendedAgentCard":
            r_abs = requirement("a2a.v1.request.params-optional", NOTES + " section 9 (GetExtendedAgentCard may "
                                "omit params)", "A JSON-RPC request whose request message has no required member "
                                "may omit `params`; it decodes as the empty message.")
            add(f"{op}/request/jsonrpc/params-absent", r_abs, "`GetExtendedAgentCard` without params is "
                "dispatched as an empty request.", direction=C2S, binding="jsonrpc", operation=op,
                http=rpc_http(), input=rpc_body(op), expect=dispatched(op, {}))
        elif spec["missing"]:
            add(f"{op}/request/jsonrpc/params-absent", r_bad, f"A `{op}` request without params, although "
                f"`{rt}` has required members, is refused as invalid params at `$.params`.",
                direction=C2S, binding="jsonrpc", operation=op, http=rpc_http(), input=rpc_body(op),
                expect=rpc_refused(-32602, "INVALID_PARAMS", "$.params", "missing-field"))
        r_shape = requirement("a2a.v1.request.params-object", NOTES + " section 9 (params is the request message "
                              "in ProtoJSON)", "JSON-RPC params that are not an object are refused as invalid "
                              "params at `$.params`.")
        add(f"{op}/request/jsonrpc/params-array", r_shape, f"A `{op}` request whose params are an array is "
            "refused as invalid params at `$.params`.", direction=C2S, binding="jsonrpc", operation=op,
            http=rpc_http(), input=rpc_body(op, [spec["min"]]),
            expect=rpc_refused(-32602, "INVALID_PARAMS", "$.params", "wrong-type"))


def msg_with(**changes) -> dict:
    m = copy.deepcopy(MSG)
    for k, v in changes.items():
        if v is ABSENT:
            m.pop(k, None)
        else:
            m[k] = v
    return {"message": m}


def build_send_message():
    """The message model through SendMessage, on both bindings."""
    op = "SendMessage"
    r_msg = requirement("a2a.v1.type.message", PROTO + " (Message, Part)",
                        "A message needs `messageId`, a known `role` and at least one part; each part holds exactly "
                        "one of `text`, `raw`, `url`, `data`.")
    r_enum = requirement("a2a.v1.protojson.enum", "spec: ProtoJSON (enums by name or by number); " + NOTES +
                         " section 5.1 (UNSPECIFIED is invalid)", "An enum is read from its value name or its "
                         "proto number and re-encoded by name; an unknown name or number, and the zero "
                         "`*_UNSPECIFIED` value, are refused (not-listed).")
    r_alias = requirement("a2a.v1.protojson.proto-names", "spec: ProtoJSON (parsers accept the proto field name "
                          "and the lowerCamelCase name)", "A member written with its proto field name "
                          "(`message_id`) is read like its JSON name and re-encoded as the JSON name.")
    r_bytes = requirement("a2a.v1.protojson.bytes", "spec: ProtoJSON (bytes: standard or URL-safe base64, with or "
                          "without padding)", "A `bytes` member accepts the four base64 alphabets/paddings and "
                          "re-encodes as padded standard base64; text that is not base64 is refused (wrong-format).")
    r_int = requirement("a2a.v1.protojson.int32", "spec: ProtoJSON (int32: a number or a string, exponent notation "
                        "allowed, integral and in range)", "An int32 member is read from a number or a string "
                        "holding one, in any notation with an integral value in range; a fraction, a value out of "
                        "range or a string holding no number is refused (out-of-range).")
    r_meta = requirement("a2a.v1.type.metadata", PROTO + " (google.protobuf.Struct metadata)",
                         "`metadata` members are JSON objects kept as received; any other JSON value is refused.")
    r_dup = requirement("a2a.v1.protojson.repeated-key", "sdk: vectors/README.md decoding rule 11",
                        "A known member repeated within one object is refused (repeated-key).")
    r_value = requirement("a2a.v1.protojson.value-null", "spec: ProtoJSON (null is the default of every field "
                          "except google.protobuf.Value, where it is NULL_VALUE)",
                          "`Part.data` (a google.protobuf.Value) holding null is a data part whose value is null.")
    r_str = requirement("a2a.v1.protojson.strings", "spec: RFC 8259 section 7; sdk: vectors/README.md canonical "
                        "encoding rule 6", "Strings are read with every JSON escape and written with the canonical "
                        "escapes; a lone surrogate escape is refused (invalid-unicode).")
    cases = [
        ("role-by-number", r_enum, "`role` given as the number 2 reads as ROLE_AGENT.",
         msg_with(role=2), None),
        ("role-unknown", r_enum, "an unknown `role` name is refused (not-listed).",
         msg_with(role="ROLE_ROBOT"), ("$.message.role", "not-listed")),
        ("role-unspecified", r_enum, "`role` ROLE_UNSPECIFIED is refused: the zero value is invalid.",
         msg_with(role="ROLE_UNSPECIFIED"), ("$.message.role", "not-listed")),
        ("role-number-out-of-range", r_enum, "`role` given as the number 9 is refused (not-listed).",
         msg_with(role=9), ("$.message.role", "not-listed")),
        ("role-missing", r_msg, "a message without `role` is refused at the message.",
         msg_with(role=ABSENT), ("$.message", "missing-field")),
        ("message-id-missing", r_msg, "a message without `messageId` is refused at the message.",
         msg_with(messageId=ABSENT), ("$.message", "missing-field")),
        ("message-id-number", r_msg, "a numeric `messageId` is refused (wrong-type).",
         msg_with(messageId=5), ("$.message.messageId", "wrong-type")),
        ("parts-empty", r_msg, "an empty `parts` list is refused: a required list needs an item (too-short).",
         msg_with(parts=[]), ("$.message.parts", "too-short")),
        ("parts-missing", r_msg, "a message without `parts` is refused at the message.",
         msg_with(parts=ABSENT), ("$.message", "missing-field")),
        ("parts-not-array", r_msg, "`parts` given as an object is refused (wrong-type).",
         msg_with(parts={"text": "x"}), ("$.message.parts", "wrong-type")),
        ("part-none", r_msg, "a part with none of `text`, `raw`, `url`, `data` is refused (missing-one-of).",
         msg_with(parts=[{"mediaType": "text/plain"}]), ("$.message.parts[0]", "missing-one-of")),
        ("part-two", r_msg, "a part with both `text` and `url` is refused (one-of-twice).",
         msg_with(parts=[{"text": "x", "url": "https://example.com"}]), ("$.message.parts[0].url", "one-of-twice")),
        ("part-text-number", r_msg, "a `text` part holding a number is refused (wrong-type).",
         msg_with(parts=[{"text": 5}]), ("$.message.parts[0].text", "wrong-type")),
        ("part-data-array", r_msg, "a `data` part may hold any JSON value, here an array.",
         msg_with(parts=[{"data": [1, 2, 3]}]), None),
        ("part-data-string", r_msg, "a `data` part may hold a string.",
         msg_with(parts=[{"data": "plain"}]), None),
        ("raw-url-safe-unpadded", r_bytes, ("`raw` in URL-safe base64 without padding is read and re-encoded as "
         "padded standard base64."), msg_with(parts=[{"raw": "-_8"}]), None),
        ("raw-unpadded", r_bytes, "`raw` in standard base64 without padding is read.",
         msg_with(parts=[{"raw": "aGk"}]), None),
        ("raw-not-base64", r_bytes, "`raw` holding text that is not base64 is refused (wrong-format).",
         msg_with(parts=[{"raw": "not base64!"}]), ("$.message.parts[0].raw", "wrong-format")),
        ("metadata-array", r_meta, "message `metadata` given as an array is refused (wrong-type).",
         msg_with(metadata=[1]), ("$.message.metadata", "wrong-type")),
        ("metadata-string", r_meta, "message `metadata` given as a string is refused (wrong-type).",
         msg_with(metadata="x"), ("$.message.metadata", "wrong-type")),
        ("metadata-nested", r_meta, "nested `metadata` values are kept as received.",
         msg_with(metadata={"a": {"b": [1, True, None, "c"]}, "n": 1.5}), None),
        ("snake-case-names", r_alias, ("`message_id`, `context_id` and `reference_task_ids` are read as their JSON "
         "names."), {"message": {"message_id": "m-1", "context_id": "ctx-1", "role": "ROLE_USER",
                                "parts": [{"text": "hi", "media_type": "text/plain"}],
                                "reference_task_ids": ["t-0"]}}, None),
        ("null-context-id", "a2a.v1.protojson.null-absent", "`contextId`: null reads as absent.",
         msg_with(contextId=None), None),
        ("extensions-not-array", r_msg, "`extensions` given as a string is refused (wrong-type).",
         msg_with(extensions="https://example.com/ext"), ("$.message.extensions", "wrong-type")),
        ("history-length-string", r_int, "`configuration.historyLength` given as the string \"5\" reads as 5.",
         {"message": MSG, "configuration": {"historyLength": "5"}}, None),
        ("history-length-exponent", r_int, "`configuration.historyLength` given as 1e1 reads as 10.",
         {"message": MSG, "configuration": {"historyLength": 1e1}}, None),
        ("history-length-fraction", r_int, "`configuration.historyLength` 1.5 is refused (out-of-range).",
         {"message": MSG, "configuration": {"historyLength": 1.5}}, ("$.configuration.historyLength", "out-of-range")),
        ("history-length-too-large", r_int, ("`configuration.historyLength` 2147483648 is beyond int32 and "
         "refused (out-of-range)."), {"message": MSG, "configuration": {"historyLength": 2147483648}},
         ("$.configuration.historyLength", "out-of-range")),
        ("history-length-bad-string", r_int, ("`configuration.historyLength` given as \"five\" is refused "
         "(out-of-range)."), {"message": MSG, "configuration": {"historyLength": "five"}},
         ("$.configuration.historyLength", "out-of-range")),
        ("return-immediately-string", r_msg, ("`configuration.returnImmediately` given as the string \"true\" is "
         "refused (wrong-type)."), {"message": MSG, "configuration": {"returnImmediately": "true"}},
         ("$.configuration.returnImmediately", "wrong-type")),
        ("return-immediately-false", r_msg, ("`configuration.returnImmediately`: false is the default and is not "
         "re-encoded."), {"message": MSG, "configuration": {"returnImmediately": False}}, None),
        ("push-config-without-url", r_msg, ("a push config inside the configuration without `url` is refused at "
         "that config."), {"message": MSG, "configuration": {"taskPushNotificationConfig": {"token": "t"}}},
         ("$.configuration.taskPushNotificationConfig", "missing-field")),
        ("metadata-null", "a2a.v1.protojson.null-absent", "request `metadata`: null reads as absent.",
         {"message": MSG, "metadata": None}, None),
        ("part-data-null", r_value, ("a `data` part holding null holds the JSON null value (a "
         "google.protobuf.Value member takes null as a value, not as absence)."),
         msg_with(parts=[{"data": None}]), None),
        ("text-unicode", r_str, ("a text part with non-ASCII, U+2028, an emoji, a control character, quotes, a "
         "backslash and a slash re-encodes with the canonical escapes."),
         msg_with(parts=[{"text": "h\u00e9llo \u2028 \U0001F600 \u0001 \"q\" \\ / \t"}]), None),
        ("metadata-deep", r_meta, "message `metadata` nested 20 levels is kept as received.",
         msg_with(metadata=DEEP), None),
    ]
    for b in BINDINGS:
        for name, req, what, params, bad in cases:
            expect = dispatched(op, params) if bad is None else invalid(b, bad[0], bad[1])
            verdict = "is dispatched and re-encodes canonically" if bad is None else \
                f"is refused as invalid params at `{bad[0]}`"
            request_case(f"{op}/request/{b}/{name}", req, f"SendMessage where {what[0].lower() + what[1:]} "
                         f"({verdict}).", b, op, params, expect)
    # exact texts: repeated keys, a body that is not JSON
    text = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"a","messageId":"b",' \
           '"role":"ROLE_USER","parts":[{"text":"x"}]}}}'
    request_case(f"{op}/request/jsonrpc/repeated-message-id", r_dup, "SendMessage whose message repeats "
                 "`messageId` is refused as invalid params at the repeated key.", "jsonrpc", op, None,
                 invalid("jsonrpc", "$.message.messageId", "repeated-key"), rpc_text=text)
    request_case(f"{op}/request/rest/repeated-message-id", r_dup, "A SendMessage body whose message repeats "
                 "`messageId` is refused as invalid params at the repeated key.", "rest", op, {"message": MSG},
                 invalid("rest", "$.message.messageId", "repeated-key"),
                 rest_text='{"message":{"messageId":"a","messageId":"b","role":"ROLE_USER","parts":[{"text":"x"}]}}')


def build_strings_and_depth():
    op = "SendMessage"
    r_str = "a2a.v1.protojson.strings"
    part = '{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"a\\ud800b"}]}}'
    request_case(f"{op}/request/jsonrpc/lone-surrogate", r_str, "SendMessage whose text holds a lone surrogate "
                 "escape is refused as invalid params at the text (invalid-unicode).", "jsonrpc", op, None,
                 invalid("jsonrpc", "$.message.parts[0].text", "invalid-unicode"),
                 rpc_text='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":' + part + '}')
    request_case(f"{op}/request/rest/lone-surrogate", r_str, "A SendMessage body whose text holds a lone surrogate "
                 "escape is refused as invalid params at the text (invalid-unicode).", "rest", op, {"message": MSG},
                 invalid("rest", "$.message.parts[0].text", "invalid-unicode"), rest_text=part)
    r_depth = requirement("a2a.v1.request.nesting", "sdk: agentproto-jsonrpc MAX_NESTING_DEPTH (128 levels for a "
                          "JSON-RPC message, 127 for a request object)", "A request nested deeper than the limit "
                          "is refused as a parse error before it is decoded.")
    deep = "[" * 200 + "]" * 200
    meta = '{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"d":' + deep + '}}}'
    request_case(f"{op}/request/jsonrpc/nesting-too-deep", r_depth, "SendMessage whose metadata nests 200 arrays "
                 "is answered -32700.", "jsonrpc", op, None, rpc_refused(-32700, "PARSE_ERROR", id=None),
                 rpc_text='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":' + meta + '}')
    request_case(f"{op}/request/rest/nesting-too-deep", r_depth, "A SendMessage body whose metadata nests 200 "
                 "arrays is answered 400 PARSE_ERROR.", "rest", op, {"message": MSG},
                 rest_refused(400, "PARSE_ERROR"), rest_text=meta)


def build_list_tasks():
    op = "ListTasks"
    r_enum, r_int = "a2a.v1.protojson.enum", "a2a.v1.protojson.int32"
    r_ts = requirement("a2a.v1.protojson.timestamp", "spec: ProtoJSON (Timestamp: RFC 3339, any offset, 0-9 "
                       "fractional digits); " + NOTES + " section 5.6.1 (UTC, milliseconds)",
                       "A timestamp is read from any RFC 3339 date-time and re-encoded in UTC with milliseconds "
                       "(`…T03:04:05.000Z`); other text is refused (wrong-format).")
    r_bool = requirement("a2a.v1.type.bool", PROTO, "A bool member takes JSON true or false only (wrong-type).")
    cases = [
        ("status-by-number", r_enum, "`status` 2 reads as TASK_STATE_WORKING", {"status": 2}, None),
        ("status-unknown", r_enum, "an unknown `status` name is refused", {"status": "TASK_STATE_BOGUS"},
         ("$.status", "not-listed")),
        ("status-unspecified", r_enum, "`status` TASK_STATE_UNSPECIFIED is refused",
         {"status": "TASK_STATE_UNSPECIFIED"}, ("$.status", "not-listed")),
        ("status-zero", r_enum, "`status` 0 (UNSPECIFIED) is refused", {"status": 0}, ("$.status", "not-listed")),
        ("page-size-string", r_int, "`pageSize` \"10\" reads as 10", {"pageSize": "10"}, None),
        ("page-size-too-large", r_int, "`pageSize` 2147483648 is refused", {"pageSize": 2147483648},
         ("$.pageSize", "out-of-range")),
        ("page-size-negative-too-small", r_int, "`pageSize` -2147483649 is refused", {"pageSize": -2147483649},
         ("$.pageSize", "out-of-range")),
        ("timestamp-offset", r_ts, "`statusTimestampAfter` with a +01:00 offset is re-encoded in UTC",
         {"statusTimestampAfter": "2026-01-02T04:04:05+01:00"}, None),
        ("timestamp-nanos", r_ts, ("`statusTimestampAfter` with nine fractional digits is re-encoded with "
         "milliseconds"), {"statusTimestampAfter": "2026-01-02T03:04:05.123456789Z"}, None),
        ("timestamp-bad", r_ts, "`statusTimestampAfter` \"yesterday\" is refused",
         {"statusTimestampAfter": "yesterday"}, ("$.statusTimestampAfter", "wrong-format")),
        ("timestamp-no-zone", r_ts, "`statusTimestampAfter` without a zone is refused",
         {"statusTimestampAfter": "2026-01-02T03:04:05"}, ("$.statusTimestampAfter", "wrong-format")),
        ("timestamp-bad-day", r_ts, "`statusTimestampAfter` on February 30 is refused",
         {"statusTimestampAfter": "2026-02-30T00:00:00Z"}, ("$.statusTimestampAfter", "wrong-format")),
        ("include-artifacts-string", r_bool, "`includeArtifacts` \"yes\" is refused",
         {"includeArtifacts": "yes"}, ("$.includeArtifacts", "wrong-type")),
    ]
    for name, req, what, params, bad in cases:
        expect = dispatched(op, params) if bad is None else invalid("jsonrpc", bad[0], bad[1])
        request_case(f"{op}/request/jsonrpc/{name}", req, f"ListTasks where {what}.", "jsonrpc", op, params, expect)
    # the query string of the HTTP+JSON binding: text typed by the field it fills
    r_query = requirement("a2a.v1.rest.query", NOTES + " section 11 (GET parameters in the query string: "
                          "camelCase names, lower-case booleans, decimal numbers, RFC 3339 timestamps)",
                          "Query parameters of a GET are typed by the request field they fill; a value that does "
                          "not read as that type is refused as invalid params at `$.<field>`.")
    q = [
        ("query-status-name", "status=TASK_STATE_WORKING", {"status": "TASK_STATE_WORKING"}, None),
        ("query-status-number", "status=2", {"status": "TASK_STATE_WORKING"}, None),
        ("query-include-artifacts-1", "includeArtifacts=1", {"includeArtifacts": True}, None),
        ("query-include-artifacts-false", "includeArtifacts=false", {"includeArtifacts": False}, None),
        ("query-include-artifacts-bad", "includeArtifacts=maybe", None, ("$.includeArtifacts", "wrong-type")),
        ("query-page-size-bad", "pageSize=ten", None, ("$.pageSize", "out-of-range")),
        ("query-timestamp", "statusTimestampAfter=2026-01-02T04%3A04%3A05%2B01%3A00",
         {"statusTimestampAfter": "2026-01-02T03:04:05.000Z"}, None),
        ("query-timestamp-bad", "statusTimestampAfter=soon", None, ("$.statusTimestampAfter", "wrong-format")),
        ("query-snake-case", "context_id=ctx%201&page_size=3", {"contextId": "ctx 1", "pageSize": 3}, None),
        ("query-status-unknown", "status=TASK_STATE_BOGUS", None, ("$.status", "not-listed")),
    ]
    for name, query, params, bad in q:
        expect = dispatched(op, params) if bad is None else invalid("rest", bad[0], bad[1])
        verdict = "is dispatched" if bad is None else f"is refused as invalid params at `{bad[0]}`"
        request_case(f"{op}/request/rest/{name}", r_query if bad is None or name != "query-status-unknown" else r_enum,
                     f"GET /tasks?{query} {verdict}.", "rest", op, {}, expect, query_extra=query)
    r_get = "a2a.v1.rest.query"
    request_case("GetTask/request/rest/query-history-length-bad", r_get, "GET /tasks/t-1?historyLength=x is refused "
                 "as invalid params at `$.historyLength`.", "rest", "GetTask", {"id": "t-1"},
                 invalid("rest", "$.historyLength", "out-of-range"), query_extra="historyLength=x")
    request_case("GetTask/request/rest/path-escaped-id", "a2a.v1.request.GetTask", "GET /tasks/t%2F1%20x reads "
                 "the percent-decoded task id `t/1 x`.", "rest", "GetTask", {"id": "t/1 x"},
                 dispatched("GetTask", {"id": "t/1 x"}))
    request_case("GetTask/request/jsonrpc/history-length-null", "a2a.v1.protojson.null-absent", "GetTask with "
                 "\"historyLength\": null is dispatched without a history length.", "jsonrpc", "GetTask",
                 {"id": "t-1", "historyLength": None}, dispatched("GetTask", {"id": "t-1"}))
    request_case("GetTask/request/jsonrpc/snake-case-history-length", "a2a.v1.protojson.proto-names", "GetTask with "
                 "`history_length` reads it as `historyLength`.", "jsonrpc", "GetTask",
                 {"id": "t-1", "history_length": 4}, dispatched("GetTask", {"id": "t-1", "historyLength": 4}))


def build_envelope_and_routes():
    r_env = requirement("a2a.v1.jsonrpc.envelope", NOTES + " section 9; JSON-RPC 2.0 sections 4 and 5.1",
                        "A JSON-RPC body that is not JSON is answered -32700 with a null id; one that is not a "
                        "request object is answered -32600; an unknown method is answered -32601.")
    min_send = {"message": MSG}
    add("envelope/jsonrpc/not-json", r_env, "A JSON-RPC body that is not JSON is answered -32700 with id null.",
        direction=C2S, binding="jsonrpc", operation=None, http=rpc_http(), input_text='{"jsonrpc":"2.0",',
        expect=rpc_refused(-32700, "PARSE_ERROR", id=None))
    add("envelope/jsonrpc/invalid-utf8", r_env, "A JSON-RPC body that is not UTF-8 is answered -32700.",
        direction=C2S, binding="jsonrpc", operation=None, http=rpc_http(),
        input_base64="eyJqc29ucnBjIjoiMi4wIiwiaWQiOjEsIm1ldGhvZCI6IkdldFRhc2siLCJwYXJhbXMiOnsiaWQiOiL/In19",
        expect=rpc_refused(-32700, "PARSE_ERROR", id=None))
    add("envelope/jsonrpc/batch", r_env, "A JSON-RPC batch (an array) is answered -32600.",
        direction=C2S, binding="jsonrpc", operation=None, http=rpc_http(),
        input=[rpc_body("GetTask", {"id": "t-1"})], expect=rpc_refused(-32600, "INVALID_REQUEST", id=None))
    add("envelope/jsonrpc/no-jsonrpc-member", r_env, "A request without `\"jsonrpc\": \"2.0\"` is answered "
        "-32600 echoing its id.", direction=C2S, binding="jsonrpc", operation=None, http=rpc_http(),
        input={"id": 3, "method": "GetTask", "params": {"id": "t-1"}},
        expect=rpc_refused(-32600, "INVALID_REQUEST", id=3))
    add("envelope/jsonrpc/unknown-method", r_env, "An unknown method is answered -32601.",
        direction=C2S, binding="jsonrpc", operation=None, http=rpc_http(),
        input=rpc_body("GetTasks", {"id": "t-1"}), expect=rpc_refused(-32601, "METHOD_NOT_FOUND"))
    add("envelope/jsonrpc/v03-method-under-v1", r_env, "A 0.3 method name (`message/send`) sent as 1.0 is answered "
        "-32601: 1.0 methods are PascalCase.", direction=C2S, binding="jsonrpc", operation=None, http=rpc_http(),
        input=rpc_body("message/send", min_send), expect=rpc_refused(-32601, "METHOD_NOT_FOUND"))
    add("envelope/jsonrpc/string-id", r_env, "A string id is echoed as given and the request dispatched.",
        direction=C2S, binding="jsonrpc", operation="GetTask", http=rpc_http(),
        input=rpc_body("GetTask", {"id": "t-1"}, id="req-a"), expect=dispatched("GetTask", {"id": "t-1"}))
    add("envelope/jsonrpc/string-id-echoed-on-error", r_env, "An invalid request with a string id is answered with "
        "that id.", direction=C2S, binding="jsonrpc", operation="GetTask", http=rpc_http(),
        input=rpc_body("GetTask", {}, id="req-b"),
        expect=rpc_refused(-32602, "INVALID_PARAMS", "$.params", "missing-field", id="req-b"))
    add("envelope/jsonrpc/method-case", r_env, "Method names are case-sensitive: `sendMessage` is answered "
        "-32601.", direction=C2S, binding="jsonrpc", operation=None, http=rpc_http(),
        input=rpc_body("sendMessage", min_send), expect=rpc_refused(-32601, "METHOD_NOT_FOUND"))
    add("envelope/jsonrpc/repeated-method", r_env, "A request repeating `method` is answered -32600.",
        direction=C2S, binding="jsonrpc", operation=None, http=rpc_http(),
        input_text='{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"CancelTask","params":{"id":"t-1"}}',
        expect=rpc_refused(-32600, "INVALID_REQUEST"))
    add("envelope/jsonrpc/null-id", r_env, "A request with \"id\": null (allowed by JSON-RPC 2.0, discouraged) "
        "is dispatched.", direction=C2S, binding="jsonrpc", operation="GetTask", http=rpc_http(),
        input=rpc_body("GetTask", {"id": "t-1"}, id=None), expect=dispatched("GetTask", {"id": "t-1"}))
    r_note = requirement("a2a.v1.jsonrpc.notification", "spec: JSON-RPC 2.0 section 4.1 (a notification is "
                         "not answered); sdk: HTTP 204 is agentproto's status for the empty answer (A2A defines none)",
                         "A JSON-RPC request without `id` is a notification: it is processed and never answered "
                         "(HTTP 204 with no body).")
    add("envelope/jsonrpc/notification", r_note, "GetTask sent as a notification (no id) is processed and answered "
        "HTTP 204 without a body.", direction=C2S, binding="jsonrpc", operation="GetTask", http=rpc_http(),
        input={"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "t-1"}},
        expect={**dispatched("GetTask", {"id": "t-1"}), "http_status": 204})
    add("GetExtendedAgentCard/request/jsonrpc/params-null", "a2a.v1.request.params-optional",
        "`GetExtendedAgentCard` with \"params\": null is dispatched as an empty request.", direction=C2S,
        binding="jsonrpc", operation="GetExtendedAgentCard", http=rpc_http(),
        input=rpc_body("GetExtendedAgentCard", None), expect=dispatched("GetExtendedAgentCard", {}))
    add("envelope/jsonrpc/large-id-echoed", r_env, "An integer id beyond 64 bits is echoed exactly as written.",
        direction=C2S, binding="jsonrpc", operation="GetTask", http=rpc_http(),
        input_text='{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"GetTask","params":{}}',
        expect=rpc_refused(-32602, "INVALID_PARAMS", "$.params", "missing-field", id=123456789012345678901234567890))

    r_route = requirement("a2a.v1.rest.routes", NOTES + " section 11.3 (the google.api.http rules of a2a.proto)",
                          "HTTP+JSON requests are routed by verb and path; an unknown path is 404 and a known path "
                          "with a verb it does not take is 405; a body that is not JSON is 400.")
    add("envelope/rest/unknown-path", r_route, "GET /nothing/here matches no operation and is answered 404.",
        direction=C2S, binding="rest", operation=None, http={"method": "GET", "path": "/nothing/here",
                                                              "headers": dict(V1)},
        expect=rest_refused(404, "METHOD_NOT_FOUND"))
    add("envelope/rest/v03-path", r_route, "The 0.3 path /v1/message:send is, in 1.0, the tenant route "
        "/{tenant}/message:send with the tenant `v1`: it is dispatched as SendMessage for tenant `v1`.",
        direction=C2S, binding="rest", operation="SendMessage",
        http={"method": "POST", "path": "/v1/message:send", "headers": {**V1, **JSON_CT}}, input=min_send,
        expect=dispatched("SendMessage", {"tenant": "v1", **min_send}))
    add("envelope/rest/wrong-verb", r_route, "DELETE /message:send is a known path with the wrong verb: 405.",
        direction=C2S, binding="rest", operation=None, http={"method": "DELETE", "path": "/message:send",
                                                              "headers": dict(V1)},
        expect=rest_refused(405, "METHOD_NOT_ALLOWED"))
    add("envelope/rest/body-not-json", r_route, "A SendMessage body that is not JSON is answered 400 PARSE_ERROR.",
        direction=C2S, binding="rest", operation="SendMessage",
        http={"method": "POST", "path": "/message:send", "headers": {**V1, **JSON_CT}},
        input_text='{"message":', expect=rest_refused(400, "PARSE_ERROR"))
    add("envelope/rest/body-array", r_route, "A SendMessage body that is an array is refused as invalid params at "
        "`$`.", direction=C2S, binding="rest", operation="SendMessage",
        http={"method": "POST", "path": "/message:send", "headers": {**V1, **JSON_CT}},
        input=[min_send], expect=rest_refused(400, "INVALID_PARAMS", "$", "wrong-type"))
    r_sub = requirement("a2a.v1.rest.subscribe-verbs", NOTES + " sections 5.3 and 11.3.2 (POST) and a2a.proto "
                        "(GET) for :subscribe", "SubscribeToTask is served on both GET and POST "
                        "/tasks/{id}:subscribe.")
    add("SubscribeToTask/request/rest/post", r_sub, "POST /tasks/t-1:subscribe without a body is dispatched as "
        "SubscribeToTask.", direction=C2S, binding="rest", operation="SubscribeToTask",
        http={"method": "POST", "path": "/tasks/t-1:subscribe", "headers": dict(V1)},
        expect=dispatched("SubscribeToTask", {"id": "t-1"}))
    add("CancelTask/request/rest/no-body", "a2a.v1.request.CancelTask", "POST /tasks/t-1:cancel "
        "without a body is dispatched with the path's id.", direction=C2S, binding="rest", operation="CancelTask",
        http={"method": "POST", "path": "/tasks/t-1:cancel", "headers": {**V1, **JSON_CT}},
        expect=dispatched("CancelTask", {"id": "t-1"}))
    add("CancelTask/request/rest/path-id-wins", "a2a.v1.request.CancelTask", "POST /tasks/t-1:cancel whose body "
        "names another id is dispatched for the path's task.", direction=C2S, binding="rest",
        operation="CancelTask", http={"method": "POST", "path": "/tasks/t-1:cancel", "headers": {**V1, **JSON_CT}},
        input={"id": "t-9"}, expect=dispatched("CancelTask", {"id": "t-1"}))
    add("SendMessage/request/rest/a2a-media-type", requirement("a2a.v1.rest.media-type", NOTES + " section 11 "
        "(application/a2a+json SHOULD be used; accept both)", "Bodies typed application/a2a+json and "
        "application/json are both accepted."), "A SendMessage body typed application/a2a+json is dispatched.",
        direction=C2S, binding="rest", operation="SendMessage",
        http={"method": "POST", "path": "/message:send",
              "headers": {**V1, "Content-Type": "application/a2a+json"}},
        input=min_send, expect=dispatched("SendMessage", min_send))


def build_versions():
    r_v = requirement("a2a.v1.version.header", NOTES + " sections 3.2.6 and 3.6 (A2A-Version; a missing or empty "
                      "version is 0.3; VersionNotSupportedError -32009)", "A request names its version in "
                      "`A2A-Version` (header, case-insensitive, or query parameter); 1.0 is served; a request "
                      "without it is 0.3, and a version the interface does not serve is refused with "
                      "VersionNotSupported (-32009, HTTP 400).")
    get = {"id": "t-1"}
    for b in BINDINGS:
        def refused(b=b):
            if b == "jsonrpc":
                return rpc_refused(-32009, "VERSION_NOT_SUPPORTED")
            return rest_refused(400, "VERSION_NOT_SUPPORTED", status="FAILED_PRECONDITION")
        base_headers = JSON_CT if b == "jsonrpc" else {}
        request_case(f"version/{b}/missing", r_v, "A 1.0 GetTask without `A2A-Version` is taken as 0.3 and refused "
                     "with VersionNotSupported (GetTask is no 0.3 method, and HTTP+JSON serves 1.0 only).",
                     b, "GetTask", get, refused(), headers=dict(base_headers))
        request_case(f"version/{b}/empty", r_v, "An empty `A2A-Version` is taken as 0.3, like a missing one.",
                     b, "GetTask", get, refused(), headers={**base_headers, "A2A-Version": ""})
        request_case(f"version/{b}/unsupported", r_v, "`A2A-Version: 2.0` is refused with VersionNotSupported.",
                     b, "GetTask", get, refused(), headers={**base_headers, "A2A-Version": "2.0"})
        request_case(f"version/{b}/lower-case-name", r_v, "`a2a-version: 1.0` (header names are case-insensitive) "
                     "is served as 1.0.", b, "GetTask", get, dispatched("GetTask", get),
                     headers={**base_headers, "a2a-version": "1.0"})
        request_case(f"version/{b}/patch-ignored", r_v, "`A2A-Version: 1.0.1` is served as 1.0: a patch number "
                     "takes no part in negotiation.", b, "GetTask", get, dispatched("GetTask", get),
                     headers={**base_headers, "A2A-Version": "1.0.1"})
        request_case(f"version/{b}/query-parameter", r_v, "`?A2A-Version=1.0` instead of the header is served as "
                     "1.0.", b, "GetTask", get, dispatched("GetTask", get), headers=dict(base_headers),
                     query_extra="A2A-Version=1.0")
    add("version/rest/v03", r_v, "`A2A-Version: 0.3` on HTTP+JSON, which serves 1.0 only, is refused with "
        "VersionNotSupported.", direction=C2S, binding="rest", operation="GetTask",
        http={"method": "GET", "path": "/tasks/t-1", "headers": {"A2A-Version": "0.3"}},
        expect=rest_refused(400, "VERSION_NOT_SUPPORTED", status="FAILED_PRECONDITION"))
    add("version/jsonrpc/v03-with-v1-method", r_v, "`A2A-Version: 0.3` with the 1.0 method GetTask is refused with "
        "VersionNotSupported (0.3 has no such method).", direction=C2S, binding="jsonrpc", operation="GetTask",
        http=rpc_http({**JSON_CT, "A2A-Version": "0.3"}), input=rpc_body("GetTask", get),
        expect=rpc_refused(-32009, "VERSION_NOT_SUPPORTED"))


# The words of a decode failure (ErrorInfo.metadata `expected` and `found`; wording in
# vectors/README.md, "Error texts"), stated by one case of each kind at least.
INT32 = "an integer from -2147483648 to 2147483647, or a string holding one"
STATES = ", ".join(f'"TASK_STATE_{s}"' for s in ("SUBMITTED", "WORKING", "COMPLETED", "FAILED", "CANCELED",
                                                   "INPUT_REQUIRED", "REJECTED", "AUTH_REQUIRED"))
ERROR_TEXTS = {
    "GetTask/request/jsonrpc/missing-id": ('the field "id"', "an object without it"),
    "GetTask/request/jsonrpc/wrong-type-id": ("a string", "the integer 7"),
    "CancelTask/request/rest/wrong-type-metadata": ("an object", "an array"),
    "CancelTask/request/jsonrpc/params-array": ("an object (CancelTaskRequest)", "an array"),
    "ListTasks/request/jsonrpc/page-size-too-large": (INT32, "the integer 2147483648"),
    "SendMessage/request/jsonrpc/history-length-fraction": (INT32, "the number 1.5"),
    "ListTaskPushNotificationConfigs/request/jsonrpc/wrong-type-pageSize": (INT32, 'the string "five"'),
    "ListTasks/request/jsonrpc/status-unknown": (f"one of {STATES}", 'the string "TASK_STATE_BOGUS"'),
    "SendMessage/request/rest/role-unknown": ('one of "ROLE_USER", "ROLE_AGENT"', 'the string "ROLE_ROBOT"'),
    "ListTasks/request/jsonrpc/status-zero": (
        "one of " + ", ".join(f"{i} ({n.strip(chr(34))})" for i, n in enumerate(STATES.split(", "), 1)),
        "the integer 0"),
    "ListTasks/request/jsonrpc/timestamp-bad": ("an RFC 3339 date-time", 'the string "yesterday"'),
    "SendMessage/request/jsonrpc/raw-not-base64": ("base64 text", 'the string "not base64!"'),
    "SendMessage/request/rest/lone-surrogate": ("a string of valid Unicode", "an invalid escape"),
    "SendMessage/request/jsonrpc/part-none": ('one of the fields "text", "raw", "url", "data"',
                                             "an object without any of them"),
    "SendMessage/request/rest/part-two": ('at most one of the fields "text" and "url"', "both"),
    "SendMessage/request/jsonrpc/parts-empty": ("an array of at least 1 items", "an array of 0 items"),
    "SendMessage/request/rest/repeated-message-id": ("each key once", 'the key "messageId" twice'),
    "SendMessage/request/jsonrpc/message-id-number": ("a string", "the integer 5"),
}


def add_error_texts():
    for cid, (expected, found) in ERROR_TEXTS.items():
        err = CASES["a2a/v1/" + cid]["expect"]["error"]
        assert "kind" in err, cid
        err["expected"] = expected
        err["found"] = found


def build_requests():
    build_per_operation()
    build_send_message()
    build_strings_and_depth()
    build_list_tasks()
    build_envelope_and_routes()
    build_versions()
    add_error_texts()
