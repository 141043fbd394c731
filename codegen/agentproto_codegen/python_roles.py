"""Python for ACP's roles, all from ``Spec.methods`` (the Python twin of
``rust_roles.py``), in a module of their own beside each surface's types module
(``generated/<surface>_roles.py``), so that decoding a message never imports the
asyncio runtime:

* ``AgentConnection`` / ``ClientConnection``: the handles each side calls the other
  through, one typed ``async def`` per method the other side handles (requests return
  the validated result, notifications ``None``), on the runtime's base classes;
* ``AgentContext`` / ``ClientContext``: what a handler receives besides its params;
* ``Agent`` / ``Client``: the handler base classes, one ``async def`` per method the
  other side sends. Baseline handlers (``Method.required``) are abstract; every other
  request answers -32601 and every other notification is ignored until overridden;
  ``ext_method`` / ``ext_notification`` take extension messages;
* ``connect_agent``, ``serve_agent_stdio``, ``connect_client``, ``spawn_agent``,
  ``connect_pair``: the runtime's entry points bound to this surface (its ``SURFACE``,
  from the types module).

Handler and call names are the model's ``Method.handler`` as they are: the runtime
dispatches by that name, so a name that is not a valid, free Python identifier fails
generation instead of being escaped silently.
"""

from __future__ import annotations

import keyword
import re
from typing import TYPE_CHECKING

from . import python_checks
from .emit import Writer, given
from .model import Method, Struct

if TYPE_CHECKING:
    from .python import Emitter

# The names the runtime's base classes use: a generated call or handler may not take one.
RESERVED = frozenset(
    {
        "agent_capabilities",
        "client_capabilities",
        "ext_method",
        "ext_notification",
        "flush",
        "is_closed",
        "protocol_version",
        "with_cancellation",
    }
)

# The names of the roles module (its `__all__`).
EXPORTS = [
    "Agent",
    "AgentConnection",
    "AgentContext",
    "Client",
    "ClientConnection",
    "ClientContext",
    "CHECKS",
    "connect_agent",
    "connect_client",
    "connect_pair",
    "serve_agent_stdio",
    "spawn_agent",
]

# The imports of the roles module, as `ruff` orders them (the types it names come from
# the types module, on a line of their own).
STDLIB = [
    "from abc import ABC, abstractmethod",
    "from collections.abc import Mapping, Sequence",
    "from typing import Any, Final, TypeAlias, overload",
]
THIRD_PARTY = ["from msgspec import Raw"]
FIRST_PARTY = [
    "from agentproto.acp import agent as _agent",
    "from agentproto.acp import client as _client",
    "from agentproto.acp import process as _process",
    "from agentproto.acp.agent import ClientConnectionBase",
    "from agentproto.acp.client import AgentConnectionBase",
    "from agentproto.acp.context import Context",
    "from agentproto.acp.options import AcpOptions",
    "from agentproto.acp.pair import Pair",
    "from agentproto.acp.process import AgentProcess",
    "from agentproto.acp.receive import ExtMessage",
    "from agentproto.jsonrpc import Connection, RequestError",
    "from agentproto.jsonrpc.transport import ByteReader, ByteWriter",
]


def first_party(body: str) -> list[str]:
    """The first-party imports of a roles module whose body is `body`: `FIRST_PARTY`, the
    names of `agentproto.acp.refusal` the checks use, and `Unknown` when they use it."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", body))
    lines = list(FIRST_PARTY)
    refusal = [n for n in python_checks.REFUSAL_NAMES if n in words]
    if refusal:
        line = f"from agentproto.acp.refusal import {', '.join(refusal)}"
        if len(line) > 120:
            line = "from agentproto.acp.refusal import (\n" + "".join(f"    {n},\n" for n in refusal) + ")"
        lines.append(line)
    if "Unknown" in words:
        lines.append("from agentproto.codec import Unknown")
    return lines


def has_roles(spec_methods: list[Method]) -> bool:
    return any(m.side in ("agent", "client") for m in spec_methods)


def handler_name(m: Method) -> str:
    name = given(m.handler or None, f"{m.wire}: handler name (rules not applied?)")
    if not name.isidentifier() or keyword.iskeyword(name) or name in RESERVED:
        raise ValueError(f"{m.wire}: handler name {name!r} is not a free Python identifier")
    return name


def emit(e: Emitter) -> str:
    """The body of the roles module (everything after its imports); empty when the
    surface has no roles."""
    from .python import Call, write  # the layout helpers live with the types emitter

    out = Writer()
    ms = [m for m in e.spec.methods if m.side in ("agent", "client")]
    if not ms:
        return ""

    def blank(n: int) -> None:
        for _ in range(n):
            out.line()

    for role in ("agent", "client"):
        names = [handler_name(m) for m in ms if m.side == role]
        if len(set(names)) != len(names):
            raise ValueError(f"{role} handler names collide: {names}")

    def types_of(m: Method) -> tuple[str, str | None]:
        params = given(m.params, f"{m.wire}: params type")
        if not isinstance(e.decls.get(params), Struct):
            raise ValueError(f"{m.wire}: params {params} is not an object type")
        return params, m.result

    def is_class(name: str) -> bool:
        """Whether a type is a class (a struct), which the call checks its result against;
        a union result (`mcp/message`) is an alias the runtime can only decode."""
        return isinstance(e.decls.get(name), Struct)

    def session_update_type(params: str) -> str | None:
        """The type of `update` when a notification's params are exactly a session id and
        an update (`session/update`), which earns the call a two-argument form."""
        decl = e.decls.get(params)
        if not isinstance(decl, Struct):
            return None
        required = [f.wire for f in decl.fields if f.required]
        update = next((f for f in decl.fields if f.wire == "update"), None)
        if sorted(required) != ["sessionId", "update"] or update is None:
            return None
        return e.m.annotation(update.type)

    def signature(head: str, args: list[str], returns: str) -> None:
        write(out, "", Call(head, args, f") -> {returns}:"))

    init = next((m for m in e.spec.methods if m.wire == e.spec.rules["lifecycle"]["initialize"] and m.kind == "request"), None)

    def capabilities_property(peer: str) -> None:
        """`agent_capabilities` / `client_capabilities`: the peer's capabilities, typed."""
        if init is None:
            return
        message = given(init.result if peer == "agent" else init.params, "initialize: types")
        decl = e.decls.get(message)
        wire = e.spec.rules["capabilities"][peer]
        f = next((x for x in decl.fields if x.wire == wire), None) if isinstance(decl, Struct) else None
        if f is None or python_checks.may_be_absent(f):
            raise ValueError(f"{message}.{wire}: the {peer}'s capabilities must always be there")
        from .python import field_name

        what = "answer" if peer == "agent" else "params"
        out.line()
        out.line("@property")
        out.line(f"def {peer}_capabilities(self) -> {e.m.annotation(f.type)} | None:")
        with out.indent():
            out.line(f'"""The {peer}\'s capabilities as its `initialize` {what} advertised them (`None` before')
            out.line('`initialize` has completed)."""')
            out.line(f"init: {message} | None = self._peer_initialize()")
            out.line(f"return None if init is None else init.{field_name(f)}")

    # -- the connections: typed calls ------------------------------------------------
    for cls, base, handled_by, sender, doc in (
        ("AgentConnection", "AgentConnectionBase", "agent", "client", "The client's handle to its agent"),
        ("ClientConnection", "ClientConnectionBase", "client", "agent", "The agent's handle to its client"),
    ):
        blank(2)
        out.line(f"class {cls}({base}):")
        with out.indent():
            out.line(f'"""{doc}: one typed call per method the {handled_by} handles."""')
            out.line()
            out.line("__slots__ = ()")
            capabilities_property(handled_by)
            for m in ms:
                if m.side != handled_by:
                    continue
                params, result = types_of(m)
                name = handler_name(m)
                out.line()
                if m.kind == "request":
                    signature(f"async def {name}(", ["self", f"params: {params}"], given(result, f"{m.wire}: result"))
                    with out.indent():
                        out.line(f'"""Sends `{m.wire}` and waits for its validated result."""')
                        result = given(result, m.wire)
                        if is_class(result):
                            write(out, "return await ", Call("self._request(", [f'"{m.wire}"', "params", result], ")"))
                        else:
                            write(out, f"value: {result} = await ", Call("self._request_value(", [f'"{m.wire}"', "params"], ")"))
                            out.line("return value")
                elif (update := session_update_type(params)) is not None:
                    # `session_update(session_id, update)` besides the typed params.
                    out.line("@overload")
                    out.line(f"async def {name}(self, params: {params}, /) -> None: ...")
                    out.line("@overload")
                    out.line(f"async def {name}(self, session_id: str, update: {update}, /) -> None: ...")
                    args = ["self", f"params: {params} | str", f"update: {update} | None = None", "/"]
                    signature(f"async def {name}(", args, "None")
                    with out.indent():
                        out.line(f'"""Sends the `{m.wire}` notification: its typed params, or a session id and')
                        out.line(f'the update, which are wrapped in a `{params}` for you."""')
                        out.line("if isinstance(params, str):")
                        with out.indent():
                            out.line("if update is None:")
                            with out.indent():
                                out.line(f'raise TypeError("{name}(session_id, update): the update is missing")')
                            out.line(f"params = {params}(session_id=params, update=update)")
                        write(out, "await ", Call("self._notify(", [f'"{m.wire}"', "params"], ")"))
                else:
                    signature(f"async def {name}(", ["self", f"params: {params}"], "None")
                    with out.indent():
                        out.line(f'"""Sends the `{m.wire}` notification."""')
                        write(out, "await ", Call("self._notify(", [f'"{m.wire}"', "params"], ")"))

    # -- the contexts ------------------------------------------------------------------
    blank(2)
    out.line("AgentContext: TypeAlias = Context[ClientConnection]")
    out.line('"""What an `Agent` handler receives besides its params: the connection to the client, the cancellation."""')
    out.line("ClientContext: TypeAlias = Context[AgentConnection]")
    out.line('"""What a `Client` handler receives besides its params: the connection to the agent, the cancellation."""')

    # -- the handler classes -----------------------------------------------------------
    for role, sender, cx in (("agent", "client", "AgentContext"), ("client", "agent", "ClientContext")):
        cls = role.capitalize()
        blank(2)
        out.line(f"class {cls}(ABC):")
        with out.indent():
            out.line(f'"""The {role} role: one handler per method the {sender} sends.')
            out.line()
            out.line("Implement the abstract (baseline) ones; every other request is answered -32601 and")
            out.line("every other notification ignored until you override it. `$/cancel_request` is")
            out.line("handled by the connection (see `Context.cancellation_token`).")
            out.line('"""')
            for m in ms:
                if m.side != role:
                    continue
                params, result = types_of(m)
                name = handler_name(m)
                returns = "None" if m.kind == "notification" else given(result, f"{m.wire}: result")
                out.line()
                if m.required:
                    out.line("@abstractmethod")
                signature(f"async def {name}(", ["self", f"cx: {cx}", f"params: {params}"], returns)
                with out.indent():
                    if m.required:
                        out.line(f'"""Handles `{m.wire}` ({m.stability}; every {role} implements it)."""')
                    elif m.kind == "request":
                        out.line(f'"""Handles `{m.wire}` ({m.stability}); answers -32601 until implemented."""')
                        out.line(f'raise RequestError.method_not_found("{m.wire}")')
                    else:
                        out.line(f'"""Handles the `{m.wire}` notification ({m.stability}); ignored until implemented."""')
                        out.line("return")
            out.line()
            signature("async def ext_method(", ["self", f"cx: {cx}", "request: ExtMessage"], "Raw")
            with out.indent():
                out.line('"""Handles an extension request (a method starting with `_`, with its full name)."""')
                out.line("raise RequestError.method_not_found(request.method)")
            out.line()
            signature("async def ext_notification(", ["self", f"cx: {cx}", "notification: ExtMessage"], "None")
            with out.indent():
                out.line('"""Handles an extension notification; ignored unless implemented."""')
                out.line("return")

    # -- the entry points ----------------------------------------------------------------
    blank(2)
    signature(
        "def connect_agent(",
        ["agent: Agent", "input: ByteReader", "output: ByteWriter", "options: AcpOptions | None = None"],
        "tuple[Connection, ClientConnection]",
    )
    with out.indent():
        out.line('"""The agent side of a connection over any byte streams; run the returned connection."""')
        out.line("return _agent.connect(SURFACE, agent, input, output, options, ClientConnection)")
    blank(2)
    signature("async def serve_agent_stdio(", ["agent: Agent", "options: AcpOptions | None = None"], "None")
    with out.indent():
        out.line('"""Serves `agent` on this process\'s stdin and stdout until stdin closes."""')
        out.line("await _agent.serve_stdio(SURFACE, agent, options, ClientConnection)")
    blank(2)
    signature(
        "def connect_client(",
        ["client: Client", "input: ByteReader", "output: ByteWriter", "options: AcpOptions | None = None"],
        "tuple[Connection, AgentConnection]",
    )
    with out.indent():
        out.line('"""The client side of a connection over any byte streams; run the returned connection."""')
        out.line("return _client.connect(SURFACE, client, input, output, options, AgentConnection)")
    blank(2)
    signature(
        "async def spawn_agent(",
        [
            "command: Sequence[str]",
            "client: Client",
            "options: AcpOptions | None = None",
            "*",
            "cwd: str | None = None",
            "env: Mapping[str, str] | None = None",
        ],
        "tuple[AgentConnection, AgentProcess]",
    )
    with out.indent():
        out.line('"""Starts an agent command in a process group of its own and connects `client` to it')
        out.line('(see `agentproto.acp.process`). Close the `AgentProcess` (or use it with `async with`)."""')
        write(out, "return await ", Call("_process.spawn(", ["SURFACE", "command", "client", "options", "AgentConnection", "cwd=cwd", "env=env"], ")"))
    blank(2)
    pair_args = ["agent: Agent", "client: Client", "options: AcpOptions | None = None", "*"]
    pair_args += ["client_options: AcpOptions | None = None", "timeout: float = 5.0"]
    signature("def connect_pair(", pair_args, "Pair[AgentConnection, ClientConnection]")
    with out.indent():
        out.line('"""`agent` and `client` connected in this process over in-memory pipes, to test one')
        out.line("against the other without processes; run both with `async with` (see")
        out.line("`agentproto.acp.pair`). `options` apply to both sides unless `client_options` is given.\"\"\"")
        out.line("return Pair(")
        with out.indent():
            out.line("lambda input, output, o: connect_agent(agent, input, output, o),")
            out.line("lambda input, output, o: connect_client(client, input, output, o),")
            out.line("options,")
            out.line("options if client_options is None else client_options,")
            out.line("timeout,")
        out.line(")")

    # -- the rules as code ---------------------------------------------------------------
    out.lines(python_checks.emit(e, handler_name).split("\n")[:-1])
    return out.text()
