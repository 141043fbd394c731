"""The error texts some reply_error cases state (vectors/README.md, "Error texts").

Every kind of decode failure has at least one case here, and so has a parse error with
its position: wrong type, integer out of its format's range, missing field, repeated
key, value outside a closed enum, and -32700 at a line and column. `author.py` adds
these members to the case's `expect.error`; each runner compares them with the reply's
`message` and `data`.
"""

from __future__ import annotations


def _params(path: str, expected: str, found: str) -> dict[str, str]:
    return {
        "path": path,
        "message": f"invalid params: expected {expected}, found {found} at {path}",
        "expected": expected,
        "found": found,
    }


def _parse(what: str, line: int, column: int) -> dict[str, object]:
    return {"message": f"parse error: {what} at line {line}, column {column}", "line": line, "column": column}


U16 = "an integer from 0 to 65535"
U32 = "an integer from 0 to 4294967295"
U64 = "an integer from 0 to 18446744073709551615"
I64 = "an integer from -9223372036854775808 to 9223372036854775807"
BAD = "invalid JSON"
UTF8 = "invalid utf-8"
EOF_ = "unexpected end of input"

ERROR_TEXTS: dict[str, dict[str, object]] = {
    # wrong type
    "acp/v1/session.prompt/params-wrong-type-prompt": _params("$.params.prompt", "an array", 'the string "Hello"'),
    "acp/v1/session.new/params-wrong-type-cwd": _params("$.params.cwd", "a string", "the integer 42"),
    # missing field
    "acp/v1/session.prompt/params-missing-prompt": _params("$.params", 'the field "prompt"', "an object without it"),
    # repeated key
    "acp/v1/types/duplicate-keys/params-session-id": _params(
        "$.params.sessionId", "each key once", 'the key "sessionId" twice'
    ),
    # a value a closed enum does not list
    "acp/v1/session.request_permission/params-wrong-type-kind": _params(
        "$.params.options[0].kind",
        'one of "allow_once", "allow_always", "reject_once", "reject_always"',
        'the string "allow_sometimes"',
    ),
    "acp/v1/types/elicitation/form-string-format-unknown": _params(
        "$.params.requestedSchema.properties.f.format",
        'one of "email", "uri", "date", "date-time"',
        'the string "phone"',
    ),
    # integers outside their format's range, or not integers
    "acp/v1/types/numbers/uint16-protocol-version-overflow": _params(
        "$.params.protocolVersion", U16, "the integer 65536"
    ),
    "acp/v1/types/numbers/uint16-protocol-version-negative": _params("$.params.protocolVersion", U16, "the integer -1"),
    "acp/v1/types/numbers/uint16-protocol-version-fraction": _params("$.params.protocolVersion", U16, "the number 1.5"),
    "acp/v1/types/numbers/uint32-line-negative": _params("$.params.line", U32, "the integer -1"),
    "acp/v1/types/numbers/uint32-limit-overflow": _params("$.params.limit", U32, "the integer 4294967296"),
    "acp/v1/types/numbers/uint64-output-limit-overflow": _params(
        "$.params.outputByteLimit", U64, "the number 18446744073709552000.0"
    ),
    "acp/v1/types/numbers/int64-integer-property-overflow": _params(
        "$.params.requestedSchema.properties.n.minimum", I64, "the integer 9223372036854775808"
    ),
    # a number beyond a double, a string that is not Unicode
    "acp/v1/types/numbers/uint16-protocol-version-beyond-double": _params(
        "$.params.protocolVersion", "a number within the range of a double", "a number beyond it"
    ),
    "acp/v1/types/strings/path-lone-surrogate": _params("$.params.path", "a string of valid Unicode", "an invalid escape"),
    # parse errors: where the line stops being JSON
    "jsonrpc/framing/not-json": _parse(BAD, 1, 1),
    "jsonrpc/framing/invalid-utf8-in-string": _parse(UTF8, 1, 63),
    "jsonrpc/framing/invalid-utf8-truncated-sequence": _parse(UTF8, 1, 62),
    "jsonrpc/framing/invalid-utf8-overlong": _parse(UTF8, 1, 62),
    "jsonrpc/framing/truncated-object": _parse(EOF_, 1, 43),
    "jsonrpc/framing/unclosed-brace": _parse(EOF_, 1, 58),
    "jsonrpc/framing/single-quotes": _parse(BAD, 1, 2),
    "jsonrpc/framing/trailing-comma": _parse(BAD, 1, 47),
    "jsonrpc/framing/unescaped-control": _parse(BAD, 1, 63),
    "jsonrpc/framing/nan": _parse(BAD, 1, 61),
    "jsonrpc/framing/trailing-garbage": _parse(BAD, 1, 65),
    "jsonrpc/framing/two-objects": _parse(BAD, 1, 64),
}
