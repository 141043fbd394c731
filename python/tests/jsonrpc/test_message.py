"""The envelope: both decode paths give one answer; failures get Rust's codes and ids."""

from __future__ import annotations

import pytest
from msgspec import UNSET, Raw

from agentproto.jsonrpc import (
    EnvelopeError,
    EnvelopeErrorKind,
    ErrorCode,
    ErrorObject,
    Notification,
    Request,
    Response,
    decode,
    encode,
    encode_response,
)

VALID = [
    b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}',
    b'{"jsonrpc":"2.0","id":"a","method":"x"}',
    b'{"jsonrpc":"2.0","method":"session/cancel","params":null}',
    b'{"jsonrpc":"2.0","id":7,"result":{"ok":true}}',
    b'{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no","data":[1]}}',
]


@pytest.mark.parametrize("line", VALID)
def test_both_paths_decode_a_valid_line_alike(line: bytes) -> None:
    assert decode(line, allow_null_id=True) == decode(line, allow_null_id=True, fast=False)


def test_params_stay_raw() -> None:
    message = decode(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{ "a" : 1 }}')
    assert isinstance(message, Request)
    assert message.params is not None and bytes(message.params) == b'{ "a" : 1 }'


@pytest.mark.parametrize(
    ("line", "code", "id", "path"),
    [
        (b"{", ErrorCode.PARSE_ERROR, UNSET, "$"),
        (b"[]", ErrorCode.INVALID_REQUEST, UNSET, "$"),
        (b'{"jsonrpc":"1.0","id":3,"method":"m"}', ErrorCode.INVALID_REQUEST, 3, "$.jsonrpc"),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"m"}', ErrorCode.INVALID_REQUEST, UNSET, "$.id"),
        (b'{"jsonrpc":"2.0","id":2,"method":"m","params":5}', ErrorCode.INVALID_PARAMS, 2, "$.params"),
        (b'{"jsonrpc":"2.0","id":2,"id":3,"method":"m"}', ErrorCode.INVALID_REQUEST, UNSET, "$.id"),
        (b'{"jsonrpc":"2.0","id":-0,"method":"m"}', ErrorCode.INVALID_REQUEST, UNSET, "$.id"),
        (b'{"jsonrpc":"2.0","id":"\xff","method":"m"}', ErrorCode.PARSE_ERROR, UNSET, "$"),
    ],
)
def test_bad_lines_map_to_a_code_an_id_and_a_path(line: bytes, code: int, id: object, path: str) -> None:
    fast = "id" not in line.decode(errors="replace") or b'"id":2,"id"' not in line
    with pytest.raises(EnvelopeError) as e:
        decode(line, fast=fast, check_duplicate_keys=not fast)
    assert (e.value.code, e.value.id, e.value.path) == (code, id, path)


def test_a_malformed_response_is_never_answered() -> None:
    with pytest.raises(EnvelopeError) as e:
        decode(b'{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}')
    assert e.value.kind is EnvelopeErrorKind.INVALID_RESPONSE
    assert e.value.reply() is None


def test_an_answered_failure_replies_with_its_path_as_data() -> None:
    with pytest.raises(EnvelopeError) as e:
        decode(b'{"id":4,"method":"m"}')
    reply = e.value.reply()
    assert reply is not None and reply.error is not None
    assert encode(reply) == (
        b'{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request: missing `jsonrpc`",'
        b'"data":{"path":"$"}}}'
    )


def test_messages_encode_compactly() -> None:
    assert encode(Notification("n", Raw(b'{"a":\n1}'))) == b'{"jsonrpc":"2.0","method":"n","params":{"a":1}}'
    assert encode(Response(None, result=None)) == b'{"jsonrpc":"2.0","id":null,"result":null}'
    error = ErrorObject.invalid_params("$.params.x", "a string", "null")
    assert encode_response(1, error=error) == (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: expected a string, found '
        b'null at $.params.x","data":{"path":"$.params.x","expected":"a string","found":"null"}}}'
    )
