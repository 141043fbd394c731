"""The SSRF guard of push configs: the address classes, URL checks, name resolution, and
the server refusing a config it guards against (and accepting it when allowed)."""

from __future__ import annotations

import asyncio
import ipaddress

import pytest

from agentproto.a2a.client import A2aClient, PeerError
from agentproto.a2a.demo import DemoAgent
from agentproto.a2a.errors import ErrorKind
from agentproto.a2a.generated.v1 import Task, TaskPushNotificationConfig
from agentproto.a2a.push_guard import PushGuard, Refused, classify
from tests.a2a.test_server import send, serve, with_client


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.20.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("100.64.0.1", "shared address space"),
        ("0.0.0.0", "unspecified"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fd00::1", "private"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("64:ff9b::a00:1", "private"),
        ("2002:a9fe:a9fe::", "link-local"),
        ("2001:db8::1", "reserved"),
        ("93.184.216.34", None),
        ("2606:4700::1111", None),
    ],
)
def test_addresses_are_classified(address: str, why: str | None) -> None:
    assert classify(ipaddress.ip_address(address)) == why


def test_urls_are_checked_before_resolving() -> None:
    guard = PushGuard()
    for url in ("ftp://example.com/x", "http:///nohost", "not a url", "http://[::1/x", "http://h:99999/"):
        with pytest.raises(Refused):
            guard.check_url(url)
    for url in ("http://127.0.0.1:9/push", "https://[::1]/p", "http://169.254.169.254/latest", "http://10.0.0.1/"):
        with pytest.raises(Refused, match="SSRF guard"):
            guard.check_url(url)
    guard.check_url("https://93.184.216.34/hook")
    guard.check_url("https://example.com/hook")
    PushGuard(allow_loopback=True).check_url("http://127.0.0.1:9/push")
    with pytest.raises(Refused):
        PushGuard(allow_loopback=True).check_url("http://10.0.0.1/")
    PushGuard(allow=(ipaddress.ip_network("10.0.0.0/8"),)).check_url("http://10.0.0.1/")
    PushGuard(allow=(ipaddress.ip_network("10.0.0.0/8"),)).check_url("http://[::ffff:10.0.0.1]/")
    PushGuard.permissive().check_url("http://192.168.0.1/")


def test_a_name_is_resolved_and_every_address_checked() -> None:
    async def main() -> None:
        async with asyncio.timeout(10):
            with pytest.raises(Refused, match="localhost"):
                await PushGuard().check_target("http://localhost:9/push")
            await PushGuard(allow_loopback=True).check_target("http://localhost:9/push")
            # A name that does not resolve is let through (delivery checks again).
            await PushGuard().check_target("https://no-such-host.invalid/hook")

    asyncio.run(main())


def test_the_server_refuses_a_guarded_push_url_and_takes_it_when_allowed() -> None:
    def config(task_id: str) -> TaskPushNotificationConfig:
        return TaskPushNotificationConfig(task_id=task_id, id="p", url="http://127.0.0.1:9/push")

    with serve(DemoAgent(0.05)) as server:

        async def refused(client: A2aClient) -> None:
            sent = await client.send_message(send("hello"))
            assert isinstance(sent.task, Task)
            with pytest.raises(PeerError) as error:
                await client.create_task_push_notification_config(config(sent.task.id))
            assert error.value.kind is ErrorKind.INVALID_PARAMS and "SSRF" in str(error.value)
            with pytest.raises(PeerError) as error:
                await client.send_message(send("hello", task_push_notification_config=config("")))
            assert error.value.kind is ErrorKind.INVALID_PARAMS

        with_client(server, refused)
        with_client(server, refused, binding="HTTP+JSON")

    with serve(DemoAgent(0.05), push_guard=PushGuard(allow_loopback=True)) as server:

        async def allowed(client: A2aClient) -> None:
            sent = await client.send_message(send("hello"))
            assert isinstance(sent.task, Task)
            created = await client.create_task_push_notification_config(config(sent.task.id))
            assert created.url == "http://127.0.0.1:9/push"

        with_client(server, allowed)
