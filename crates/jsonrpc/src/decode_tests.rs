//! One test per envelope rule: exact code, id and path.

use super::*;

/// What a line is expected to decode to.
enum Expect {
    Request(RequestId, &'static str, Option<&'static str>),
    Notification(&'static str, Option<&'static str>),
    Result(RequestId, &'static str),
    Error(RequestId, ErrorCode, &'static str),
    /// kind, answered code, recovered id, path
    Fail(EnvelopeErrorKind, ErrorCode, Option<RequestId>, &'static str),
}

fn check(input: &str, expect: Expect) {
    check_with(input.as_bytes(), &DecodeOptions::default(), expect)
}

fn check_with(input: &[u8], options: &DecodeOptions, expect: Expect) {
    let decoded = Message::decode_with(input, options);
    let shown = String::from_utf8_lossy(input);
    match expect {
        Expect::Request(id, method, params) => match decoded {
            Ok(Message::Request { id: got_id, method: got_method, params: got_params }) => {
                assert_eq!(got_id, id, "{shown}");
                assert_eq!(got_method, method, "{shown}");
                assert_eq!(got_params.as_deref().map(RawValue::get), params, "{shown}");
            }
            other => panic!("{shown}: expected a request, got {other:?}"),
        },
        Expect::Notification(method, params) => match decoded {
            Ok(Message::Notification { method: got_method, params: got_params }) => {
                assert_eq!(got_method, method, "{shown}");
                assert_eq!(got_params.as_deref().map(RawValue::get), params, "{shown}");
            }
            other => panic!("{shown}: expected a notification, got {other:?}"),
        },
        Expect::Result(id, result) => match decoded {
            Ok(Message::Response { id: got_id, result: Ok(got_result) }) => {
                assert_eq!(got_id, id, "{shown}");
                assert_eq!(got_result.get(), result, "{shown}");
            }
            other => panic!("{shown}: expected a result, got {other:?}"),
        },
        Expect::Error(id, code, message) => match decoded {
            Ok(Message::Response { id: got_id, result: Err(error) }) => {
                assert_eq!(got_id, id, "{shown}");
                assert_eq!(error.code, code, "{shown}");
                assert_eq!(error.message, message, "{shown}");
            }
            other => panic!("{shown}: expected an error response, got {other:?}"),
        },
        Expect::Fail(kind, code, id, path) => match decoded {
            Err(error) => {
                assert_eq!(error.kind(), kind, "{shown}: {error}");
                assert_eq!(error.code(), code, "{shown}: {error}");
                assert_eq!(error.id(), id.as_ref(), "{shown}: {error}");
                assert_eq!(error.path(), path, "{shown}: {error}");
                match error.reply() {
                    Some(Message::Response { id: reply_id, result: Err(reply) }) => {
                        assert!(error.is_answered());
                        assert_eq!(reply_id, id.unwrap_or(RequestId::NULL));
                        assert_eq!(reply.code, code);
                    }
                    None => assert!(!error.is_answered()),
                    other => panic!("unexpected reply {other:?}"),
                }
            }
            Ok(message) => panic!("{shown}: expected a failure, got {message:?}"),
        },
    }
}

use EnvelopeErrorKind::{InvalidNotification, InvalidParams, InvalidRequest, InvalidResponse, Parse};

fn n(id: i64) -> Option<RequestId> {
    Some(RequestId::number(id))
}

#[test]
fn request_with_object_params() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}"#,
        Expect::Request(RequestId::number(1), "session/new", Some(r#"{"cwd":"/"}"#)),
    );
}

#[test]
fn keys_in_any_order() {
    check(
        r#"{"params":[1, 2],"method":"m","id":"a","jsonrpc":"2.0"}"#,
        Expect::Request(RequestId::string("a"), "m", Some("[1, 2]")),
    );
}

#[test]
fn escaped_keys_and_strings() {
    check(
        r#"{"json\u0072pc":"2\u002e0","\u0069d":"x\"y","met\u0068od":"a\/b\u00e9"}"#,
        Expect::Request(RequestId::string("x\"y"), "a/bé", None),
    );
}

#[test]
fn notification_without_params() {
    check(r#"{"jsonrpc":"2.0","method":"n"}"#, Expect::Notification("n", None));
}

#[test]
fn null_params_count_as_absent() {
    check(r#"{"jsonrpc":"2.0","method":"n","params":null}"#, Expect::Notification("n", None));
    check(r#"{"jsonrpc":"2.0","id":3,"method":"r","params":null}"#, Expect::Request(RequestId::number(3), "r", None));
}

#[test]
fn unknown_top_level_keys_are_ignored() {
    check(r#"{"jsonrpc":"2.0","x":{"deep":[1,{"a":null}]},"method":"n","x":1}"#, Expect::Notification("n", None));
}

#[test]
fn result_response_and_null_result() {
    check(r#"{"jsonrpc":"2.0","id":7,"result":{"ok":true}}"#, Expect::Result(RequestId::number(7), r#"{"ok":true}"#));
    check(r#"{"jsonrpc":"2.0","id":7,"result":null}"#, Expect::Result(RequestId::number(7), "null"));
}

#[test]
fn error_response_keeps_unknown_code_and_data() {
    let line = r#"{"jsonrpc":"2.0","id":"q","error":{"code":-31999,"message":"nope","data":{"a":1},"extra":1}}"#;
    check(line, Expect::Error(RequestId::string("q"), ErrorCode(-31999), "nope"));
    match Message::decode(line.as_bytes()) {
        Ok(Message::Response { result: Err(error), .. }) => {
            assert_eq!(error.data.as_deref().map(RawValue::get), Some(r#"{"a":1}"#));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn error_response_with_null_id_is_accepted() {
    check(
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
        Expect::Error(RequestId::NULL, ErrorCode::PARSE_ERROR, "parse error"),
    );
}

#[test]
fn not_json_is_a_parse_error() {
    check("hello", Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"));
    check(r#"{"jsonrpc":"2.0","id":1,"method":"#, Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"));
    check("", Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"));
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    check_with(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
        &DecodeOptions::default(),
        Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"),
    );
    check_with(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"x\":\"\xc3\"}",
        &DecodeOptions::default(),
        Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"),
    );
}

#[test]
fn trailing_data_is_a_parse_error() {
    check(r#"{"jsonrpc":"2.0","method":"n"} x"#, Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"));
    check(r#"{"jsonrpc":"2.0","method":"n"}{}"#, Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"));
    check("{\"jsonrpc\":\"2.0\",\"method\":\"n\"} \t\r", Expect::Notification("n", None));
}

#[test]
fn nesting_beyond_the_limit_is_a_parse_error() {
    let deep = |depth: usize| {
        // The message object is level 1, params level 2.
        let inner = depth - 1;
        format!(r#"{{"jsonrpc":"2.0","method":"n","params":{}{}}}"#, "[".repeat(inner), "]".repeat(inner))
    };
    check(
        &deep(MAX_NESTING_DEPTH),
        Expect::Notification(
            "n",
            Some(Box::leak(
                format!("{}{}", "[".repeat(MAX_NESTING_DEPTH - 1), "]".repeat(MAX_NESTING_DEPTH - 1)).into_boxed_str(),
            )),
        ),
    );
    check(&deep(MAX_NESTING_DEPTH + 1), Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"));
    // Brackets inside strings do not count.
    let quoted = format!(r#"{{"jsonrpc":"2.0","method":"n","params":["{}"]}}"#, "[".repeat(500));
    assert!(Message::decode(quoted.as_bytes()).is_ok());
}

#[test]
fn batch_is_one_invalid_request_with_null_id() {
    check(
        r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$"),
    );
    check("[]", Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$"));
    check("[1,", Expect::Fail(Parse, ErrorCode::PARSE_ERROR, None, "$"));
}

#[test]
fn scalar_line_is_an_invalid_request() {
    for line in ["42", "\"x\"", "true", "null", "-1.5"] {
        check(line, Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$"));
    }
}

#[test]
fn missing_or_wrong_jsonrpc_echoes_a_valid_id() {
    check(r#"{"id":5,"method":"m"}"#, Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(5), "$"));
    check(
        r#"{"jsonrpc":"1.0","id":5,"method":"m"}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(5), "$.jsonrpc"),
    );
    check(
        r#"{"jsonrpc":2.0,"id":"s","method":"m"}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, Some(RequestId::string("s")), "$.jsonrpc"),
    );
    check(
        r#"{"jsonrpc":"2.0 ","method":"m"}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$.jsonrpc"),
    );
    check(
        r#"{"jsonrpc":"1.0","id":1.5,"method":"m"}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$.jsonrpc"),
    );
}

#[test]
fn bad_id_type_is_an_invalid_request_with_null_id() {
    for id in ["1.5", "1.0", "9223372036854775808", "-9223372036854775809", "true", "[1]", "{}", "1e2"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
        check(&line, Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$.id"));
    }
}

#[test]
fn extreme_integer_ids_are_valid() {
    check(
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"}"#,
        Expect::Request(RequestId::number(i64::MIN), "m", None),
    );
    check(
        r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}"#,
        Expect::Request(RequestId::number(i64::MAX), "m", None),
    );
}

#[test]
fn null_request_id_needs_the_option() {
    let line = br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#;
    check_with(line, &DecodeOptions::default(), Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$.id"));
    check_with(line, &DecodeOptions::default().allow_null_id(true), Expect::Request(RequestId::NULL, "m", None));
}

#[test]
fn method_not_a_string_is_an_invalid_request() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(1), "$.method"),
    );
    check(
        r#"{"jsonrpc":"2.0","method":null}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$.method"),
    );
}

#[test]
fn neither_method_nor_result_nor_error_is_an_invalid_request() {
    check(r#"{"jsonrpc":"2.0","id":1}"#, Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(1), "$"));
    check(r#"{}"#, Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$"));
    check(
        r#"{"jsonrpc":"2.0","id":1,"params":{}}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(1), "$"),
    );
}

#[test]
fn request_carrying_result_is_an_invalid_request() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"m","result":1}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(1), "$.result"),
    );
}

#[test]
fn both_result_and_error_is_an_invalid_response() {
    check(
        r#"{"jsonrpc":"2.0","id":4,"result":1,"error":{"code":1,"message":"x"}}"#,
        Expect::Fail(InvalidResponse, ErrorCode::INVALID_REQUEST, n(4), "$"),
    );
}

#[test]
fn bad_error_object_is_an_invalid_response() {
    for (error, path) in [
        (r#"{"code":1.5,"message":"x"}"#, "$.error.code"),
        (r#"{"code":"1","message":"x"}"#, "$.error.code"),
        (r#"{"code":2147483648,"message":"x"}"#, "$.error.code"),
        (r#"{"code":-2147483649,"message":"x"}"#, "$.error.code"),
        (r#"{"message":"x"}"#, "$.error"),
        (r#"{"code":1,"message":5}"#, "$.error.message"),
        (r#"{"code":1}"#, "$.error"),
        (r#"{"code":1,"code":2,"message":"x"}"#, "$.error.code"),
        ("\"boom\"", "$.error"),
        ("null", "$.error"),
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":9,"error":{error}}}"#);
        check(&line, Expect::Fail(InvalidResponse, ErrorCode::INVALID_REQUEST, n(9), path));
    }
    check(
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-2147483648,"message":""}}"#,
        Expect::Error(RequestId::number(9), ErrorCode(i32::MIN), ""),
    );
}

#[test]
fn malformed_response_envelope_is_an_invalid_response() {
    check(r#"{"id":9,"result":1}"#, Expect::Fail(InvalidResponse, ErrorCode::INVALID_REQUEST, n(9), "$"));
    check(r#"{"jsonrpc":"2.0","result":1}"#, Expect::Fail(InvalidResponse, ErrorCode::INVALID_REQUEST, None, "$"));
    check(
        r#"{"jsonrpc":"2.0","id":1.5,"result":1}"#,
        Expect::Fail(InvalidResponse, ErrorCode::INVALID_REQUEST, None, "$.id"),
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
        Expect::Fail(InvalidResponse, ErrorCode::INVALID_REQUEST, n(1), "$.result"),
    );
}

#[test]
fn duplicate_envelope_key_is_an_invalid_request() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(1), "$.method"),
    );
    check(
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"a"}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(1), "$.jsonrpc"),
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, None, "$.id"),
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{},"params":[]}"#,
        Expect::Fail(InvalidRequest, ErrorCode::INVALID_REQUEST, n(1), "$.params"),
    );
}

#[test]
fn scalar_params_are_invalid_params() {
    for params in ["1", "\"x\"", "true", "false", "-2.5"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"m","params":{params}}}"#);
        check(&line, Expect::Fail(InvalidParams, ErrorCode::INVALID_PARAMS, n(2), "$.params"));
        let line = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params}}}"#);
        check(&line, Expect::Fail(InvalidNotification, ErrorCode::INVALID_PARAMS, None, "$.params"));
    }
}

#[test]
fn reply_data_carries_the_path() {
    let error = Message::decode(br#"{"jsonrpc":"2.0","id":1,"method":5}"#).unwrap_err();
    let reply = error.reply().unwrap();
    assert_eq!(
        String::from_utf8(reply.to_vec()).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: expected a string method, found integer","data":{"path":"$.method"}}}"#
    );
    let parse = Message::decode(b"nope").unwrap_err();
    assert_eq!(
        String::from_utf8(parse.reply().unwrap().to_vec()).unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at line 1, column 2","data":{"path":"$","line":1,"column":2}}}"#
    );
}

#[test]
fn parse_errors_say_where_the_line_stops_being_json() {
    let cases: [(&[u8], &str, (u32, u32)); 3] = [
        (
            br#"{"jsonrpc":"2.0","method":"n","params":{"a":1,}}"#,
            "parse error: invalid JSON at line 1, column 47",
            (1, 47),
        ),
        (br#"{"jsonrpc":"2.0","method":"#, "parse error: unexpected end of input at line 1, column 27", (1, 27)),
        (b"{\"jsonrpc\":\"2.0\",\n\"method\" \"n\"}", "parse error: invalid JSON at line 2, column 10", (2, 10)),
    ];
    for (line, message, position) in cases {
        let error = Message::decode(line).unwrap_err();
        assert_eq!((error.message(), error.position()), (message, Some(position)));
    }
}

#[test]
fn invalid_utf8_is_placed_at_its_first_bad_byte_in_characters() {
    let error = Message::decode(b"{\"\xc3\xa9\":\"\xed\xa0\x80\"}").unwrap_err();
    assert_eq!((error.message(), error.position()), ("parse error: invalid utf-8 at line 1, column 7", Some((1, 7))));
}

#[test]
fn encodes_exact_wire_strings() {
    let raw = |json: &str| RawValue::from_string(json.to_owned()).unwrap();
    let cases = [
        (
            Message::request(0, "initialize", Some(raw(r#"{"protocolVersion":1}"#))),
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        ),
        (Message::request("a\nb", "m", None), r#"{"jsonrpc":"2.0","id":"a\nb","method":"m"}"#),
        (
            Message::notification("session/update", Some(raw("[\n1,\r\n 2\n]"))),
            r#"{"jsonrpc":"2.0","method":"session/update","params":[1, 2]}"#,
        ),
        (Message::response(RequestId::number(3), Ok(raw("null"))), r#"{"jsonrpc":"2.0","id":3,"result":null}"#),
        (
            Message::response(RequestId::NULL, Err(ErrorObject::new(ErrorCode::PARSE_ERROR, "parse \"error\""))),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse \"error\""}}"#,
        ),
        (
            Message::response(
                RequestId::string("x"),
                Err(ErrorObject::new(ErrorCode(-1), "m").with_data(raw(r#"{"k":[]}"#))),
            ),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m","data":{"k":[]}}}"#,
        ),
    ];
    for (message, wire) in cases {
        let mut buffer = b"prefix:".to_vec();
        message.encode_into(&mut buffer);
        assert_eq!(std::str::from_utf8(&buffer).unwrap(), format!("prefix:{wire}"));
        let mut written = Vec::new();
        message.write_to(&mut written).unwrap();
        assert_eq!(std::str::from_utf8(&written).unwrap(), wire);
        assert_eq!(Message::decode(wire.as_bytes()).unwrap().to_vec(), wire.as_bytes());
    }
}
