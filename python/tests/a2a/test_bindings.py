"""The bindings' decoders beyond what the vectors state: ids echoed as written, HTTP
statuses and headers of refusals, the wire forms of errors, routes, query typing, and the
answer side's peer errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentproto.a2a import A2aError, ErrorKind, ErrorTable, Operation, jsonrpc, rest
from agentproto.a2a.answers import AnswerValue, CallFailed, ErrorReply
from agentproto.a2a.version import MissingVersion, check_version
from agentproto.codec.errors import DecodeError
from agentproto.codec.kind import DecodeErrorKind

V1 = {"A2A-Version": "1.0"}


def test_a_number_id_in_any_notation_is_echoed_as_written() -> None:
    body = b'{"jsonrpc":"2.0","id":1.50e3,"method":"GetTask","params":{}}'
    refusal = jsonrpc.read_request(body, V1)
    assert isinstance(refusal, jsonrpc.RpcRefusal)
    assert refusal.body().startswith(b'{"jsonrpc":"2.0","id":1.50e3,"error":{"code":-32602,')


def test_a_call_keeps_its_id_text() -> None:
    call = jsonrpc.read_request(b'{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"t"}}', V1)
    assert isinstance(call, jsonrpc.RpcCall)
    assert (call.id, call.operation, call.request.id) == (jsonrpc.RpcId(b'"a"'), Operation.GET_TASK, "t")


def test_a_refused_notification_is_answered_with_nothing() -> None:
    refusal = jsonrpc.read_request(b'{"jsonrpc":"2.0","method":"Nope"}', V1)
    assert isinstance(refusal, jsonrpc.RpcRefusal)
    assert (refusal.notification, refusal.http_status) == (True, 204)


def test_a_response_is_no_request() -> None:
    refusal = jsonrpc.read_request(b'{"jsonrpc":"2.0","id":1,"result":{}}', V1)
    assert isinstance(refusal, jsonrpc.RpcRefusal)
    assert (refusal.id, refusal.error.kind) == (None, ErrorKind.INVALID_REQUEST)


def test_a_foreign_content_type_is_refused() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}'
    refusal = jsonrpc.read_request(body, {**V1, "content-type": "text/plain"})
    assert isinstance(refusal, jsonrpc.RpcRefusal) and refusal.error.kind is ErrorKind.INVALID_REQUEST
    call = jsonrpc.read_request(body, {**V1, "Content-Type": "application/a2a+json; charset=utf-8"})
    assert isinstance(call, jsonrpc.RpcCall)


def test_the_missing_version_may_be_read_as_1_0() -> None:
    assert check_version({}, "", "JSON-RPC") is not None
    assert check_version({}, "", "JSON-RPC", MissingVersion.V1_0) is None
    assert check_version({}, "a2a-version=1.0", "JSON-RPC") is None
    refused = check_version({"A2A-Version": "0.3"}, "", "HTTP+JSON")
    assert refused is not None and refused.kind is ErrorKind.VERSION_NOT_SUPPORTED


def test_invalid_params_carry_the_decode_error_in_error_info() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":7}}'
    refusal = jsonrpc.read_request(body, V1)
    assert isinstance(refusal, jsonrpc.RpcRefusal)
    error = json.loads(refusal.body())["error"]
    assert error["code"] == -32602
    assert error["data"] == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "INVALID_PARAMS",
            "domain": "a2a-protocol.org",
            "metadata": {"path": "$.params.id", "kind": "wrong-type", "expected": "a string", "found": "the integer 7"},
        }
    ]


def test_rest_error_bodies_follow_the_table() -> None:
    error = A2aError(ErrorKind.TASK_NOT_CANCELABLE).with_metadata("taskId", "t")
    assert error.message == "Task cannot be canceled"
    assert (error.http_status(), error.http_status(ErrorTable.V1_0_0)) == (400, 409)
    body = rest.RestRefusal(error, ErrorTable.V1_0_0).body()
    assert json.loads(body)["error"]["code"] == 409
    assert str(error) == "TASK_NOT_CANCELABLE (-32002): Task cannot be canceled"


def test_routes_variables_and_verbs() -> None:
    route = rest.find_route("GET", "/acme/tasks/t%2F1:subscribe")
    assert route is not None and route.method_ok
    assert (route.operation, route.variables) == (Operation.SUBSCRIBE_TO_TASK, (("tenant", "acme"), ("id", "t/1")))
    wrong = rest.read_request("PUT", "/tasks/t-1:cancel", "", V1, b"")
    assert isinstance(wrong, rest.RestRefusal)
    assert (wrong.http_status, wrong.allow) == (405, "POST")


def test_path_variables_win_over_the_body_and_the_tenant_is_the_requests() -> None:
    call = rest.read_request("POST", "/acme/tasks/t-1:cancel", "", V1, b'{"id":"other","metadata":{"a":1}}')
    assert isinstance(call, rest.RestCall)
    assert (call.tenant, call.request.tenant, call.request.id) == ("acme", "acme", "t-1")


def test_query_parameters_are_typed_by_their_field() -> None:
    query = "status=2&includeArtifacts=1&historyLength=3&unknown=x&page_size=4"
    call = rest.read_request("GET", "/tasks", query, V1, b"")
    assert isinstance(call, rest.RestCall)
    request = call.request
    assert (request.status.value, request.include_artifacts, request.history_length) == ("TASK_STATE_WORKING", True, 3)
    assert request.page_size == 4


def test_a_subscribe_post_without_a_body_reads_the_path() -> None:
    call = rest.read_request("POST", "/tasks/t-1:subscribe", "", V1, b"")
    assert isinstance(call, rest.RestCall) and call.request.id == "t-1"


def test_jsonrpc_answers() -> None:
    ok = jsonrpc.read_answer(
        Operation.GET_TASK, b'{"jsonrpc":"2.0","id":3,"result":{"id":"t","status":{"state":1}}}', 3
    )
    assert isinstance(ok, AnswerValue) and ok.value.id == "t"
    wrong_id = jsonrpc.read_answer(Operation.GET_TASK, b'{"jsonrpc":"2.0","id":"3","result":{}}', 3)
    assert isinstance(wrong_id, CallFailed) and wrong_id.error is None
    bad = jsonrpc.read_answer(Operation.GET_TASK, b'{"jsonrpc":"2.0","id":3,"result":{"id":"t"}}', 3)
    assert isinstance(bad, CallFailed) and isinstance(bad.error, DecodeError)
    assert (bad.error.path, bad.error.kind) == ("$.result", DecodeErrorKind.MISSING_FIELD)
    body = A2aError(ErrorKind.TASK_NOT_FOUND).with_metadata("taskId", "t").jsonrpc_error()
    reply = jsonrpc.read_answer(Operation.GET_TASK, json.dumps({"jsonrpc": "2.0", "id": 3, "error": body}).encode(), 3)
    assert isinstance(reply, ErrorReply)
    assert (reply.error.code, reply.error.reason, reply.error.metadata) == (-32001, "TASK_NOT_FOUND", {"taskId": "t"})
    assert reply.error.kind is ErrorKind.TASK_NOT_FOUND


def test_rest_answers() -> None:
    error = A2aError(ErrorKind.UNSUPPORTED_OPERATION)
    reply = rest.read_answer(Operation.SEND_MESSAGE, 400, json.dumps(error.rest_body()).encode())
    assert isinstance(reply, ErrorReply)
    assert (reply.error.http_status, reply.error.status, reply.error.kind) == (
        400,
        "FAILED_PRECONDITION",
        ErrorKind.UNSUPPORTED_OPERATION,
    )
    bare = rest.read_answer(Operation.GET_TASK, 404, b"<html/>")
    assert isinstance(bare, ErrorReply) and bare.error.kind is ErrorKind.TASK_NOT_FOUND
    empty = rest.read_answer(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, 200, b"")
    assert isinstance(empty, AnswerValue)


A2A_DECODE_ONLY = """
import sys
from agentproto.a2a import jsonrpc
call = jsonrpc.read_request(b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}', {"A2A-Version": "1.0"})
assert type(call).__name__ == "RpcCall", call
print(sorted(m for m in ("asyncio", "agentproto.acp", "agentproto.jsonrpc.connection") if m in sys.modules))
"""


def test_decoding_an_a2a_request_loads_neither_asyncio_nor_acp() -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-c", A2A_DECODE_ONLY],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": src},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def nested_send(depth: int) -> bytes:
    """A SendMessageRequest object nested `depth` levels deep (itself at level 1)."""
    arrays = depth - 3
    deep = "[" * arrays + "]" * arrays
    return f'{{"message":{{"messageId":"m","role":1,"parts":[{{"text":"x"}}],"metadata":{{"d":{deep}}}}}}}'.encode()


def test_requests_nest_at_most_max_request_depth_on_both_bindings() -> None:
    from agentproto.a2a.limits import MAX_REQUEST_DEPTH

    headers = {"A2A-Version": "1.0"}
    ok = rest.read_request("POST", "/message:send", "", headers, nested_send(MAX_REQUEST_DEPTH))
    assert isinstance(ok, rest.RestCall)
    deep = rest.read_request("POST", "/message:send", "", headers, nested_send(MAX_REQUEST_DEPTH + 1))
    assert isinstance(deep, rest.RestRefusal) and deep.error.kind is ErrorKind.PARSE

    def rpc(depth: int) -> bytes:
        return b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":' + nested_send(depth) + b"}"

    assert isinstance(jsonrpc.read_request(rpc(MAX_REQUEST_DEPTH), headers), jsonrpc.RpcCall)
    refused = jsonrpc.read_request(rpc(MAX_REQUEST_DEPTH + 1), headers)
    assert isinstance(refused, jsonrpc.RpcRefusal) and refused.error.kind is ErrorKind.PARSE and refused.id is None
