"""JSON-RPC envelope and framing cases (vectors/jsonrpc/)."""

from __future__ import annotations

from vectorlib import *  # noqa: F403


def build_jsonrpc():
    R = "jsonrpc.id.type"

    def ok_id(name, idv, desc, text=None, req_id=R):
        kw = {"input_text": text} if text is not None else {"input": req(ECHO, {"x": 1}, id=idv)}
        case(f"jsonrpc/id/{name}", req_id, desc, x_request(ECHO, idv, None, {"x": 1}), **kw)

    def bad_id(name, text, desc, echo=None):
        case(f"jsonrpc/id/{name}", R, desc, x_reply_error(-32600, echo), input_text=text)

    ok_id("int", 1, "A request with the integer id 1 is dispatched with id 1.")
    ok_id("int-negative", -7, "A request with a negative integer id is dispatched with that id.")
    ok_id("int-zero", 0, "A request with id 0 is dispatched with id 0 (zero is not treated as absent).")
    big = 9223372036854775807
    ok_id("int-i64-max", big, "A request whose id is the largest int64 is dispatched with that exact id.",
          text='{"jsonrpc":"2.0","id":9223372036854775807,"method":"_test/echo","params":{"x":1}}\n')
    ok_id("int-i64-min", -big - 1, "A request whose id is the smallest int64 is dispatched with that exact id.",
          text='{"jsonrpc":"2.0","id":-9223372036854775808,"method":"_test/echo","params":{"x":1}}\n')
    ok_id("string", "req-1", "A request with a string id is dispatched with that string id.")
    ok_id("string-empty", "", "A request with the empty string as id is dispatched with id \"\" (not treated as absent).")
    ok_id("string-numeric", "1", "A request with the string id \"1\" is dispatched with the string, not the number 1.",
          req_id="jsonrpc.id.echo")
    ok_id("string-escapes", "a\"b\\c\n\t\u00e9/", "A request whose string id contains escaped quote, backslash, newline, tab, a \\u escape and an escaped slash is dispatched with the decoded string.",
          text='{"jsonrpc":"2.0","id":"a\\"b\\\\c\\n\\t\\u00e9\\/","method":"_test/echo","params":{"x":1}}\n',
          req_id="jsonrpc.id.echo")
    ok_id("string-emoji", "\U0001F980", "A request whose string id is an emoji written as a surrogate-pair escape is dispatched with the decoded character.",
          text='{"jsonrpc":"2.0","id":"\\ud83e\\udd80","method":"_test/echo","params":{"x":1}}\n',
          req_id="jsonrpc.strings.unicode")
    case("jsonrpc/id/null", "jsonrpc.id.null",
         "A request with \"id\": null is dispatched as a request (ACP v1 allows a null id), not as a notification.",
         x_request(ECHO, None, None, {"x": 1}), input=req(ECHO, {"x": 1}, id=None))
    bad_id("int-above-i64", '{"jsonrpc":"2.0","id":9223372036854775808,"method":"_test/echo","params":{"x":1}}\n',
           "A request whose id is one above the largest int64 is rejected with -32600 and id null.")
    bad_id("int-below-i64", '{"jsonrpc":"2.0","id":-9223372036854775809,"method":"_test/echo","params":{"x":1}}\n',
           "A request whose id is one below the smallest int64 is rejected with -32600 and id null.")
    bad_id("int-huge", '{"jsonrpc":"2.0","id":100000000000000000000000000000,"method":"_test/echo"}\n',
           "A request whose id is a 30-digit integer is rejected with -32600 and id null.")
    bad_id("fraction", '{"jsonrpc":"2.0","id":1.5,"method":"_test/echo","params":{"x":1}}\n',
           "A request with a fractional id is rejected with -32600 and id null.")
    bad_id("exponent", '{"jsonrpc":"2.0","id":1e3,"method":"_test/echo","params":{"x":1}}\n',
           "A request whose id is written in exponent form (1e3) is rejected with -32600 and id null.")
    bad_id("exponent-negative", '{"jsonrpc":"2.0","id":-2E2,"method":"_test/echo"}\n',
           "A request whose id is written as -2E2 is rejected with -32600 and id null.")
    bad_id("bool", '{"jsonrpc":"2.0","id":true,"method":"_test/echo","params":{"x":1}}\n',
           "A request with a boolean id is rejected with -32600 and id null.")
    bad_id("object", '{"jsonrpc":"2.0","id":{"n":1},"method":"_test/echo","params":{"x":1}}\n',
           "A request with an object id is rejected with -32600 and id null.")
    bad_id("array", '{"jsonrpc":"2.0","id":[1],"method":"_test/echo","params":{"x":1}}\n',
           "A request with an array id is rejected with -32600 and id null.")

    # version ---------------------------------------------------------------
    V = "jsonrpc.version"
    case("jsonrpc/version/one-point-zero", V, "A request with \"jsonrpc\": \"1.0\" and id 5 is rejected with -32600 echoing id 5.",
         x_reply_error(-32600, 5), input={"jsonrpc": "1.0", "id": 5, "method": ECHO, "params": {}})
    case("jsonrpc/version/number", V, "A request with \"jsonrpc\": 2.0 as a number and id 5 is rejected with -32600 echoing id 5.",
         x_reply_error(-32600, 5), input_text='{"jsonrpc":2.0,"id":5,"method":"_test/echo","params":{}}\n')
    case("jsonrpc/version/missing", V, "A request without a `jsonrpc` member and with id \"abc\" is rejected with -32600 echoing id \"abc\".",
         x_reply_error(-32600, "abc"), input={"id": "abc", "method": ECHO, "params": {}})
    case("jsonrpc/version/null", V, "A request with \"jsonrpc\": null and id 6 is rejected with -32600 echoing id 6.",
         x_reply_error(-32600, 6), input={"jsonrpc": None, "id": 6, "method": ECHO})
    case("jsonrpc/version/padded", V, "A request with \"jsonrpc\": \"2.0 \" (trailing space) and id 8 is rejected with -32600 echoing id 8.",
         x_reply_error(-32600, 8), input={"jsonrpc": "2.0 ", "id": 8, "method": ECHO})
    case("jsonrpc/version/missing-notification", V, "A notification without a `jsonrpc` member is rejected with -32600 and id null (there is no id to echo).",
         x_reply_error(-32600, None), input={"method": NOTE, "params": {}})

    # method ----------------------------------------------------------------
    M = "jsonrpc.method.required"
    case("jsonrpc/method/missing-with-id", M, "An object with an id and params but no method and no result or error is rejected with -32600 echoing its id.",
         x_reply_error(-32600, 3), input={"jsonrpc": "2.0", "id": 3, "params": {}})
    case("jsonrpc/method/missing-without-id", M, "An object with only `jsonrpc` and `params` is rejected with -32600 and id null.",
         x_reply_error(-32600, None), input={"jsonrpc": "2.0", "params": {}})
    case("jsonrpc/method/number", M, "A request whose method is the number 42 is rejected with -32600 echoing its id.",
         x_reply_error(-32600, 4), input={"jsonrpc": "2.0", "id": 4, "method": 42})
    case("jsonrpc/method/null", M, "A request whose method is null is rejected with -32600 echoing its id.",
         x_reply_error(-32600, 4), input={"jsonrpc": "2.0", "id": 4, "method": None})
    case("jsonrpc/method/array", M, "A request whose method is an array of strings is rejected with -32600 echoing its id.",
         x_reply_error(-32600, "m"), input={"jsonrpc": "2.0", "id": "m", "method": ["_test/echo"]})
    case("jsonrpc/method/empty-object", M, "The empty object is rejected with -32600 and id null.",
         x_reply_error(-32600, None), input={})
    case("jsonrpc/method/only-version", M, "An object holding only \"jsonrpc\": \"2.0\" is rejected with -32600 and id null.",
         x_reply_error(-32600, None), input={"jsonrpc": "2.0"})
    case("jsonrpc/method/result-without-id", "jsonrpc.response.shape", "An object with `result` but no `id` is a malformed response; responses are never answered (answering could start a loop between two peers), so it is ignored.",
         x_ignored("invalid-response"), input={"jsonrpc": "2.0", "result": {}})
    U = "jsonrpc.method.unknown"
    case("jsonrpc/method/unknown-request", U, "A request for the unknown non-extension method `foo/bar` is answered with -32601 echoing its id.",
         x_reply_error(-32601, 9), input=req("foo/bar", {}, id=9))
    case("jsonrpc/method/unknown-notification", U, "A notification for the unknown non-extension method `foo/bar` is dropped without a reply.",
         x_ignored("unknown-notification"), input=notif("foo/bar", {}))
    case("jsonrpc/method/empty-string", U, "A request whose method is the empty string is answered with -32601 echoing its id.",
         x_reply_error(-32601, 10), input=req("", {}, id=10))
    case("jsonrpc/method/dollar-request", U, "A request for the undefined protocol method `$/ping` is answered with -32601.",
         x_reply_error(-32601, 11), input=req("$/ping", {}, id=11))
    case("jsonrpc/method/dollar-notification", U, "A notification for the undefined protocol method `$/progress` is dropped without a reply.",
         x_ignored("unknown-notification"), input=notif("$/progress", {"token": 1}))
    case("jsonrpc/method/case-sensitive", U, "Method names are case-sensitive: a request for `Session/Prompt` is answered with -32601.",
         x_reply_error(-32601, 12), input=req("Session/Prompt", {"sessionId": "s", "prompt": []}, id=12))
    E = "jsonrpc.extension.dispatch"
    case("jsonrpc/method/extension-request", E, "A request for the extension method `_test/echo` is dispatched under its raw name with type null and its params unchanged.",
         x_request(ECHO, 1, None, {"a": [1, 2, {"b": None}], "c": "d"}), input=req(ECHO, {"a": [1, 2, {"b": None}], "c": "d"}))
    case("jsonrpc/method/extension-notification", E, "A notification for the extension method `_test/notify` is dispatched under its raw name with type null.",
         x_notification(NOTE, None, {"n": 1}), input=notif(NOTE, {"n": 1}))
    case("jsonrpc/method/extension-vendor-name", E, "An extension request named like `_zed.dev/workspace/buffers` keeps its leading underscore and dots when dispatched.",
         x_request("_zed.dev/workspace/buffers", 2, None, {}), input=req("_zed.dev/workspace/buffers", {}, id=2))
    case("jsonrpc/method/long-name", "jsonrpc.method.long", "An extension request whose method name is 4096 characters long is dispatched with the full name.",
         x_request("_" + "x" * 4095, 1, None, {}), input=req("_" + "x" * 4095, {}))
    case("jsonrpc/method/unicode-name", "jsonrpc.strings.unicode", "An extension request whose method name contains non-ASCII characters sent as raw UTF-8 is dispatched with the same name.",
         x_request("_tëst/ünïcode", 1, None, {}), input=req("_tëst/ünïcode", {}))
    case("jsonrpc/method/escaped-slash", "jsonrpc.strings.unicode", "A method name written with an escaped slash (`_test\\/echo`) is dispatched as `_test/echo`.",
         x_request(ECHO, 1, None, {}), input_text='{"jsonrpc":"2.0","id":1,"method":"_test\\/echo","params":{}}\n')

    # responses ---------------------------------------------------------------
    P = pend(7, ECHO)
    case("jsonrpc/response/result", "jsonrpc.response.result", "A result response for the pending request 7 resolves it with the result.",
         x_response(7, ECHO, None, {"ok": True}), input=resp(7, {"ok": True}), pending=P)
    case("jsonrpc/response/result-null", "jsonrpc.response.result", "A result response whose result is null resolves the pending extension request with null.",
         x_response(7, ECHO, None, None), input=resp(7, None), pending=P)
    case("jsonrpc/response/result-string-id", "jsonrpc.response.result", "A result response with the string id \"a\" resolves the request pending under the string id \"a\".",
         x_response("a", ECHO, None, [1, 2]), input=resp("a", [1, 2]), pending={'"a"': ECHO, "1": ECHO})
    case("jsonrpc/response/result-null-id", "jsonrpc.id.null", "A result response with id null resolves a request that was sent with id null and is pending.",
         x_response(None, ECHO, None, {}), input=resp(None, {}), pending={"null": ECHO})
    case("jsonrpc/response/unknown-id", "jsonrpc.response.unmatched", "A result response whose id 99 is not pending is dropped without a reply.",
         x_ignored("unmatched-response"), input=resp(99, {}), pending=P)
    case("jsonrpc/response/unknown-id-error", "jsonrpc.response.unmatched", "An error response whose id 99 is not pending is dropped without a reply.",
         x_ignored("unmatched-response"), input=err(99, {"code": -32603, "message": "boom"}), pending=P)
    case("jsonrpc/response/id-type-mismatch", "jsonrpc.response.unmatched", "A result response with the string id \"7\" does not match the request pending under the number 7 and is dropped.",
         x_ignored("unmatched-response"), input=resp("7", {}), pending=P)
    case("jsonrpc/response/null-id-error-unmatched", "jsonrpc.response.unmatched", "An error response with id null (the peer could not read our id) matches nothing pending and is dropped without a reply.",
         x_ignored("unmatched-response"), input=err(None, {"code": -32700, "message": "Parse error"}), pending=P)
    RS = "jsonrpc.response.shape"
    case("jsonrpc/response/result-and-error-pending", RS, "A response carrying both `result` and `error` for the pending id 7 fails that call locally at path `$` and nothing is sent back.",
         x_call_failed(7, "$"), input={"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": -32603, "message": "x"}}, pending=P)
    case("jsonrpc/response/result-and-error-unmatched", RS, "A response carrying both `result` and `error` whose id is not pending is dropped as an invalid response.",
         x_ignored("invalid-response"), input={"jsonrpc": "2.0", "id": 8, "result": {}, "error": {"code": -32603, "message": "x"}}, pending=P)
    ER = "jsonrpc.response.error"
    case("jsonrpc/response/error", ER, "An error response for the pending id 7 resolves the call with the peer's code and message.",
         x_error_reply(7, -32603, "Internal error"), input=err(7, {"code": -32603, "message": "Internal error"}), pending=P)
    case("jsonrpc/response/error-unknown-code", ER, "An error response with the non-standard code 12345 resolves the call with that code (the code set is open).",
         x_error_reply(7, 12345, "custom failure"), input=err(7, {"code": 12345, "message": "custom failure"}), pending=P)
    case("jsonrpc/response/error-with-data", ER, "An error response with structured `data` resolves the call with the error.",
         x_error_reply(7, -32002, "Resource not found"), input=err(7, {"code": -32002, "message": "Resource not found", "data": {"sessionId": "sess_1", "extra": [1, None]}}), pending=P)
    case("jsonrpc/response/error-data-string", ER, "An error response whose `data` is a plain string resolves the call with the error.",
         x_error_reply(7, -32000, "Authentication required"), input=err(7, {"code": -32000, "message": "Authentication required", "data": "login first"}), pending=P)
    case("jsonrpc/response/error-cancelled", ER, "An error response with -32800 (request cancelled) resolves the call with that code.",
         x_error_reply(7, -32800, "Request cancelled"), input=err(7, {"code": -32800, "message": "Request cancelled"}), pending=P)
    case("jsonrpc/response/error-int32-min", ER, "An error response with code -2147483648 (the smallest int32) resolves the call with that code.",
         x_error_reply(7, -2147483648, "edge"), input=err(7, {"code": -2147483648, "message": "edge"}), pending=P)
    ES = "jsonrpc.response.error-shape"
    case("jsonrpc/response/error-code-string", ES, "An error response whose code is a string fails the pending call at `$.error.code`.",
         x_call_failed(7, "$.error.code"), input=err(7, {"code": "-32603", "message": "x"}), pending=P)
    case("jsonrpc/response/error-code-fraction", ES, "An error response whose code is 1.5 fails the pending call at `$.error.code`.",
         x_call_failed(7, "$.error.code"), input=err(7, {"code": 1.5, "message": "x"}), pending=P)
    case("jsonrpc/response/error-code-above-int32", ES, "An error response whose code 2147483648 is outside int32 fails the pending call at `$.error.code`.",
         x_call_failed(7, "$.error.code"), input=err(7, {"code": 2147483648, "message": "x"}), pending=P)
    case("jsonrpc/response/error-message-missing", ES, "An error object without `message` fails the pending call at `$.error`, the object that lacks it.",
         x_call_failed(7, "$.error"), input=err(7, {"code": -32603}), pending=P)
    case("jsonrpc/response/error-not-object", ES, "An `error` member that is a string fails the pending call at `$.error`.",
         x_call_failed(7, "$.error"), input=err(7, "boom"), pending=P)

    # batches and scalars -------------------------------------------------------
    B = "jsonrpc.batch.rejected"
    case("jsonrpc/batch/empty", B, "The empty array is answered with one -32600 error with id null.",
         x_reply_error(-32600, None), input=[])
    case("jsonrpc/batch/one-request", B, "An array holding one valid request is answered with one -32600 error with id null and the request is not dispatched.",
         x_reply_error(-32600, None), input=[req(ECHO, {}, id=1)])
    case("jsonrpc/batch/two-messages", B, "An array holding a request and a notification is answered with one -32600 error with id null and neither is dispatched.",
         x_reply_error(-32600, None), input=[req(ECHO, {}, id=1), notif(NOTE, {})])
    case("jsonrpc/batch/scalars", B, "An array of numbers is answered with one -32600 error with id null.",
         x_reply_error(-32600, None), input=[1, 2, 3])
    O = "jsonrpc.message.object"
    case("jsonrpc/scalar/number", O, "A line holding the bare number 1 is answered with -32600 and id null.",
         x_reply_error(-32600, None), input=1)
    case("jsonrpc/scalar/string", O, "A line holding a bare JSON string is answered with -32600 and id null.",
         x_reply_error(-32600, None), input="hello")
    case("jsonrpc/scalar/true", O, "A line holding the bare value true is answered with -32600 and id null.",
         x_reply_error(-32600, None), input=True)
    case("jsonrpc/scalar/null", O, "A line holding the bare value null is answered with -32600 and id null.",
         x_reply_error(-32600, None), input=None)

    # framing ----------------------------------------------------------------
    good = '{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"x":1}}'
    G = x_request(ECHO, 1, None, {"x": 1})
    F = "jsonrpc.framing.parse-error"
    case("jsonrpc/framing/invalid-utf8-in-string", "jsonrpc.framing.utf8", "A line whose string value contains the byte 0xFF (not UTF-8) is a parse error with id null.",
         x_reply_error(-32700, None), input_base64=b64(b'{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"a\xffb"}}\n'))
    case("jsonrpc/framing/invalid-utf8-truncated-sequence", "jsonrpc.framing.utf8", "A line containing a truncated two-byte UTF-8 sequence (0xC3 followed by a quote) is a parse error with id null.",
         x_reply_error(-32700, None), input_base64=b64(b'{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"\xc3"}}\n'))
    case("jsonrpc/framing/invalid-utf8-overlong", "jsonrpc.framing.utf8", "A line containing the overlong encoding 0xC0 0xAF is a parse error with id null.",
         x_reply_error(-32700, None), input_base64=b64(b'{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"\xc0\xaf"}}\n'))
    case("jsonrpc/framing/valid-utf8-raw", "jsonrpc.strings.unicode", "A line with raw multi-byte UTF-8 (two-, three- and four-byte sequences) inside params is accepted and decoded.",
         x_request(ECHO, 1, None, {"s": "é€🦀"}), input_base64=b64('{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"é€🦀"}}\n'.encode()))
    case("jsonrpc/framing/not-json", F, "A line of plain text is a parse error with id null.",
         x_reply_error(-32700, None), input_text="hello world\n")
    case("jsonrpc/framing/truncated-object", F, "A line holding a JSON object cut off in the middle is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/ec\n')
    case("jsonrpc/framing/unclosed-brace", F, "A line whose object is missing its closing brace is a parse error with id null, even though the id was visible.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{}\n')
    case("jsonrpc/framing/single-quotes", F, "A line using single-quoted strings is a parse error with id null.",
         x_reply_error(-32700, None), input_text="{'jsonrpc':'2.0','id':1,'method':'_test/echo'}\n")
    case("jsonrpc/framing/trailing-comma", F, "A line whose object has a trailing comma is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo",}\n')
    case("jsonrpc/framing/unescaped-control", F, "A line whose string contains a raw tab character (unescaped control character) is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"a\tb"}}\n')
    case("jsonrpc/framing/nan", F, "A line using the non-JSON literal NaN is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"n":NaN}}\n')
    T = "jsonrpc.framing.trailing-data"
    case("jsonrpc/framing/trailing-garbage", T, "A valid request followed on the same line by ` x` is a parse error with id null and is not dispatched.",
         x_reply_error(-32700, None), input_text=good + " x\n")
    case("jsonrpc/framing/two-objects", T, "Two valid requests on one line without a newline between them are a parse error with id null.",
         x_reply_error(-32700, None), input_text=good + good + "\n")
    case("jsonrpc/framing/trailing-whitespace", T, "A valid request followed by spaces and a tab before the newline is dispatched normally.",
         G, input_text=good + "  \t\n")
    case("jsonrpc/framing/leading-whitespace", T, "A valid request preceded by spaces is dispatched normally.",
         G, input_text="   " + good + "\n")
    L = "jsonrpc.framing.line-end"
    case("jsonrpc/framing/crlf", L, "A valid request terminated by CRLF is dispatched normally.",
         G, input_text=good + "\r\n")
    case("jsonrpc/framing/no-newline-at-eof", L, "A valid request at end of input without a terminating newline is dispatched normally.",
         G, input_text=good)
    case("jsonrpc/framing/pretty-whitespace-inside", L, "Insignificant whitespace between tokens (spaces and tabs) inside the object is accepted.",
         G, input_text='{ "jsonrpc" : "2.0" ,\t"id" : 1 , "method" : "_test/echo" , "params" : { "x" : 1 } }\n')
    N = "jsonrpc.framing.nesting"

    def nested(depth):
        v = {}
        for _ in range(depth - 1):
            v = {"a": v}
        return v

    case("jsonrpc/framing/nesting-200", N, "An extension request whose params are objects nested 200 levels deep exceeds the nesting limit and is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":' + compact(nested(200)) + "}\n")
    case("jsonrpc/framing/nesting-100", N, "An extension request whose params are objects nested 100 levels deep is within the limit and is dispatched with the params unchanged.",
         x_request(ECHO, 1, None, nested(100)), input=req(ECHO, nested(100)))
    case("jsonrpc/framing/nesting-arrays-200", N, "An extension request whose params hold arrays nested 200 levels deep is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"a":' + "[" * 200 + "]" * 200 + "}}\n")

    # envelope keys ------------------------------------------------------------
    D = "jsonrpc.envelope.duplicate-keys"
    case("jsonrpc/envelope/duplicate-id", D, "A request with two `id` members is rejected with -32600 and id null (no single id can be read).",
         x_reply_error(-32600, None), input_text='{"jsonrpc":"2.0","id":1,"id":2,"method":"_test/echo","params":{}}\n')
    case("jsonrpc/envelope/duplicate-method", D, "A request with two `method` members and id 1 is rejected with -32600 echoing id 1.",
         x_reply_error(-32600, 1), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","method":"_test/other","params":{}}\n')
    case("jsonrpc/envelope/duplicate-jsonrpc", D, "A request with `jsonrpc` given twice (both \"2.0\") and id 1 is rejected with -32600 echoing id 1.",
         x_reply_error(-32600, 1), input_text='{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"_test/echo"}\n')
    case("jsonrpc/envelope/duplicate-params", D, "A request with two `params` members and id 1 is rejected with -32600 echoing id 1.",
         x_reply_error(-32600, 1), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{},"params":{"x":1}}\n')
    case("jsonrpc/envelope/duplicate-unknown-key", D, "A request in which an unknown top-level key appears twice is dispatched normally (repeated unknown keys are not checked).",
         G, input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"x":1},"extra":1,"extra":2}\n')
    case("jsonrpc/envelope/duplicate-key-in-extension-params", D, "Repeated keys inside the free-form params of an extension request are not checked and the request is dispatched.",
         x_request(ECHO, 1, None, {"x": 2}), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"x":1,"x":2}}\n')
    K = "jsonrpc.envelope.unknown-keys"
    case("jsonrpc/envelope/unknown-top-level-keys", K, "A request with extra top-level members (`extra`, `trace`) is dispatched and the extra members are ignored.",
         G, input={"jsonrpc": "2.0", "id": 1, "method": ECHO, "params": {"x": 1}, "extra": True, "trace": {"t": 1}})
    case("jsonrpc/envelope/key-order", K, "A request whose members come in an unusual order (params first, jsonrpc last) is dispatched normally.",
         G, input_text='{"params":{"x":1},"method":"_test/echo","id":1,"jsonrpc":"2.0"}\n')

    # params --------------------------------------------------------------------
    PN = "jsonrpc.params.null-is-absent"
    case("jsonrpc/params/absent-extension", PN, "An extension request without params is dispatched with type null.",
         x_request(ECHO, 1, None, None), input=req(ECHO))
    case("jsonrpc/params/null-extension", PN, "An extension request with \"params\": null is dispatched just like one without params.",
         x_request(ECHO, 1, None, None), input=req(ECHO, None))
    case("jsonrpc/params/absent-notification", PN, "An extension notification without params is dispatched with type null.",
         x_notification(NOTE, None, None), input=notif(NOTE))
    PS = "jsonrpc.params.structured"
    case("jsonrpc/params/scalar-number", PS, "An extension request whose params is the number 5 is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req(ECHO, 5))
    case("jsonrpc/params/scalar-string", PS, "An extension request whose params is a string is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req(ECHO, "x"))
    case("jsonrpc/params/scalar-bool", PS, "An extension request whose params is false is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req(ECHO, False))
    case("jsonrpc/params/unicode-values", "jsonrpc.strings.unicode", "Extension params holding escaped non-ASCII text, a surrogate pair and an escaped NUL are dispatched with the decoded strings.",
         x_request(ECHO, 1, None, {"s": "héllo 😀", "nul": "a\u0000b", "k\u00e9y": "v"}),
         input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"h\\u00e9llo \\ud83d\\ude00","nul":"a\\u0000b","k\\u00e9y":"v"}}\n')
    case("jsonrpc/params/big-free-form-numbers", "jsonrpc.extension.dispatch", "Free-form extension params holding a negative number, a fraction and an exponent number are dispatched unchanged in value.",
         x_request(ECHO, 1, None, {"a": -3, "b": 0.25, "c": 1000.0}),
         input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"a":-3,"b":0.25,"c":1e3}}\n')


# shared ACP values -------------------------------------------------------------
