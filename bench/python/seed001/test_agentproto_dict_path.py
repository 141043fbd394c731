"""agentproto's dict → object path (``agentproto_dicts.from_dict``, what seed 001's
agentproto rows time) accepts and refuses what the SDK's receive path does.

For every conformance case under ``vectors/acp/v1/`` whose ``input`` is a request or a
notification that the receiving side handles, and whose envelope is valid: the case's
bytes go through ``classify`` (the receive path), its ``params`` (as ``json.loads``
gives them) through ``from_dict`` for the method's params type. Both must accept or
both refuse; when both accept, the two decoded values are the same JSON value.
Params a dict cannot hold as sent (a repeated key) are left out and counted.

Also: ``to_dict`` equals ``json.loads`` of the canonical encoding for every value the
receive path decoded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import agentproto_dicts as ap
import pytest
from agentproto.acp import v1
from agentproto.acp.receive import IncomingNotification, IncomingRequest, Reply, classify
from agentproto.codec import DecodeError, encode
from agentproto.codec.reader import JObject, parse
from agentproto.jsonrpc import EnvelopeError, Notification, Request, decode
from agentproto.jsonrpc.message import has_duplicate_keys

VECTORS = Path(__file__).resolve().parents[3] / "vectors" / "acp" / "v1"


class Case:
    def __init__(self, path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        self.id = str(path.relative_to(VECTORS.parent.parent))
        self.data = json.loads(text)
        node = parse(text)
        assert isinstance(node, JObject)
        span = next(((s, e) for k, _, s, e in node.members if k == "input"), None)
        # The input as written (number text and repeated keys kept), minified.
        self.line = _minify(text[span[0] : span[1]]).encode() if span else b""
        self.params_text = ""
        if span is not None:
            inner = parse(text[span[0] : span[1]])
            if isinstance(inner, JObject):
                at = next(((s, e) for k, _, s, e in inner.members if k == "params"), None)
                if at is not None:
                    self.params_text = text[span[0] : span[1]][at[0] : at[1]]


def _minify(text: str) -> str:
    """JSON text without the whitespace between tokens (strings untouched)."""
    out = []
    in_string = escaped = False
    for c in text:
        if in_string:
            escaped = not escaped and c == "\\"
            in_string = escaped or c != '"'
            out.append(c)
        elif c == '"':
            in_string = True
            out.append(c)
        elif not c.isspace():
            out.append(c)
    return "".join(out)


def _cases() -> list[Case]:
    paths = [p for p in sorted(VECTORS.rglob("*.json")) if "flows" not in p.relative_to(VECTORS).parts]
    return [c for c in map(Case, paths) if "input" in c.data and isinstance(c.data["input"], dict)]


CASES = _cases()


def _target(case: Case) -> tuple[v1.Receiver, Any, str] | None:
    """The receiver, the envelope and the params type, for a request or notification
    with a valid envelope that the receiving side handles; else ``None``."""
    receiver = v1.AGENT if case.data["direction"] == "client_to_agent" else v1.CLIENT
    try:
        message = decode(case.line, allow_null_id=True)
    except EnvelopeError:
        return None
    if isinstance(message, Request):
        info = v1.SURFACE.requests(receiver.side).get(message.method)
    elif isinstance(message, Notification):
        info = v1.SURFACE.notifications(receiver.side).get(message.method)
    else:
        return None
    return None if info is None else (receiver, message, info.params)


TARGETED = [(c, t) for c in CASES if (t := _target(c)) is not None]


def test_enough_cases_reach_the_params() -> None:
    assert len(TARGETED) > 300
    accepted = sum(isinstance(classify(c.line, t[0], {}), IncomingRequest | IncomingNotification) for c, t in TARGETED)
    assert 0 < accepted < len(TARGETED), "both outcomes must be exercised"


@pytest.mark.parametrize(("case", "target"), TARGETED, ids=[c.id for c, _ in TARGETED])
def test_from_dict_agrees_with_the_receive_path(case: Case, target: tuple[v1.Receiver, Any, str]) -> None:
    receiver, _, type_name = target
    if case.params_text and has_duplicate_keys(case.params_text):
        pytest.skip("the params repeat a key: a dict keeps only the last one")
    incoming = classify(case.line, receiver, {})
    accepted = isinstance(incoming, IncomingRequest | IncomingNotification)
    if not accepted:
        refused_params = isinstance(incoming, Reply) and incoming.finding.code == "invalid-params"
        refused_notification = incoming.finding.code == "invalid-notification"  # type: ignore[union-attr]
        assert refused_params or refused_notification, f"unexpected outcome {incoming}"
    params = case.data["input"].get("params")
    try:
        value = ap.from_dict(type_name, params)
    except DecodeError as e:
        assert not accepted, f"from_dict refused what classify accepted: {e}"
        return
    assert accepted, f"from_dict accepted what classify refused ({incoming})"
    # The same value (free-form members compared as JSON values: the receive path keeps
    # their text as sent, the dict path as re-encoded).
    assert ap.to_dict(value) == ap.to_dict(incoming.params)  # type: ignore[union-attr]
    assert ap.to_dict(value) == json.loads(encode(value))
