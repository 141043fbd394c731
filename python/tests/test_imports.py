"""What importing the codec costs: decoding a message loads neither asyncio nor the roles
(they come on first use), and the roles still arrive, typed, when asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")

DECODE_ONLY = """
import sys
from agentproto.acp import classify, v1
line = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}'
incoming = classify(line, v1.CLIENT, {})
assert type(incoming).__name__ == "IncomingNotification", incoming
print(sorted(m for m in ("asyncio", "agentproto.acp.generated.v1_roles", "agentproto.jsonrpc.connection") if m in sys.modules))
"""

ROLES_ON_DEMAND = """
import sys
from agentproto.acp import v1
assert "agentproto.acp.generated.v1_roles" not in sys.modules
from agentproto.acp.v1 import Agent, spawn_agent
from agentproto.jsonrpc import Connection
print(Agent.__module__, spawn_agent.__module__, Connection.__module__, "asyncio" in sys.modules)
"""


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={"PYTHONPATH": SRC}, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_decoding_a_message_loads_neither_asyncio_nor_the_roles() -> None:
    assert run(DECODE_ONLY) == "[]"


def test_the_roles_and_the_connection_come_on_first_use() -> None:
    assert run(ROLES_ON_DEMAND) == (
        "agentproto.acp.generated.v1_roles agentproto.acp.generated.v1_roles agentproto.jsonrpc.connection True"
    )


CONVENIENCES = """
import sys
import agentproto.acp as acp
from agentproto.acp import builders
assert "asyncio" not in sys.modules  # the builders are plain values
from agentproto.acp import SessionClient, open_session
from agentproto.acp.v1 import connect_pair
print(builders.text_block("hi").text, SessionClient.__module__, open_session.__module__, connect_pair.__module__)
"""


def test_the_conveniences_come_on_first_use() -> None:
    assert run(CONVENIENCES) == ("hi agentproto.acp.session agentproto.acp.session agentproto.acp.generated.v1_roles")


SERVER_ON_DEMAND = """
import sys
import agentproto, agentproto.acp
from agentproto.acp.remote import agent_app, connect
print(sorted(m for m in ("uvicorn", "websockets", "httpx", "agentproto.acp.remote") if m in sys.modules))
from agentproto.acp.remote import listen
print("uvicorn" in sys.modules)
"""


def test_the_network_transport_loads_uvicorn_only_to_listen() -> None:
    # `import agentproto` loads none of it; the ASGI app and the client need no extra.
    assert run(SERVER_ON_DEMAND) == "['agentproto.acp.remote']\nFalse"
