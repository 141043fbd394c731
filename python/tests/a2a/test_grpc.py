"""The gRPC binding in one process: the table-driven protobuf codec checked against the
official SDK's compiled descriptors (test-only: our code never imports them), and our
gRPC client against our gRPC server (sends, a stream, get, list, cancel, a subscription,
push configs, errors with their status and `ErrorInfo`, a malformed request)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import grpc
import grpc.aio
import pytest

from agentproto.a2a import grpc_wire
from agentproto.a2a.client.grpc_client import A2aGrpcClient
from agentproto.a2a.codec import encode
from agentproto.a2a.demo import DemoAgent, card
from agentproto.a2a.errors import A2aError, ErrorKind, PeerError
from agentproto.a2a.executor import Principal
from agentproto.a2a.generated.v1 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from agentproto.a2a.generated.v1_proto import SERVICE
from agentproto.a2a.push_guard import PushGuard
from agentproto.a2a.server import ServerOptions, create_app
from agentproto.a2a.server.grpc_server import grpc_status, start_grpc
from agentproto.codec.errors import DecodeError

BOUND = 20.0

SEND = {
    "message": {
        "messageId": "m1",
        "role": "ROLE_USER",
        "parts": [
            {"text": "hi", "metadata": {"a": [1, 2.5, None, True, "x", {"b": {}}]}},
            {"raw": "AAEC", "mediaType": "application/octet-stream", "filename": "f.bin"},
            {"data": {"k": [1, "two"]}},
            {"url": "https://example.com/x"},
        ],
        "metadata": {"x": "y"},
        "referenceTaskIds": ["t0"],
    },
    "configuration": {"historyLength": 0, "returnImmediately": True, "acceptedOutputModes": ["text/plain"]},
}
TASK = {
    "id": "t",
    "contextId": "c",
    "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-02T03:04:05.123Z"},
    "artifacts": [{"artifactId": "a", "parts": [{"text": ""}]}],
}


def _official() -> Any:
    return pytest.importorskip("a2a.types.a2a_pb2")


@pytest.mark.parametrize(("type_name", "tree"), [("SendMessageRequest", SEND), ("Task", TASK)])
def test_the_codec_agrees_with_the_official_descriptors(type_name: str, tree: dict[str, Any]) -> None:
    from google.protobuf import json_format

    pb2 = _official()
    ours = grpc_wire.from_json(type_name, tree)
    theirs = getattr(pb2, type_name).FromString(ours)
    # Their ProtoJSON of our bytes is our tree (numbers as numbers, timestamps canonical).
    assert json.loads(json_format.MessageToJson(theirs)) == tree
    # Our reading of their bytes decodes to the value the JSON text decodes to.
    value = grpc_wire.decode(type_name, theirs.SerializeToString())
    assert json.loads(encode(value)) == json.loads(encode(grpc_wire.decode(type_name, ours)))


def test_the_codec_refuses_malformed_bytes_with_a_path() -> None:
    with pytest.raises(DecodeError) as truncated:
        grpc_wire.decode("SendMessageRequest", b"\x12\x05ab")
    assert truncated.value.path == "$"
    bad_role = grpc_wire.from_json("SendMessageRequest", {"message": {"messageId": "m", "parts": [{"text": "x"}]}})
    bad_role += b"\x12\x02\x20\x09"  # message.role = 9: a number TaskState does not list
    with pytest.raises(DecodeError) as unlisted:
        grpc_wire.decode("SendMessageRequest", bad_role)
    assert unlisted.value.path == "$.message.role"


def test_an_error_is_its_table_status_with_an_error_info() -> None:
    e = A2aError(ErrorKind.TASK_NOT_FOUND, "task x not found").with_metadata("taskId", "x")
    assert grpc_status(e) is grpc.StatusCode.NOT_FOUND
    reason, domain, metadata = grpc_wire.error_of_details(grpc_wire.status_details(5, e))
    assert (reason, domain, metadata) == ("TASK_NOT_FOUND", "a2a-protocol.org", {"taskId": "x"})
    assert grpc_status(A2aError(ErrorKind.UNSUPPORTED_OPERATION)) is grpc.StatusCode.FAILED_PRECONDITION


def _send(text: str, message_id: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=message_id, role=Role.USER, parts=[Part(text=text)]))


async def _with_server(test: Callable[[str], Awaitable[None]], **settings: Any) -> None:
    options = ServerOptions(push_guard=PushGuard.permissive(), **settings)
    app = create_app(DemoAgent(0.05), card("http://127.0.0.1:9"), options=options)
    server, port = await start_grpc(app.core, "127.0.0.1:0", start_core=True)
    try:
        async with asyncio.timeout(BOUND):
            await test(f"127.0.0.1:{port}")
    finally:
        await server.stop(grace=None)
        await app.core.shutdown()


def test_our_client_against_our_grpc_server() -> None:
    async def scenario(target: str) -> None:
        async with A2aGrpcClient(target, timeout=10) as client:
            sent = await client.send_message(_send("hello", "m-1"))
            assert isinstance(sent.task, Task) and sent.task.status.state is TaskState.COMPLETED
            assert sent.task.artifacts[0].parts[0].text == "hello"
            direct = await client.send_message(_send("hello", "tck-message-response-1"))
            assert isinstance(direct.message, Message)
            got = await client.get_task(GetTaskRequest(id=sent.task.id))
            assert got.status.state is TaskState.COMPLETED
            listed = await client.list_tasks(ListTasksRequest())
            assert sent.task.id in [t.id for t in listed.tasks]
            events = [item.event async for item in client.send_streaming_message(_send("s", "tck-stream-001-1"))]
            assert isinstance(events[0].task, Task)
            assert events[-1].status_update.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
            waiting = await client.send_message(_send("more", "tck-input-required-1"))
            assert isinstance(waiting.task, Task) and waiting.task.status.state is TaskState.INPUT_REQUIRED
            subscription = client.subscribe_to_task(SubscribeToTaskRequest(id=waiting.task.id))
            first = await anext(subscription)
            assert isinstance(first.event.task, Task)
            canceled = await client.cancel_task(CancelTaskRequest(id=waiting.task.id))
            assert canceled.status.state is TaskState.CANCELED
            rest = [item.event async for item in subscription]
            assert rest[-1].status_update.status.state is TaskState.CANCELED  # type: ignore[union-attr]
            config = TaskPushNotificationConfig(task_id=sent.task.id, id="cfg-1", url="http://127.0.0.1:9/push")
            created = await client.create_task_push_notification_config(config)
            assert created.id == "cfg-1" and created.url == config.url
            with pytest.raises(PeerError) as missing:
                await client.get_task(GetTaskRequest(id="no-such-task"))
            assert missing.value.kind is ErrorKind.TASK_NOT_FOUND and missing.value.status == "NOT_FOUND"
            assert missing.value.metadata == {"taskId": "no-such-task"}
            with pytest.raises(PeerError) as not_cancelable:
                await client.cancel_task(CancelTaskRequest(id=sent.task.id))
            assert not_cancelable.value.kind is ErrorKind.TASK_NOT_CANCELABLE
            with pytest.raises(PeerError) as ended:
                await anext(client.subscribe_to_task(SubscribeToTaskRequest(id=sent.task.id)))
            assert ended.value.kind is ErrorKind.UNSUPPORTED_OPERATION

    asyncio.run(_with_server(scenario))


def test_a_malformed_request_is_invalid_argument_with_its_path() -> None:
    async def scenario(target: str) -> None:
        async with grpc.aio.insecure_channel(target) as channel:
            call = channel.unary_unary(f"/{SERVICE}/GetTask")
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call(b"\x0a\x02\xff\xfe", timeout=10)  # tenant: invalid UTF-8
            assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            details = dict(refused.value.trailing_metadata() or ())["grpc-status-details-bin"]
            reason, _, metadata = grpc_wire.error_of_details(details)
            assert reason == "INVALID_PARAMS" and metadata["path"] == "$.tenant"
            stream = channel.unary_stream(f"/{SERVICE}/SendStreamingMessage")

            async def drain(call: AsyncIterator[bytes]) -> None:
                async for _ in call:
                    pass

            with pytest.raises(grpc.aio.AioRpcError) as no_message:
                await drain(stream(b"", timeout=10))
            assert no_message.value.code() is grpc.StatusCode.INVALID_ARGUMENT

    asyncio.run(_with_server(scenario))


def test_metadata_reaches_the_auth_hook_the_tenant_scopes_and_the_version_is_checked() -> None:
    def authenticate(headers: Mapping[str, str]) -> Principal | None:
        token = headers.get("authorization")
        if token is None:
            raise A2aError(ErrorKind.UNAUTHENTICATED, "a bearer token is required")
        return Principal(subject=token, tenant=token.removeprefix("Bearer "))

    async def scenario(target: str) -> None:
        async with A2aGrpcClient(target, timeout=10) as anonymous:
            with pytest.raises(PeerError) as refused:
                await anonymous.get_task(GetTaskRequest(id="t"))
            assert refused.value.kind is ErrorKind.UNAUTHENTICATED and refused.value.status == "UNAUTHENTICATED"
        async with (
            A2aGrpcClient(target, timeout=10, headers={"Authorization": "Bearer alice"}) as alice,
            A2aGrpcClient(target, timeout=10, headers={"Authorization": "Bearer bob"}) as bob,
        ):
            sent = await alice.send_message(_send("mine", "m-alice"))
            assert isinstance(sent.task, Task)
            assert (await alice.get_task(GetTaskRequest(id=sent.task.id))).id == sent.task.id
            with pytest.raises(PeerError) as hidden:
                await bob.get_task(GetTaskRequest(id=sent.task.id))
            assert hidden.value.kind is ErrorKind.TASK_NOT_FOUND
            with pytest.raises(PeerError) as other_tenant:
                await bob.get_task(GetTaskRequest(id=sent.task.id, tenant="alice"))
            assert other_tenant.value.kind is ErrorKind.PERMISSION_DENIED
        async with A2aGrpcClient(
            target, timeout=10, headers={"Authorization": "Bearer x", "A2A-Version": "0.3"}
        ) as old:
            with pytest.raises(PeerError) as version:
                await old.get_task(GetTaskRequest(id="t"))
            assert version.value.kind is ErrorKind.VERSION_NOT_SUPPORTED

    asyncio.run(_with_server(scenario, authenticate=authenticate))
