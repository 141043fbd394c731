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
import msgspec
import pytest

from agentproto.a2a import grpc_wire
from agentproto.a2a.client.grpc_client import A2aGrpcClient
from agentproto.a2a.codec import encode
from agentproto.a2a.demo import DemoAgent, card
from agentproto.a2a.errors import A2aError, ErrorKind, PeerError
from agentproto.a2a.executor import Principal, RequestContext, TaskUpdater
from agentproto.a2a.generated.v1 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from agentproto.a2a.generated.v1_proto import SERVICE
from agentproto.a2a.memory_store import MemoryStore
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


async def _with_server(
    test: Callable[[str], Awaitable[None]], agent: Any = None, store: Any = None, **settings: Any
) -> None:
    options = ServerOptions(push_guard=PushGuard.permissive(), **settings)
    executor = DemoAgent(0.05) if agent is None else agent
    app = create_app(executor, card("http://127.0.0.1:9"), store=store, options=options)
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


class Chatty:
    """WORKING, five artifacts, then waits to be canceled."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.working()
        for i in range(5):
            await updater.add_artifact(f"piece {i}", artifact_id=f"a{i}")
        await asyncio.Event().wait()


def test_a_resume_past_what_the_log_holds_ends_with_data_loss_and_the_client_subscribes_again() -> None:
    async def scenario(target: str) -> None:
        async with A2aGrpcClient(target, timeout=10) as client:
            go = SendMessageRequest(
                message=Message(message_id="go", role=Role.USER, parts=[Part(text="go")]),
                configuration=SendMessageConfiguration(return_immediately=True),
            )
            started = await client.send_message(go)
            assert isinstance(started.task, Task)
            task_id = started.task.id
            # Follow the task until its fifth artifact: the log (3 events) then holds 5..7.
            watching = client.subscribe_to_task(SubscribeToTaskRequest(id=task_id))
            async for item in watching:
                task, update = item.event.task, item.event.artifact_update
                if not isinstance(task, msgspec.UnsetType) and "a4" in [a.artifact_id for a in task.artifacts]:
                    break  # it had them all when the subscription began
                if not isinstance(update, msgspec.UnsetType) and update.artifact.artifact_id == "a4":
                    break
            await watching.aclose()  # type: ignore[attr-defined]
            async with grpc.aio.insecure_channel(target) as channel:
                call = channel.unary_stream(f"/{SERVICE}/SubscribeToTask")
                data = grpc_wire.from_json("SubscribeToTaskRequest", {"id": task_id})
                stream = call(data, metadata=(("last-event-id", "1"),), timeout=10)
                first = grpc_wire.decode("StreamResponse", await stream.read())
                assert isinstance(first.task, Task)
                with pytest.raises(grpc.aio.AioRpcError) as lost:
                    await stream.read()
                assert lost.value.code() is grpc.StatusCode.DATA_LOSS
            resumed = client.subscribe_to_task(SubscribeToTaskRequest(id=task_id), last_event_id="1")
            again = [await anext(resumed), await anext(resumed)]
            assert all(isinstance(item.event.task, Task) for item in again)  # the task, then as it is now
            await resumed.aclose()  # type: ignore[attr-defined]
            canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
            assert canceled.status.state is TaskState.CANCELED

    asyncio.run(_with_server(scenario, agent=Chatty(), store=MemoryStore(max_events=3)))
