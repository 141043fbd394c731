"""How deep a request may nest, on both bindings (the Rust server's rule).

A request is bounded so that every answer carrying what it sent back stays within
`agentproto.jsonrpc.message.MAX_NESTING_DEPTH` levels, the limit every JSON reader here
applies to a whole message (a client reading the answer included): one level for the
JSON-RPC envelope, then `ANSWER_WRAPPING` for the deepest answer. Refusing a request too
deep for its answers, rather than an answer too deep to read, means nothing a server
accepted becomes unreadable later.
"""

from __future__ import annotations

from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.jsonrpc.message import MAX_NESTING_DEPTH
from agentproto.jsonrpc.message import _nesting_exceeds as nesting_exceeds

__all__ = ["ANSWER_WRAPPING", "MAX_REQUEST_DEPTH", "check_depth"]

ANSWER_WRAPPING = 3
"""How many levels the deepest answer puts above a value a client sent, beyond those above
it in the request: JSON-RPC `ListTasks` answers a message at `$.result.tasks[i].history[j]`
(level 6) that came at `$.params.message` (level 3)."""

MAX_REQUEST_DEPTH = MAX_NESTING_DEPTH - 1 - ANSWER_WRAPPING
"""How deep a request object may nest (itself at level 1)."""


def check_depth(body: bytes, wrapping: int) -> A2aError | None:
    """The parse error for a request object nested deeper than `MAX_REQUEST_DEPTH` below
    `wrapping` levels of envelope (1 on JSON-RPC, 0 on HTTP+JSON), else `None`."""
    limit = MAX_REQUEST_DEPTH + wrapping
    # Only a body with more opening brackets than the limit can nest deeper than it.
    if body.count(b"{") + body.count(b"[") <= limit:
        return None
    if not nesting_exceeds(body.decode("utf-8", "replace"), limit):
        return None
    message = f"parse error: the request nests arrays and objects deeper than {MAX_REQUEST_DEPTH} levels"
    return A2aError(ErrorKind.PARSE, message)
