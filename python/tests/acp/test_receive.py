"""`classify`: one line in, what to do out (requests, notifications, responses, findings)."""

from __future__ import annotations

import json

from agentproto.acp import v1
from agentproto.acp.receive import (
    CallFailed,
    ExtMessage,
    Ignored,
    IncomingNotification,
    IncomingRequest,
    IncomingResponse,
    Reply,
    classify,
)
from agentproto.codec import UNSET, DecodeErrorKind, Unknown, WarningKind, encode
from agentproto.jsonrpc import ErrorCode


def test_invalid_params_are_answered_with_path_kind_expected_and_found() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text"}]}}'
    out = classify(line, v1.AGENT, {})
    assert isinstance(out, Reply)
    error = out.reply.error
    assert error is not None and error.code == ErrorCode.INVALID_PARAMS
    assert error.data is not UNSET
    # The members in this order: path, kind, expected, found.
    assert list(json.loads(bytes(error.data)).items()) == [
        ("path", "$.params.prompt[0]"),
        ("kind", "missing-field"),
        ("expected", 'the field "text"'),
        ("found", "an object without it"),
    ]
    assert (
        error.message == 'invalid params: expected the field "text", found an object without it at $.params.prompt[0]'
    )
    assert out.finding.error is not None and out.finding.error.kind is DecodeErrorKind.MISSING_FIELD


def test_a_method_of_the_other_side_is_not_found() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{}}'
    out = classify(line, v1.AGENT, {})
    assert isinstance(out, Reply) and out.finding.code == "method-not-found"
    assert out.reply.error is not None and out.reply.error.message == 'method not found: "fs/read_text_file"'


def test_an_unknown_variant_of_a_closed_union_is_kept_with_a_warning() -> None:
    update = '{"sessionUpdate":"hologram","z":[1, 2]}'
    line = f'{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}'.encode()
    out = classify(line, v1.CLIENT, {})
    assert isinstance(out, IncomingNotification)
    assert isinstance(out.params.update, Unknown) and out.params.update.tag == "hologram"
    assert [(w.path, w.kind) for w in out.warnings] == [("$.params.update", WarningKind.UNKNOWN_VARIANT)]
    # The warning carries the failure refusing the variant would be.
    (warning,) = out.warnings
    assert warning.message == 'unknown SessionUpdate variant "hologram" kept as raw JSON'
    error = warning.error
    assert (error.path, error.kind, error.expected, error.found) == (
        "$.params.update",
        DecodeErrorKind.UNKNOWN_VARIANT,
        "a known variant of SessionUpdate",
        'the string "hologram"',
    )
    assert encode(out.params) == b'{"sessionId":"s","update":{"sessionUpdate":"hologram","z":[1, 2]}}'


def test_lenient_fields_are_dropped_with_a_warning() -> None:
    params = '{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"lost"}}'
    line = f'{{"jsonrpc":"2.0","method":"session/update","params":{params}}}'.encode()
    out = classify(line, v1.CLIENT, {})
    assert isinstance(out, IncomingNotification)
    assert [w.path for w in out.warnings] == ["$.params.update.status"]
    # The warning carries the failure that made the value be dropped; its message is
    # rendered from it.
    (warning,) = out.warnings
    assert warning.error.kind is DecodeErrorKind.NOT_LISTED and warning.error.path == "$.params.update.status"
    assert warning.error.found == 'the string "lost"'
    assert warning.message == f"dropped invalid value: {warning.error.message} at $.params.update.status"
    assert encode(out.params) == b'{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c"}}'


def test_responses_decode_by_the_pending_method() -> None:
    out = classify(b'{"jsonrpc":"2.0","id":3,"result":null}', v1.CLIENT, {3: "session/load"})
    assert isinstance(out, IncomingResponse) and out.type_name == "LoadSessionResponse"
    bad = classify(b'{"jsonrpc":"2.0","id":3,"result":{"stopReason":5}}', v1.CLIENT, {3: "session/prompt"})
    assert isinstance(bad, CallFailed) and bad.path == "$.result.stopReason"
    assert bad.error is not None and bad.error.kind is DecodeErrorKind.WRONG_TYPE
    unmatched = classify(b'{"jsonrpc":"2.0","id":4,"result":{}}', v1.CLIENT, {3: "session/prompt"})
    assert isinstance(unmatched, Ignored) and unmatched.finding.code == "unmatched-response"


def test_extension_messages_pass_through_raw() -> None:
    out = classify(b'{"jsonrpc":"2.0","id":1,"method":"_x/y","params":{ "a":1 }}', v1.AGENT, {})
    assert isinstance(out, IncomingRequest) and isinstance(out.params, ExtMessage)
    assert out.params.payload is not None and bytes(out.params.payload) == b'{ "a":1 }'
