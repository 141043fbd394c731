"""The official `a2a-sdk` 1.3.0's A2A 0.3 JSON-RPC transport (`CompatJsonRpcTransport`,
what its clients use to reach 0.3 agents) against our Python server's 0.3 compatibility:
sends, a direct message, get, a stream, cancel, a subscription, errors, push configs.
The server runs on a thread of its own; every wait is bounded."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentproto.a2a.demo import DemoAgent, card
from agentproto.a2a.push_guard import PushGuard
from agentproto.a2a.server import ServerOptions, create_app
from tests.a2a.servers import BOUND, ServerThread

compat = pytest.importorskip("a2a.compat.v0_3.jsonrpc_transport")


def test_the_official_0_3_jsonrpc_transport_against_our_python_server() -> None:
    import httpx
    from a2a.types import a2a_pb2 as pb

    def message(message_id: str) -> Any:
        return pb.SendMessageRequest(
            message=pb.Message(message_id=message_id, role=pb.ROLE_USER, parts=[pb.Part(text="hi")])
        )

    async def scenario(base: str) -> None:
        async with httpx.AsyncClient() as http:
            transport = compat.CompatJsonRpcTransport(http, None, base + "/")
            sent = await transport.send_message(message("tck-complete-task-1"))
            assert sent.task.status.state == pb.TASK_STATE_COMPLETED
            direct = await transport.send_message(message("tck-message-response-1"))
            assert direct.message.parts[0].text == "Direct message response"
            got = await transport.get_task(pb.GetTaskRequest(id=sent.task.id))
            assert got.id == sent.task.id and got.status.state == pb.TASK_STATE_COMPLETED
            kinds = [
                e.WhichOneof("payload") async for e in transport.send_message_streaming(message("tck-stream-001-1"))
            ]
            assert kinds[0] == "task" and kinds[-1] == "status_update" and "artifact_update" in kinds
            waiting = await transport.send_message(message("tck-input-required-1"))
            assert waiting.task.status.state == pb.TASK_STATE_INPUT_REQUIRED
            subscription = transport.subscribe(pb.SubscribeToTaskRequest(id=waiting.task.id))
            first = await anext(subscription)
            assert first.task.id == waiting.task.id
            canceled = await transport.cancel_task(pb.CancelTaskRequest(id=waiting.task.id))
            assert canceled.status.state == pb.TASK_STATE_CANCELED
            rest = [e async for e in subscription]
            assert rest[-1].status_update.status.state == pb.TASK_STATE_CANCELED
            with pytest.raises(Exception) as missing:
                await transport.get_task(pb.GetTaskRequest(id="no-such-task"))
            assert type(missing.value).__name__ == "TaskNotFoundError"
            config = pb.TaskPushNotificationConfig(
                task_id=sent.task.id, id="cfg-1", url="http://127.0.0.1:9/push", token="tok"
            )
            created = await transport.create_task_push_notification_config(config)
            assert (created.id, created.task_id, created.token) == ("cfg-1", sent.task.id, "tok")
            listed = await transport.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=sent.task.id)
            )
            assert [c.id for c in listed.configs] == ["cfg-1"]
            await transport.delete_task_push_notification_config(
                pb.DeleteTaskPushNotificationConfigRequest(task_id=sent.task.id, id="cfg-1")
            )
            listed = await transport.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=sent.task.id)
            )
            assert list(listed.configs) == []

    options = ServerOptions(push_guard=PushGuard.permissive())
    with ServerThread(lambda base: create_app(DemoAgent(0.05), card(base), options=options)) as server:
        asyncio.run(asyncio.wait_for(scenario(server.base), BOUND))
