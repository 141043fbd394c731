"""A2A 0.3 compatibility, as the Rust and TypeScript SDKs have it: the 0.3 <-> 1.0
converters walking the generated tables (parts, states, `final`, `blocking`, push
configs, the card, data parts, error paths, the method table), and 0.3 JSON-RPC calls
(no `A2A-Version`) answered end to end by the ASGI server on the 1.0 endpoint (sends,
get, cancel, a direct message, a file part, 0.3 errors, a stream, push configs)."""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec
import pytest

from agentproto.a2a import codec
from agentproto.a2a.compat_v03 import convert, is_final_event, method_named
from agentproto.a2a.demo import DemoAgent, card
from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.generated.v03 import METHODS
from agentproto.a2a.push_guard import PushGuard
from agentproto.a2a.server import ServerOptions, create_app
from tests.a2a.servers import ServerThread, exchange, request_bytes

STATES = [
    ("submitted", "TASK_STATE_SUBMITTED"),
    ("working", "TASK_STATE_WORKING"),
    ("completed", "TASK_STATE_COMPLETED"),
    ("failed", "TASK_STATE_FAILED"),
    ("canceled", "TASK_STATE_CANCELED"),
    ("input-required", "TASK_STATE_INPUT_REQUIRED"),
    ("rejected", "TASK_STATE_REJECTED"),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED"),
]

USER_MESSAGE: dict[str, Any] = {
    "kind": "message",
    "messageId": "m-1",
    "role": "user",
    "parts": [
        {"kind": "text", "text": "Summarize these", "metadata": {"lang": "en"}},
        {"kind": "file", "file": {"bytes": "dGNr", "mimeType": "text/plain", "name": "input.txt"}},
        {"kind": "file", "file": {"uri": "https://example.com/report.pdf", "mimeType": "application/pdf"}},
        {"kind": "data", "data": {"count": 42}},
    ],
}


def to_v1(shape: str, value: Any) -> Any:
    return convert(shape, "v1", value, "$")


def to_v03(shape: str, value: Any) -> Any:
    return convert(shape, "v03", value, "$")


def decodes_as(type_name: str, value: Any) -> None:
    codec.decode(type_name, msgspec.json.encode(value), fast=False)


def test_messages_and_parts_take_the_1_0_shapes_and_come_back() -> None:
    up = to_v1("Message", USER_MESSAGE)
    assert "kind" not in up and up["role"] == "ROLE_USER"
    assert up["parts"] == [
        {"text": "Summarize these", "metadata": {"lang": "en"}},
        {"raw": "dGNr", "mediaType": "text/plain", "filename": "input.txt"},
        {"url": "https://example.com/report.pdf", "mediaType": "application/pdf"},
        {"data": {"count": 42}},
    ]
    decodes_as("Message", up)
    assert to_v03("Message", up) == USER_MESSAGE


def test_every_state_maps_both_ways_and_final_follows_the_state() -> None:
    for s03, s1 in STATES:
        assert to_v1("TaskStatus", {"state": s03})["state"] == s1
        assert to_v03("TaskStatus", {"state": s1})["state"] == s03
        down = to_v03("StreamEvent", {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": s1}}})
        expected = s03 not in ("submitted", "working")
        assert down["final"] is expected and down["kind"] == "status-update"
        assert is_final_event(down) is expected
        assert "final" not in to_v1("StreamEvent", down)["statusUpdate"]
    assert to_v03("TaskStatus", {"state": 6})["state"] == "input-required"


def test_blocking_becomes_return_immediately_negated_and_absent_stays_absent() -> None:
    def configuration(config: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = to_v1("MessageSendParams", {"message": USER_MESSAGE, "configuration": config})
        return result["configuration"]  # type: ignore[no-any-return]

    assert configuration({"blocking": False})["returnImmediately"] is True
    assert configuration({"blocking": True})["returnImmediately"] is False
    assert "returnImmediately" not in configuration({})


def test_push_configs_flatten_and_keep_the_first_scheme() -> None:
    c = {
        "taskId": "t-1",
        "pushNotificationConfig": {"id": "c", "url": "https://h", "authentication": {"schemes": ["Bearer", "Basic"]}},
    }
    up = to_v1("TaskPushNotificationConfig", c)
    assert up == {"taskId": "t-1", "id": "c", "url": "https://h", "authentication": {"scheme": "Bearer"}}
    decodes_as("TaskPushNotificationConfig", up)
    with pytest.raises(A2aError) as refused:
        to_v1("PushNotificationConfig", {"url": "u", "authentication": {"schemes": []}})
    assert "$.authentication.schemes" in refused.value.message


def test_a_1_0_card_becomes_a_0_3_card_and_one_declaring_0_3_offers_only_those() -> None:
    base = "http://127.0.0.1:9999"
    v1_card = json.loads(codec.encode(card(base)))
    c03 = to_v03("AgentCard", v1_card)
    assert (c03["url"], c03["preferredTransport"], c03["protocolVersion"]) == (f"{base}/", "JSONRPC", "0.3.0")
    assert c03["additionalInterfaces"][1] == {"url": f"{base}/a2a/rest", "transport": "HTTP+JSON"}
    mixed = copy.deepcopy(v1_card)
    mixed["supportedInterfaces"].append(
        {"url": "https://old.example.com/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
    )
    mixed["capabilities"]["extendedAgentCard"] = True
    only = to_v03("AgentCard", mixed)
    assert only["url"] == "https://old.example.com/" and "additionalInterfaces" not in only
    assert only["supportsAuthenticatedExtendedCard"] is True
    up = to_v1("AgentCard", c03)
    decodes_as("AgentCard", up)
    assert len(up["supportedInterfaces"]) == 2


def test_a_1_0_data_part_that_is_not_an_object_is_wrapped() -> None:
    assert to_v03("Part", {"data": [1, 2]}) == {"kind": "data", "data": {"value": [1, 2]}}


@pytest.mark.parametrize(
    ("shape", "value", "path"),
    [
        ("Message", {"kind": "message", "messageId": "m", "role": "robot", "parts": []}, "$.role"),
        ("Message", {"messageId": "m", "role": "user", "parts": [{"kind": "video"}]}, "$.parts[0].kind"),
        ("Message", {"messageId": "m", "role": "user", "parts": [{}]}, "$.parts[0].kind"),
        (
            "Message",
            {"messageId": "m", "role": "user", "parts": [{"kind": "file", "file": {"name": "x"}}]},
            "$.parts[0].file",
        ),
        ("Message", {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": 7}]}, "$.parts[0].text"),
        ("Message", {"messageId": "m", "role": "user", "parts": "no"}, "$.parts"),
        ("Message", {"kind": "task", "messageId": "m"}, "$.kind"),
        ("Task", {"id": "t", "status": {"state": "sleeping"}}, "$.status.state"),
        ("StreamEvent", {"kind": "weird"}, "$.kind"),
        ("MessageSendParams", {"message": {}, "configuration": {"blocking": "yes"}}, "$.configuration.blocking"),
        ("AgentCard", {"name": "x"}, "$.url"),
        ("Task", [], "$"),
    ],
)
def test_bad_input_names_its_path(shape: str, value: Any, path: str) -> None:
    with pytest.raises(A2aError) as refused:
        to_v1(shape, value)
    assert refused.value.kind is ErrorKind.INVALID_PARAMS and ("path", path) in refused.value.metadata


def test_bad_1_0_values_are_refused_on_the_way_down() -> None:
    for shape, value in (("Part", {"text": "a", "url": "b"}), ("StreamEvent", {})):
        with pytest.raises(A2aError) as refused:
            to_v03(shape, value)
        assert refused.value.kind is ErrorKind.INVALID_PARAMS


def test_the_method_table_covers_every_0_3_method_and_list_tasks_has_none() -> None:
    names = {
        "message/send": "SendMessage",
        "message/stream": "SendStreamingMessage",
        "tasks/get": "GetTask",
        "tasks/cancel": "CancelTask",
        "tasks/resubscribe": "SubscribeToTask",
        "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
        "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
        "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
    }
    assert {name: m[0] for name, m in METHODS.items()} == names
    assert all(method_named(name) is not None for name in names)
    assert "ListTasks" not in [m[0] for m in METHODS.values()]


# --- end to end: 0.3 JSON-RPC calls (no A2A-Version header) to a real server -------------


def serve() -> ServerThread:
    options = ServerOptions(push_guard=PushGuard.permissive())
    return ServerThread(lambda base: create_app(DemoAgent(0.05), card(base), options=options))


def post(server: ServerThread, body: Any, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    raw = request_bytes("POST", "/", all_headers, json.dumps(body).encode(), server.port)
    answer = exchange(server.port, raw)
    return answer.status, answer.headers.get("content-type", ""), answer.body


def call(server: ServerThread, method: str, params: Any) -> dict[str, Any]:
    status, content_type, body = post(server, {"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    assert content_type.startswith("application/json"), f"a JSON answer, HTTP {status}"
    answer: dict[str, Any] = json.loads(body)
    assert answer["jsonrpc"] == "2.0" and answer["id"] == 7
    return answer


def send_params(message_id: str) -> dict[str, Any]:
    return {
        "message": {
            "kind": "message",
            "messageId": message_id,
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}],
        }
    }


def test_a_0_3_client_sends_gets_and_cancels_and_gets_a_direct_message_and_a_file_part() -> None:
    with serve() as server:
        task = call(server, "message/send", send_params("tck-complete-task-1"))["result"]
        assert task["kind"] == "task" and task["status"]["state"] == "completed"
        got = call(server, "tasks/get", {"id": task["id"], "historyLength": 1})["result"]
        assert got["id"] == task["id"] and got["kind"] == "task" and len(got["history"]) == 1
        waiting = call(server, "message/send", send_params("tck-input-required-1"))["result"]
        assert waiting["status"]["state"] == "input-required"
        canceled = call(server, "tasks/cancel", {"id": waiting["id"]})["result"]
        assert canceled["status"]["state"] == "canceled"
        m = call(server, "message/send", send_params("tck-message-response-1"))["result"]
        assert m["kind"] == "message" and m["role"] == "agent"
        assert m["parts"][0] == {"kind": "text", "text": "Direct message response"}
        f = call(server, "message/send", send_params("tck-artifact-file-1"))["result"]
        part = f["artifacts"][0]["parts"][0]
        assert part == {"kind": "file", "file": {"bytes": "dGNr", "mimeType": "text/plain", "name": "output.txt"}}


def test_a_0_3_client_gets_0_3_errors_and_a_1_0_method_without_the_header_is_refused() -> None:
    with serve() as server:
        e = call(server, "tasks/get", {"id": "no-such-task"})["error"]
        assert e["code"] == -32001 and e["data"]["taskId"] == "no-such-task"
        bad = call(server, "message/send", {"message": {"messageId": "m", "role": "robot", "parts": []}})["error"]
        assert bad["code"] == -32602 and bad["data"]["path"] == "$.params.message.role"
        assert call(server, "GetTask", {"id": "x"})["error"]["code"] == -32009
        _, _, body = post(
            server, {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}, {"A2A-Version": "1.0"}
        )
        v1 = json.loads(body)["error"]
        assert v1["code"] == -32001 and isinstance(v1["data"], list)


def test_a_0_3_client_streams_and_resubscribing_to_a_finished_task_is_refused() -> None:
    with serve() as server:
        body = {"jsonrpc": "2.0", "id": "s-1", "method": "message/stream", "params": send_params("tck-stream-001-x")}
        status, content_type, raw = post(server, body)
        assert status == 200 and content_type.startswith("text/event-stream")
        events = [json.loads(line[6:]) for line in raw.decode().split("\n") if line.startswith("data: ")]
        assert len(events) >= 3 and all(e["id"] == "s-1" for e in events)
        results = [e["result"] for e in events]
        assert results[0]["kind"] == "task"
        assert any(r["kind"] == "artifact-update" for r in results)
        last = results[-1]
        assert last["kind"] == "status-update" and last["final"] is True and last["status"]["state"] == "completed"
        assert len([r for r in results if r.get("final") is True]) == 1
        assert call(server, "tasks/resubscribe", {"id": results[0]["id"]})["error"]["code"] == -32004


def test_a_0_3_client_sets_gets_lists_and_deletes_push_configs() -> None:
    with serve() as server:
        task_id = call(server, "message/send", send_params("tck-input-required-2"))["result"]["id"]
        config = {"url": "https://hooks.example.com/a2a", "token": "tok"}
        created = call(
            server, "tasks/pushNotificationConfig/set", {"taskId": task_id, "pushNotificationConfig": config}
        )
        made = created["result"]
        assert made["taskId"] == task_id and made["pushNotificationConfig"]["url"] == config["url"]
        got = call(server, "tasks/pushNotificationConfig/get", {"id": task_id})["result"]
        assert got["pushNotificationConfig"]["token"] == "tok"
        assert len(call(server, "tasks/pushNotificationConfig/list", {"id": task_id})["result"]) == 1
        config_id = made["pushNotificationConfig"]["id"]
        deleted = call(
            server, "tasks/pushNotificationConfig/delete", {"id": task_id, "pushNotificationConfigId": config_id}
        )
        assert "result" in deleted and deleted["result"] is None
        assert call(server, "tasks/pushNotificationConfig/list", {"id": task_id})["result"] == []
        assert call(server, "agent/getAuthenticatedExtendedCard", None)["error"]["code"] == -32004
