"""The sync pipe channel: a blocking request/response channel to a child process over its
stdin and stdout, wire-compatible with the TypeScript 7 API server (`tsc --api` from npm
`typescript@7.0.2` and `typescript@7.1.0-beta`) and with the Rust crate `agentproto-sync`.

Every message is a MessagePack tuple ``[type, name, payload]`` (`frame`). There are no
request ids: one request is in flight at a time and the method name correlates the answer.
While a request is in flight the server may call back into the client any number of times
(`MessageType.CALL`); each call is answered before the server goes on.

- `Client` spawns the server (its own process group, stderr passed through), sends
  requests, answers the server's callbacks, and ends the child's group on close, on `with`
  exit, on garbage collection and at interpreter exit.
- `Server` reads requests from a stream (stdin), runs a handler per method, lets handlers
  call back into the client (`Peer`), turns handler exceptions into `ERROR` tuples and
  returns at end of input. ``python -m agentproto.sync.fixture`` is the test server.
- `agentproto.sync.ast` reads the binary source-file format of `getSourceFile` (protocol
  version 5 from 7.0.2, 9 from 7.1.0-beta, told apart by the header).
- `agentproto.sync.tsc` speaks the methods the two servers name differently (opening a
  project, file-system callback answers), chosen from the server's `initialize` answer or
  from configuration.

All I/O is blocking; payloads are read with `readinto` into reused buffers and handed out
as `memoryview`s (a request's result is valid until the next request).
"""

from __future__ import annotations

from agentproto.sync.client import Callback, Client
from agentproto.sync.errors import (
    CallbackError,
    ChannelBroken,
    ChannelClosed,
    ChannelIOError,
    ChildExited,
    ClientCallError,
    DecodeResultError,
    EncodeParamsError,
    EndedDuringCall,
    Field,
    FrameError,
    FrameProblem,
    HandlerError,
    MessageType,
    NameMismatch,
    ProtocolError,
    ServerError,
    SyncError,
    UnexpectedMessage,
)
from agentproto.sync.frame import Frame, FrameReader, FrameWriter, Limits
from agentproto.sync.server import Handler, Peer, Server

__all__ = [
    "Callback",
    "CallbackError",
    "ChannelBroken",
    "ChannelClosed",
    "ChannelIOError",
    "ChildExited",
    "Client",
    "ClientCallError",
    "DecodeResultError",
    "EncodeParamsError",
    "EndedDuringCall",
    "Field",
    "Frame",
    "FrameError",
    "FrameProblem",
    "FrameReader",
    "FrameWriter",
    "Handler",
    "HandlerError",
    "Limits",
    "MessageType",
    "NameMismatch",
    "Peer",
    "ProtocolError",
    "Server",
    "ServerError",
    "SyncError",
    "UnexpectedMessage",
]
