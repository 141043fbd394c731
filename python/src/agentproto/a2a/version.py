"""The `A2A-Version` service parameter: which protocol version a request asks for, from
the header or the query parameter of that name.

A request without it is A2A 0.3 (the specification's rule; `MissingVersion.V1_0` is the
lenient reading some peers need). The JSON-RPC binding serves a 0.3 request through the
0.3 conversions (`is_v03`, `agentproto.a2a.server.v03_binding`); elsewhere, and for any
version but `1.0` and `0.3`, the answer is `VERSION_NOT_SUPPORTED` (a patch level is
ignored: `1.0.1` is 1.0).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from urllib.parse import unquote

from agentproto.a2a.errors import A2aError, ErrorKind

__all__ = ["MissingVersion", "check_version", "header", "is_v03"]


class MissingVersion(enum.Enum):
    """What a request without `A2A-Version` is taken to be."""

    V0_3 = "0.3"
    """A2A 0.3, as the specification says (served on JSON-RPC, refused elsewhere)."""
    V1_0 = "1.0"
    """A2A 1.0: a lenient mode for peers that omit the header."""


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value, its name matched without regard to case (a server's headers are
    found at once under the lower-case name)."""
    name = name.lower()
    found = headers.get(name)
    if found is not None:
        return found
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _query_version(query: str) -> str | None:
    for pair in query.split("&"):
        key, sep, value = pair.partition("=")
        if sep and key.lower() == "a2a-version":
            return unquote(value)
    return None


def is_v03(headers: Mapping[str, str], query: str, missing: MissingVersion = MissingVersion.V0_3) -> bool:
    """Whether the request asks for A2A 0.3 (any patch level), or gives no version and
    `missing` says that is 0.3."""
    given = header(headers, "A2A-Version")
    if given is None:
        given = _query_version(query)
    if given is None:
        return missing is MissingVersion.V0_3
    major, _, rest = given.strip().partition(".")
    return (major, rest.partition(".")[0]) == ("0", "3")


def check_version(
    headers: Mapping[str, str], query: str, binding: str, missing: MissingVersion = MissingVersion.V0_3
) -> A2aError | None:
    """`None` when the request asks for A2A 1.0, else the refusal to answer.

    Args:
        headers: the request's headers (names in any case).
        query: the query string, without `?`.
        binding: `jsonrpc` or `rest` (named in the refusal's message).
        missing: what a request without the parameter is taken to be.
    """
    given = header(headers, "A2A-Version")
    if given is None:
        given = _query_version(query)
    version = (given or "").strip()
    if not version:
        version = missing.value
        if missing is MissingVersion.V0_3:
            return _refused("0.3", binding, "a request without A2A-Version is A2A 0.3, ")
    major, _, rest = version.partition(".")
    minor = rest.partition(".")[0]
    if (major, minor) == ("1", "0"):
        return None
    return _refused(version, binding, "")


def _refused(version: str, binding: str, why: str) -> A2aError:
    served = "1.0 (send A2A-Version: 1.0)"
    message = f"{why}A2A version {version!r} is not supported; this {binding} interface serves {served}"
    return A2aError(ErrorKind.VERSION_NOT_SUPPORTED, message, [("version", version), ("supportedVersions", "1.0")])
