"""The implementations of seed 001's table, each as nine operations (serialize,
deserialize, JSON round trip × Small, Medium, Large), built on the payloads of
``payloads.py``.

* ``agentproto``: validating. Object → dict with ``agentproto_dicts.to_dict``, dict →
  object with ``agentproto_dicts.from_dict`` (the receive path's validating decode).
* ``agentproto_json``: agentproto's fastest path, object ↔ JSON bytes (the canonical
  encoder out, the receive path's decode in), on the compact JSON of the same dicts.
* ``official``: ``agent-client-protocol`` 0.12.1 (``acp.schema``, pydantic), as the seed
  calls it: ``model_dump(by_alias=True, exclude_none=True)`` / ``model_validate``.
* ``zerodep``: NOT validating. zerodep's ``acp.py`` ``to_dict`` / ``from_raw`` (a
  top-level key rename into a dict), loaded from ``AGENTPROTO_ZERODEP_DIR`` when set.

The JSON round trip is the seed's three steps on every dict-based side: serialize,
``json.dumps`` (default separators), ``json.loads``, deserialize; per item for Large.
Every operation returns what it made (Medium: a pair, where the seed's functions
returned nothing) so that the tests can check it; that tuple is the same for all.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import agentproto_dicts as ap
import msgspec
import payloads as p

Ops = dict[str, Callable[[], Any]]  # "serialize-small" → a call that does it once


def _steps(serialize: Callable[[Any], Any], decoders: dict[str, Callable[[Any], Any]], objects: dict) -> Ops:
    """The nine operations of a dict-based side, shaped as the seed's: one call for
    Small, two for Medium (prompt, then initialize), a list over the 20 items for
    Large. ``decoders`` maps each type (``small``, ``prompt``, ``init``, ``large``) to its
    one-argument deserialize; ``objects`` holds the side's objects under the same keys
    (``large``: a list)."""
    dumps, loads = json.dumps, json.loads
    small, prompt, init, large = (objects[k] for k in ("small", "prompt", "init", "large"))
    d_small, d_prompt, d_init, d_large = (decoders[k] for k in ("small", "prompt", "init", "large"))
    w_small, w_prompt, w_init, w_large = p.SMALL_WIRE, p.MEDIUM_PROMPT_WIRE, p.MEDIUM_INIT_WIRE, p.LARGE_WIRE

    def serialize_medium() -> tuple:
        return serialize(prompt), serialize(init)

    def deserialize_medium() -> tuple:
        return d_prompt(w_prompt), d_init(w_init)

    def roundtrip_medium() -> tuple:
        w1 = dumps(serialize(prompt))
        w2 = dumps(serialize(init))
        return d_prompt(loads(w1)), d_init(loads(w2))

    def roundtrip_large() -> list:
        wires = [dumps(serialize(o)) for o in large]
        return [d_large(loads(w)) for w in wires]

    return {
        "serialize-small": lambda: serialize(small),
        "serialize-medium": serialize_medium,
        "serialize-large": lambda: [serialize(o) for o in large],
        "deserialize-small": lambda: d_small(w_small),
        "deserialize-medium": deserialize_medium,
        "deserialize-large": lambda: [d_large(d) for d in w_large],
        "roundtrip-small": lambda: d_small(loads(dumps(serialize(small)))),
        "roundtrip-medium": roundtrip_medium,
        "roundtrip-large": roundtrip_large,
    }


# ---------------------------------------------------------------------------
# agentproto


def agentproto_objects() -> dict:
    from agentproto.acp import v1
    from agentproto.codec import Raw

    encode = msgspec.json.encode
    return {
        "small": v1.TextContent(text=p.SMALL_TEXT),
        "prompt": v1.PromptRequest(
            session_id=p.MEDIUM_SESSION, prompt=[v1.TextContent(text=t) for t in p.MEDIUM_TEXTS]
        ),
        "init": v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(
                load_session=True, prompt_capabilities=v1.PromptCapabilities(image=True, audio=True)
            ),
            agent_info=v1.Implementation(name="bench-agent", version="1.0.0"),
        ),
        "large": [
            v1.ToolCallUpdate(
                tool_call_id=c["tool_call_id"],
                title=c["title"],
                kind=c["kind"],
                status=c["status"],
                locations=[v1.ToolCallLocation(path=path, line=line) for path, line in c["locations"]],
                raw_input=Raw(encode(c["raw_input"])),
                raw_output=Raw(encode(c["raw_output"])),
            )
            for c in p.LARGE_ITEMS
        ],
    }


# The generated type of each payload (the official SDK's models have the same names).
TYPES = {"small": "TextContent", "prompt": "PromptRequest", "init": "InitializeResponse", "large": "ToolCallUpdate"}


def agentproto() -> Ops:
    return _steps(ap.to_dict, {k: ap.dict_decoder(t) for k, t in TYPES.items()}, agentproto_objects())


def agentproto_json() -> Ops:
    """Object ↔ JSON bytes, shaped as the other sides: serialize is the canonical
    ``encode``, deserialize decodes the compact JSON of the seed's dicts, the round
    trip is one after the other."""
    o = agentproto_objects()
    d = {k: ap.json_decoder(t) for k, t in TYPES.items()}
    enc = ap.to_json
    j = msgspec.json.encode
    b_small, b_prompt, b_init = j(p.SMALL_WIRE), j(p.MEDIUM_PROMPT_WIRE), j(p.MEDIUM_INIT_WIRE)
    b_large = [j(x) for x in p.LARGE_WIRE]
    small, prompt, init, large = o["small"], o["prompt"], o["init"], o["large"]
    d_small, d_prompt, d_init, d_large = d["small"], d["prompt"], d["init"], d["large"]

    def serialize_medium() -> tuple:
        return enc(prompt), enc(init)

    def deserialize_medium() -> tuple:
        return d_prompt(b_prompt), d_init(b_init)

    def roundtrip_medium() -> tuple:
        w1 = enc(prompt)
        w2 = enc(init)
        return d_prompt(w1), d_init(w2)

    def roundtrip_large() -> list:
        wires = [enc(x) for x in large]
        return [d_large(w) for w in wires]

    return {
        "serialize-small": lambda: enc(small),
        "serialize-medium": serialize_medium,
        "serialize-large": lambda: [enc(x) for x in large],
        "deserialize-small": lambda: d_small(b_small),
        "deserialize-medium": deserialize_medium,
        "deserialize-large": lambda: [d_large(b) for b in b_large],
        "roundtrip-small": lambda: d_small(enc(small)),
        "roundtrip-medium": roundtrip_medium,
        "roundtrip-large": roundtrip_large,
    }


# ---------------------------------------------------------------------------
# The official SDK


def official_objects() -> dict:
    import acp.schema as ref

    return {
        "small": ref.TextContent(text=p.SMALL_TEXT),
        "prompt": ref.PromptRequest(
            session_id=p.MEDIUM_SESSION, prompt=[ref.TextContentBlock(text=t, type="text") for t in p.MEDIUM_TEXTS]
        ),
        "init": ref.InitializeResponse(
            protocol_version=1,
            agent_capabilities=ref.AgentCapabilities(
                load_session=True, prompt_capabilities=ref.PromptCapabilities(image=True, audio=True)
            ),
            agent_info=ref.Implementation(name="bench-agent", version="1.0.0"),
        ),
        "large": [
            ref.ToolCallUpdate(
                tool_call_id=c["tool_call_id"],
                title=c["title"],
                kind=c["kind"],
                status=c["status"],
                locations=[ref.ToolCallLocation(path=path, line=line) for path, line in c["locations"]],
                raw_input=c["raw_input"],
                raw_output=c["raw_output"],
            )
            for c in p.LARGE_ITEMS
        ],
    }


def official() -> Ops:
    """The seed's reference calls, written out as it writes them (the dump method called
    with its keywords in place, ``Model.model_validate`` bound once)."""
    import acp.schema as ref

    o = official_objects()
    dumps, loads = json.dumps, json.loads
    small, prompt, init, large = o["small"], o["prompt"], o["init"], o["large"]
    v_small, v_prompt = ref.TextContent.model_validate, ref.PromptRequest.model_validate
    v_init, v_large = ref.InitializeResponse.model_validate, ref.ToolCallUpdate.model_validate
    w_small, w_prompt, w_init, w_large = p.SMALL_WIRE, p.MEDIUM_PROMPT_WIRE, p.MEDIUM_INIT_WIRE, p.LARGE_WIRE

    def serialize_medium() -> tuple:
        return prompt.model_dump(by_alias=True, exclude_none=True), init.model_dump(by_alias=True, exclude_none=True)

    def deserialize_medium() -> tuple:
        return v_prompt(w_prompt), v_init(w_init)

    def roundtrip_small() -> Any:
        return v_small(loads(dumps(small.model_dump(by_alias=True, exclude_none=True))))

    def roundtrip_medium() -> tuple:
        w1 = dumps(prompt.model_dump(by_alias=True, exclude_none=True))
        w2 = dumps(init.model_dump(by_alias=True, exclude_none=True))
        return v_prompt(loads(w1)), v_init(loads(w2))

    def roundtrip_large() -> list:
        wires = [dumps(x.model_dump(by_alias=True, exclude_none=True)) for x in large]
        return [v_large(loads(w)) for w in wires]

    return {
        "serialize-small": lambda: small.model_dump(by_alias=True, exclude_none=True),
        "serialize-medium": serialize_medium,
        "serialize-large": lambda: [x.model_dump(by_alias=True, exclude_none=True) for x in large],
        "deserialize-small": lambda: v_small(w_small),
        "deserialize-medium": deserialize_medium,
        "deserialize-large": lambda: [v_large(d) for d in w_large],
        "roundtrip-small": roundtrip_small,
        "roundtrip-medium": roundtrip_medium,
        "roundtrip-large": roundtrip_large,
    }


# ---------------------------------------------------------------------------
# zerodep (optional)

ZERODEP_ENV = "AGENTPROTO_ZERODEP_DIR"


def zerodep_module() -> ModuleType | None:
    """zerodep's ``acp/acp.py`` from ``$AGENTPROTO_ZERODEP_DIR`` (loaded under another
    name: its module is called ``acp``, like the official SDK's package), or ``None``."""
    root = os.environ.get(ZERODEP_ENV)
    if not root:
        return None
    path = Path(root) / "acp" / "acp.py"
    if not path.is_file() or not (Path(root) / "jsonrpc" / "jsonrpc.py").is_file():
        raise FileNotFoundError(f"{ZERODEP_ENV}={root} holds no acp/acp.py and jsonrpc/jsonrpc.py")
    if "zerodep_acp" in sys.modules:
        return sys.modules["zerodep_acp"]
    spec = importlib.util.spec_from_file_location("zerodep_acp", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["zerodep_acp"] = module
    spec.loader.exec_module(module)
    return module


def zerodep_objects(zd: ModuleType) -> dict:
    return {
        "small": zd.TextContent(text=p.SMALL_TEXT),
        "prompt": zd.PromptParams(session_id=p.MEDIUM_SESSION, prompt=[zd.TextContent(text=t) for t in p.MEDIUM_TEXTS]),
        "init": zd.InitializeResult(
            protocol_version=1,
            agent_capabilities=zd.AgentCapabilities(
                load_session=True, prompt_capabilities=zd.PromptCapabilities(image=True, audio=True)
            ),
            agent_info=zd.ImplementationInfo(name="bench-agent", version="1.0.0"),
        ),
        "large": [
            zd.ToolCallUpdate(
                tool_call_id=c["tool_call_id"],
                title=c["title"],
                kind=zd.ToolKind(c["kind"]),
                status=zd.ToolCallStatus(c["status"]),
                locations=[zd.ToolCallLocation(path=path, line=line) for path, line in c["locations"]],
                raw_input=c["raw_input"],
                raw_output=c["raw_output"],
            )
            for c in p.LARGE_ITEMS
        ],
    }


def zerodep() -> Ops | None:
    """NOT validating: ``from_raw`` renames top-level keys into a new dict."""
    zd = zerodep_module()
    if zd is None:
        return None
    return _steps(zd.to_dict, dict.fromkeys(TYPES, zd.from_raw), zerodep_objects(zd))


SIDES: dict[str, Callable[[], Ops | None]] = {
    "agentproto": agentproto,
    "agentproto_json": agentproto_json,
    "official": official,
    "zerodep": zerodep,
}
