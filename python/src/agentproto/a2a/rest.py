"""The HTTP+JSON binding without I/O: a request (method, path, query, headers, body) in, an
operation and its typed request out (path variables and query parameters filled in, the
`/{tenant}/…` path's tenant as the request's `tenant`), or the error answer (HTTP status
and `google.rpc.Status` body); and, on the client's side, an answer (status, body) in, a
typed result, a local failure or the peer's error out.

Paths are matched against the generated `google.api.http` rules; the steps follow the Rust
server: route, verb, `A2A-Version`, nesting depth (`limits.py`), `Content-Type`, then the typed decode
(paths from `$`, the request message being the body).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import msgspec

from agentproto.a2a import codec
from agentproto.a2a.answers import Answer, AnswerValue, CallFailed, ErrorReply
from agentproto.a2a.errors import A2aError, ErrorKind, ErrorTable, PeerError, error_info_of
from agentproto.a2a.generated.v1 import OPERATIONS, QUERY_FALSE, QUERY_TRUE, Operation
from agentproto.a2a.jsonrpc import content_type_ok
from agentproto.a2a.limits import check_depth
from agentproto.a2a.version import MissingVersion, check_version
from agentproto.codec.errors import DecodeError

__all__ = ["RestCall", "RestRefusal", "Route", "find_route", "read_answer", "read_request"]


@dataclass(frozen=True, slots=True)
class Route:
    """A path matched against an operation's rules."""

    operation: Operation
    variables: tuple[tuple[str, str], ...]
    """The path variables by proto field name, percent-decoded (`tenant`, `id`, `task_id`)."""
    body: bool
    """Whether the rule takes the request message as the body."""
    method_ok: bool
    allowed: tuple[str, ...]
    """The verbs the path takes (the `Allow` header of a 405)."""


@dataclass(frozen=True, slots=True)
class RestCall:
    """A request to run: the operation and its typed request."""

    operation: Operation
    request: Any
    tenant: str | None
    """The tenant the path named, if any (also the request's `tenant`)."""


@dataclass(frozen=True, slots=True)
class RestRefusal:
    """Nothing runs; this error is the answer."""

    error: A2aError
    table: ErrorTable = ErrorTable.V1_0_1
    allow: str | None = None
    """The `Allow` header of a 405."""

    @property
    def http_status(self) -> int:
        return self.error.http_status(self.table)

    def body(self) -> bytes:
        """The AIP-193 body."""
        return msgspec.json.encode(self.error.rest_body(self.table))


def _lower_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def _match(template: str, path: str) -> list[tuple[str, str]] | None:
    t = template.lstrip("/").split("/")
    p = path.lstrip("/").split("/")
    if len(t) != len(p):
        return None
    variables: list[tuple[str, str]] = []
    for ts, ps in zip(t, p, strict=True):
        if ts.startswith("{"):
            name, _, suffix = ts[1:].partition("}")
            if not ps.endswith(suffix):
                return None
            value = ps[: len(ps) - len(suffix)]
            if not value or (not suffix and ":" in value):
                return None
            variables.append((name, unquote(value)))
        elif ts != ps:
            return None
    return variables


def find_route(method: str, path: str) -> Route | None:
    """The operation a method and path (relative to the interface URL) reach, or `None`.
    A path that matches with another verb gives a route whose `method_ok` is false."""
    found: Route | None = None
    allowed: set[str] = set()
    for operation, info in OPERATIONS.items():
        for rule in info.http:
            variables = _match(rule.path, path)
            if variables is None:
                continue
            if rule.method.lower() == method.lower():
                return Route(operation, tuple(variables), rule.body, True, ())
            allowed.add(rule.method.upper())
            if found is None:
                found = Route(operation, tuple(variables), rule.body, False, ())
    if found is None:
        return None
    return Route(found.operation, found.variables, found.body, False, tuple(sorted(allowed)))


def _query_object(operation: Operation, variables: tuple[tuple[str, str], ...], query: str) -> dict[str, Any]:
    """The request object of a bodiless call: path variables and query parameters, each
    typed by the field it fills. A value the query cannot make typed stays a string, for
    the request's decoder to refuse with its path, kind, expected and found."""
    obj: dict[str, Any] = {_lower_camel(k): v for k, v in variables}
    kinds = {q.wire: q.kind for q in OPERATIONS[operation].query}
    for pair in query.split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        key, value = _lower_camel(unquote(key)), unquote(value)
        kind = kinds.get(key)
        if kind is None:
            continue
        typed: Any = value
        if kind == "bool" and value in QUERY_TRUE:
            typed = True
        elif kind == "bool" and value in QUERY_FALSE:
            typed = False
        elif kind == "enum" and value.lstrip("-").isdigit():
            typed = int(value)
        obj[key] = typed
    return obj


def read_request(
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    table: ErrorTable = ErrorTable.V1_0_1,
    missing_version: MissingVersion = MissingVersion.V0_3,
    check_duplicate_keys: bool = False,
    fast: bool = True,
) -> RestCall | RestRefusal:
    """An HTTP+JSON request read as an operation and its typed request, or the error
    answer. Pure: no I/O, nothing runs.

    Args:
        method: the HTTP verb.
        path: the path relative to the interface URL (`/tasks/t-1`), percent-encoded.
        query: the query string, without `?`.
        headers: the request's headers (names in any case).
        body: the body (empty when there is none).
        table: which revision's HTTP statuses to answer with.
        missing_version: what a request without `A2A-Version` is taken to be.
        check_duplicate_keys: refuse repeated keys that the fast path would not see.
        fast: take the msgspec fast path where it applies (`False`: the exact path only).
    """
    route = find_route(method, path)
    if route is None:
        return RestRefusal(A2aError(ErrorKind.METHOD_NOT_FOUND, f"no A2A operation at {path}"), table)
    if not route.method_ok:
        allow = ", ".join(route.allowed)
        error = A2aError(ErrorKind.METHOD_NOT_ALLOWED, f"{method} is not allowed on {path} (allowed: {allow})")
        return RestRefusal(error.with_metadata("allow", allow), table, allow)
    refused = check_version(headers, query, "HTTP+JSON", missing_version)
    if refused is not None:
        return RestRefusal(refused, table)
    too_deep = check_depth(body, 0)
    if too_deep is not None:
        return RestRefusal(too_deep, table)
    operation = route.operation
    tenant = next((v for k, v in route.variables if k == "tenant"), None)
    with_body = route.body and method.upper() == "POST" and not (operation is Operation.SUBSCRIBE_TO_TASK and not body)
    if with_body:
        if not content_type_ok(headers):
            message = "Content-Type must be application/a2a+json or application/json"
            return RestRefusal(A2aError(ErrorKind.INVALID_REQUEST, message), table)
        data = body
        if route.variables:
            merged = _merge(body, route.variables)
            if isinstance(merged, A2aError):
                return RestRefusal(merged, table)
            data = merged
    else:
        data = msgspec.json.encode(_query_object(operation, route.variables, query))
    try:
        request = codec.decode(
            OPERATIONS[operation].request, data, "$", fast=fast, check_duplicate_keys=check_duplicate_keys
        )
    except DecodeError as e:
        if not codec.is_json(data):
            return RestRefusal(A2aError(ErrorKind.PARSE, f"the request body is not JSON: {e}"), table)
        return RestRefusal(A2aError.invalid_params(e), table)
    return RestCall(operation, request, tenant)


def _merge(body: bytes, variables: tuple[tuple[str, str], ...]) -> bytes | A2aError:
    """The body object with the path variables set (the path's value wins)."""
    obj: Any = {}
    if body:
        try:
            obj = msgspec.json.decode(body)
        except msgspec.DecodeError as e:
            return A2aError(ErrorKind.PARSE, f"the request body is not JSON: {e}")
        if not isinstance(obj, dict):
            error = A2aError(ErrorKind.INVALID_PARAMS, "the request body must be a JSON object")
            return error.with_metadata("path", "$")
    for key, value in variables:
        obj[_lower_camel(key)] = value
    return msgspec.json.encode(obj)


def read_answer(operation: Operation, status: int, body: bytes, *, fast: bool = True) -> Answer:
    """An HTTP+JSON answer (its status and body) to a call of `operation`, read as what
    the call came to. For a stream, call it once per SSE item with status 200 (an `error`
    event's data with the status its body names, or 500)."""
    if 200 <= status < 300:
        type_name = OPERATIONS[operation].result
        try:
            return AnswerValue(codec.decode(type_name, body or b"{}", "$", fast=fast), type_name)
        except DecodeError as e:
            return CallFailed("the answer does not decode", e)
    return ErrorReply(peer_error(status, body))


def peer_error(status: int, body: bytes) -> PeerError:
    """The error an HTTP+JSON answer carries: its status, and what an AIP-193 body says."""
    try:
        parsed = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return PeerError(http_status=status)
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        return PeerError(http_status=status)
    reason, metadata = error_info_of(error.get("details"))
    code = error.get("code")
    return PeerError(
        code=code if type(code) is int else None,
        message=error["message"] if isinstance(error.get("message"), str) else "",
        http_status=status,
        status=error["status"] if isinstance(error.get("status"), str) else None,
        reason=reason,
        metadata=metadata,
    )
