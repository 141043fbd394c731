"""A2A 1.0 scenario runner on the official Python SDK's client (a2a-sdk 1.3.0).

Usage: client.py --card-url http://127.0.0.1:P [--binding JSONRPC|HTTP+JSON|GRPC]
                 [--timeout SECONDS]

Resolves the agent card, then runs the steps below against the server and prints
one JSON object per line on stdout: {"step": name, "ok": bool, "detail": ...}.
Exit status 0 if every step passed, 1 otherwise. Every wait is bounded.

The server is expected to follow the a2a-tck `messageId`-prefix contract.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import grpc
import httpx
from a2a.client import (
    A2ACardResolver,
    Client,
    ClientCallContext,
    ClientConfig,
    ClientFactory,
)
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from google.protobuf.json_format import MessageToDict

RUN = uuid.uuid4().hex[:8]


class StepFailed(Exception):
    pass


def check(cond: bool, what: str) -> None:
    if not cond:
        raise StepFailed(what)


def state_name(state: int) -> str:
    return TaskState.Name(state)


def describe(event: StreamResponse) -> dict[str, Any]:
    """A short, comparable description of one stream event."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        return {"task": state_name(event.task.status.state)}
    if kind == "status_update":
        return {"statusUpdate": state_name(event.status_update.status.state)}
    if kind == "artifact_update":
        parts = event.artifact_update.artifact.parts
        return {"artifactUpdate": " ".join(p.text for p in parts)}
    if kind == "message":
        return {"message": " ".join(p.text for p in event.message.parts)}
    return {"unknown": MessageToDict(event)}


def error_detail(err: BaseException) -> dict[str, Any]:
    detail: dict[str, Any] = {"error": type(err).__name__, "message": str(err)}
    # The SDK client raises one exception class per A2A error on both bindings; this is
    # the JSON-RPC code of that class (not necessarily a code seen on the wire).
    code = JSON_RPC_ERROR_CODE_MAP.get(type(err))  # type: ignore[arg-type]
    if code is not None:
        detail["jsonrpcCode"] = code
    return detail


def user_message(prefix: str, text: str = "hello") -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=f"{prefix}-{RUN}-{uuid.uuid4().hex[:6]}",
            role=Role.ROLE_USER,
            parts=[Part(text=text)],
        )
    )


class Runner:
    def __init__(
        self, unary: Client, streaming: Client, card: AgentCard, timeout: float
    ):
        self.unary = unary
        self.streaming = streaming
        self.card = card
        self.timeout = timeout
        self.ctx = ClientCallContext(timeout=timeout)
        self.completed_task: Task | None = None
        self.all_ok = True

    def report(self, step: str, ok: bool, detail: Any) -> None:
        self.all_ok &= ok
        print(json.dumps({"step": step, "ok": ok, "detail": detail}), flush=True)

    async def step(self, name: str, body: Callable[[], Awaitable[Any]]) -> None:
        try:
            detail = await asyncio.wait_for(body(), self.timeout)
        except StepFailed as e:
            self.report(name, False, str(e))
        except TimeoutError:
            self.report(name, False, f"timed out after {self.timeout}s")
        except Exception as e:  # noqa: BLE001 - every failure becomes a report line
            self.report(name, False, error_detail(e))
        else:
            self.report(name, True, detail)

    async def send(self, request: SendMessageRequest) -> StreamResponse:
        """A non-streaming SendMessage: the unary client yields exactly one event."""
        events = [e async for e in self.unary.send_message(request, context=self.ctx)]
        check(len(events) == 1, f"expected 1 response, got {len(events)}")
        return events[0]

    async def new_task(self, prefix: str) -> Task:
        response = await self.send(user_message(prefix))
        check(
            response.HasField("task"),
            f"{prefix}: expected a Task, got {describe(response)}",
        )
        return response.task

    async def expect_error(
        self, call: Awaitable[Any], expected: type[A2AError]
    ) -> dict[str, Any]:
        try:
            result = await call
        except A2AError as e:
            check(
                isinstance(e, expected),
                f"expected {expected.__name__}, got {error_detail(e)}",
            )
            return error_detail(e)
        raise StepFailed(f"expected {expected.__name__}, got a result: {result}")

    # -- steps -------------------------------------------------------------

    async def s_send(self) -> Any:
        task = await self.new_task("tck-complete-task")
        state = task.status.state
        check(state == TaskState.TASK_STATE_COMPLETED, f"state {state_name(state)}")
        self.completed_task = task
        return {
            "taskId": task.id,
            "contextId": task.context_id,
            "state": state_name(state),
        }

    async def s_send_message(self) -> Any:
        response = await self.send(user_message("tck-message-response"))
        check(
            response.HasField("message"),
            f"expected a Message, got {describe(response)}",
        )
        return describe(response)

    async def s_get(self) -> Any:
        check(self.completed_task is not None, "no task from step send")
        assert self.completed_task is not None
        task = await self.unary.get_task(
            GetTaskRequest(id=self.completed_task.id), context=self.ctx
        )
        check(task.id == self.completed_task.id, f"got task {task.id}")
        check(task.status.state == TaskState.TASK_STATE_COMPLETED, "not COMPLETED")
        return {
            "taskId": task.id,
            "state": state_name(task.status.state),
            "history": len(task.history),
        }

    async def s_list(self) -> Any:
        check(self.completed_task is not None, "no task from step send")
        assert self.completed_task is not None
        page = await self.unary.list_tasks(
            ListTasksRequest(page_size=100), context=self.ctx
        )
        ids = [t.id for t in page.tasks]
        check(self.completed_task.id in ids, f"task not listed among {len(ids)}")
        return {"tasks": len(ids), "nextPageToken": page.next_page_token}

    async def s_stream(self) -> Any:
        events = []
        stream = self.streaming.send_message(
            user_message("tck-stream-001"), context=self.ctx
        )
        async for event in stream:
            events.append(describe(event))
        check(
            bool(events) and "task" in events[0], f"first event is not a Task: {events}"
        )
        last = events[-1]
        final = last.get("statusUpdate") or last.get("task")
        check(final == "TASK_STATE_COMPLETED", f"last event not COMPLETED: {events}")
        check(
            {"artifactUpdate": "Stream hello from TCK"} in events,
            f"no 'Stream hello from TCK' artifact: {events}",
        )
        return events

    async def s_cancel(self) -> Any:
        task = await self.new_task("tck-input-required")
        check(
            task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
            f"setup: state {state_name(task.status.state)}",
        )
        canceled = await self.unary.cancel_task(
            CancelTaskRequest(id=task.id), context=self.ctx
        )
        state = canceled.status.state
        check(state == TaskState.TASK_STATE_CANCELED, f"state {state_name(state)}")
        return {"taskId": canceled.id, "state": state_name(state)}

    async def s_cancel_terminal(self) -> Any:
        check(self.completed_task is not None, "no task from step send")
        assert self.completed_task is not None
        call = self.unary.cancel_task(
            CancelTaskRequest(id=self.completed_task.id), context=self.ctx
        )
        return await self.expect_error(call, TaskNotCancelableError)

    async def s_get_missing(self) -> Any:
        call = self.unary.get_task(
            GetTaskRequest(id=f"missing-{RUN}"), context=self.ctx
        )
        return await self.expect_error(call, TaskNotFoundError)

    async def s_push_config(self) -> Any:
        task = await self.new_task("tck-input-required")
        config = TaskPushNotificationConfig(
            task_id=task.id, id=f"cfg-{RUN}", url="http://127.0.0.1:9/push", token="tok"
        )
        created = await self.unary.create_task_push_notification_config(
            config, context=self.ctx
        )
        check(
            created.id == config.id and created.url == config.url, f"created {created}"
        )
        got = await self.unary.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id),
            context=self.ctx,
        )
        check(got.url == config.url and got.token == "tok", f"get returned {got}")
        listed = await self.unary.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id), context=self.ctx
        )
        check([c.id for c in listed.configs] == [created.id], f"list returned {listed}")
        await self.unary.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id),
            context=self.ctx,
        )
        after = await self.unary.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id), context=self.ctx
        )
        check(len(after.configs) == 0, f"list after delete returned {after}")
        return {"taskId": task.id, "created": MessageToDict(created)}

    async def s_subscribe(self) -> Any:
        task = await self.new_task("tck-input-required")
        stream = self.streaming.subscribe(
            SubscribeToTaskRequest(id=task.id), context=self.ctx
        )
        events: list[dict[str, Any]] = []
        first = await anext(stream)
        events.append(describe(first))
        check(
            first.HasField("task") and first.task.id == task.id,
            f"first event: {events[0]}",
        )
        canceled = await self.unary.cancel_task(
            CancelTaskRequest(id=task.id), context=self.ctx
        )
        async for event in stream:
            events.append(describe(event))
        last = events[-1]
        final = last.get("statusUpdate") or last.get("task")
        check(
            final == "TASK_STATE_CANCELED",
            f"subscription did not end with CANCELED: {events}"
            f" (cancel returned {state_name(canceled.status.state)})",
        )
        return events


async def resolve_card(http: httpx.AsyncClient, card_url: str) -> AgentCard:
    parts = urlsplit(card_url)
    base = f"{parts.scheme}://{parts.netloc}"
    if parts.path.endswith(".json"):
        return await A2ACardResolver(http, base, parts.path).get_agent_card()
    return await A2ACardResolver(http, card_url).get_agent_card()


async def run(card_url: str, binding: str, timeout: float) -> bool:
    async with httpx.AsyncClient(timeout=timeout) as http:
        try:
            card = await asyncio.wait_for(resolve_card(http, card_url), timeout)
        except Exception as e:  # noqa: BLE001
            print(
                json.dumps({"step": "card", "ok": False, "detail": error_detail(e)}),
                flush=True,
            )
            return False

        def client(streaming: bool) -> Client:
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                # gRPC interfaces are `host:port`; the SDK opens a plaintext channel.
                grpc_channel_factory=grpc.aio.insecure_channel,
                supported_protocol_bindings=[binding],
                use_client_preference=True,
            )
            return ClientFactory(config).create(card)

        interfaces = [MessageToDict(i) for i in card.supported_interfaces]
        runner = Runner(client(False), client(True), card, timeout)
        runner.report("card", True, {"interfaces": interfaces, "binding": binding})
        await runner.step("send", runner.s_send)
        await runner.step("send-message", runner.s_send_message)
        await runner.step("get", runner.s_get)
        await runner.step("list", runner.s_list)
        await runner.step("stream", runner.s_stream)
        await runner.step("cancel", runner.s_cancel)
        await runner.step("cancel-terminal", runner.s_cancel_terminal)
        await runner.step("get-missing", runner.s_get_missing)
        if card.capabilities.push_notifications:
            await runner.step("push-config", runner.s_push_config)
        else:
            runner.report(
                "push-config", True, "skipped: card says pushNotifications false"
            )
        await runner.step("subscribe", runner.s_subscribe)
        return runner.all_ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--card-url", required=True, help="base URL or full agent-card URL"
    )
    parser.add_argument(
        "--binding", default="JSONRPC", choices=["JSONRPC", "HTTP+JSON", "GRPC"]
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="per step, seconds")
    args = parser.parse_args()
    ok = asyncio.run(run(args.card_url, args.binding, args.timeout))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
