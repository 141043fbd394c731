"""A2A 1.0 (Agent2Agent): generated types, ProtoJSON decoding and canonical encoding, the
operation and error tables, and the bindings' decoders without I/O.

* `agentproto.a2a.v1`: the message types (msgspec Structs), enums and the operation table,
  generated from the pinned `a2a.proto` and `rules/a2a.toml`;
* `decode(type_name, data, root)` / `encode(value)`: ProtoJSON in (every leniency of
  A2A 1.0.1: proto names, `null` as unset, enums by number, int32 as strings, both base64
  alphabets, any RFC 3339 offset), canonical bytes out;
* `agentproto.a2a.jsonrpc` and `agentproto.a2a.rest`: `read_request` (an HTTP request's
  parts in, an operation and its typed request out, or the error answer) and
  `read_answer` (an answer in, a typed value, a local failure or the peer's error out);
* `A2aError` (what a server answers with, and its wire form on each binding), `PeerError`
  (what a client read), `ErrorKind`, `ErrorTable`; `check_version` (`A2A-Version`);
* the server (`create_app`, `ServerOptions`; `agentproto.a2a.server`), the executor API
  (`AgentExecutor`, `RequestContext`, `TaskUpdater`, `Principal`), the store contract
  (`Store`), `MemoryStore` and `SqliteStore` (durable, one file), the client (`A2aClient`, `ClientError`), `agent_card`.

Names are imported on first use, so `import agentproto.a2a` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproto._lazy import lazy_names

if TYPE_CHECKING:
    from agentproto.a2a.answers import Answer, AnswerValue, CallFailed, ErrorReply
    from agentproto.a2a.card import agent_card
    from agentproto.a2a.client import A2aClient, ClientError
    from agentproto.a2a.codec import decode, encode
    from agentproto.a2a.errors import A2aError, ErrorKind, ErrorTable, PeerError
    from agentproto.a2a.executor import AgentExecutor, Principal, RequestContext, TaskUpdater
    from agentproto.a2a.generated.v1 import OPERATIONS, Operation
    from agentproto.a2a.jsonrpc import RpcCall, RpcId, RpcRefusal
    from agentproto.a2a.memory_store import MemoryStore
    from agentproto.a2a.operations import HttpRule, OperationInfo, QueryField
    from agentproto.a2a.rest import RestCall, RestRefusal
    from agentproto.a2a.server import ServerOptions, create_app
    from agentproto.a2a.sqlite_store import SqliteStore
    from agentproto.a2a.store import Store
    from agentproto.a2a.version import MissingVersion, check_version

__all__ = [
    "OPERATIONS",
    "A2aClient",
    "A2aError",
    "AgentExecutor",
    "Answer",
    "AnswerValue",
    "CallFailed",
    "ClientError",
    "ErrorKind",
    "ErrorReply",
    "ErrorTable",
    "HttpRule",
    "MemoryStore",
    "MissingVersion",
    "Operation",
    "OperationInfo",
    "PeerError",
    "Principal",
    "QueryField",
    "RequestContext",
    "RestCall",
    "RestRefusal",
    "RpcCall",
    "RpcId",
    "RpcRefusal",
    "ServerOptions",
    "SqliteStore",
    "Store",
    "TaskUpdater",
    "agent_card",
    "check_version",
    "create_app",
    "decode",
    "encode",
]

_LAZY = {
    "agent_card": "agentproto.a2a.card",
    "A2aClient": "agentproto.a2a.client",
    "ClientError": "agentproto.a2a.client",
    "AgentExecutor": "agentproto.a2a.executor",
    "Principal": "agentproto.a2a.executor",
    "RequestContext": "agentproto.a2a.executor",
    "TaskUpdater": "agentproto.a2a.executor",
    "MemoryStore": "agentproto.a2a.memory_store",
    "SqliteStore": "agentproto.a2a.sqlite_store",
    "ServerOptions": "agentproto.a2a.server",
    "create_app": "agentproto.a2a.server",
    "Store": "agentproto.a2a.store",
    "Answer": "agentproto.a2a.answers",
    "AnswerValue": "agentproto.a2a.answers",
    "CallFailed": "agentproto.a2a.answers",
    "ErrorReply": "agentproto.a2a.answers",
    "decode": "agentproto.a2a.codec",
    "encode": "agentproto.a2a.codec",
    "A2aError": "agentproto.a2a.errors",
    "ErrorKind": "agentproto.a2a.errors",
    "ErrorTable": "agentproto.a2a.errors",
    "PeerError": "agentproto.a2a.errors",
    "OPERATIONS": "agentproto.a2a.generated.v1",
    "Operation": "agentproto.a2a.generated.v1",
    "RpcCall": "agentproto.a2a.jsonrpc",
    "RpcId": "agentproto.a2a.jsonrpc",
    "RpcRefusal": "agentproto.a2a.jsonrpc",
    "HttpRule": "agentproto.a2a.operations",
    "OperationInfo": "agentproto.a2a.operations",
    "QueryField": "agentproto.a2a.operations",
    "RestCall": "agentproto.a2a.rest",
    "RestRefusal": "agentproto.a2a.rest",
    "MissingVersion": "agentproto.a2a.version",
    "check_version": "agentproto.a2a.version",
}

__getattr__ = lazy_names(__name__, globals(), _LAZY)
