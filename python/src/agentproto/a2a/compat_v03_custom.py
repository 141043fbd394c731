"""The hand-written conversions the generated 0.3 tables name: where 0.3 and 1.0 differ
in structure, not only in names. Each takes the direction (`v1`: from 0.3 to 1.0)."""

from __future__ import annotations

from typing import Any

from agentproto.a2a.compat_v03 import Direction, bad, enum_value, get, member, obj, text

__all__ = ["FINAL_STATES", "members", "value"]

FINAL_STATES = ("completed", "failed", "canceled", "rejected", "input-required", "auth-required")
"""The 0.3 states after which no more status updates follow on a stream (terminal or
interrupted): the ones that carry `final: true`."""

_FLOWS = ("authorizationCode", "clientCredentials", "implicit", "password")
"""The flows 0.3 knows, in the order one is picked when 1.0's `oneof` holds only one."""


def value(fn: str, direction: Direction, v: Any, path: str) -> Any:
    """Converts a whole value by the named function."""
    if fn == "part":
        return _part(direction, v, path)
    if fn == "oauth_flows":
        return _oauth_flows(direction, v, path)
    if fn == "security_requirements":
        return _security_requirements(direction, v, path)
    raise AssertionError(fn)


def members(fn: str, direction: Direction, src: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """Reads `src` and adds members to `out` by the named function."""
    if fn == "final_flag":
        _final_flag(direction, src, out, path)
    elif fn == "schemes":
        _schemes(direction, src, out, path)
    elif fn == "default_config_id":
        _default_id_from(direction, src, out, "taskId")
    elif fn == "default_get_id":
        _default_id_from(direction, src, out, "id")
    elif fn == "interfaces":
        _interfaces(direction, src, out, path)
    elif fn == "extended_card":
        _extended_card(direction, src, out)
    else:
        raise AssertionError(fn)


def _final_flag(direction: Direction, src: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """0.3 `final` is not in 1.0 (the stream closing says it): going to 0.3 it is derived
    from the state (terminal or interrupted); going to 1.0 it is dropped."""
    if direction != "v03":
        return
    status = src.get("status")
    state = None
    if isinstance(status, dict) and status.get("state") is not None:
        state = enum_value("TaskState", direction, status["state"], f"{path}.status.state")
    out["final"] = isinstance(state, str) and state in FINAL_STATES


def _part(direction: Direction, v: Any, path: str) -> Any:
    """0.3 parts are tagged by `kind` and keep files in a nested object; 1.0 parts are a
    `oneof` of `text`, `raw`, `url` and `data` with `mediaType` and `filename` beside it."""
    src = obj(v, path)
    out: dict[str, Any] = {}
    if direction == "v1":
        k = get(src, "kind")
        kind_path = member(path, "kind")
        # Lenient: a part without `kind` is read by the member it has.
        if k is not None:
            kind: str | None = text(k, kind_path)
        else:
            kind = next((m for m in ("text", "file", "data") if m in src), None)
        if kind is None:
            raise bad(kind_path, '"text", "file" or "data"', None)
        if kind == "text":
            out["text"] = text(get(src, "text"), member(path, "text"))
        elif kind == "file":
            p = member(path, "file")
            file = obj(src.get("file"), p)
            data, uri = get(file, "bytes"), get(file, "uri")
            if data is not None and uri is None:
                out["raw"] = text(data, member(p, "bytes"))
            elif uri is not None and data is None:
                out["url"] = text(uri, member(p, "uri"))
            else:
                raise bad(p, "a file with exactly one of bytes and uri", src.get("file"))
            if (mime := get(file, "mimeType")) is not None:
                out["mediaType"] = text(mime, member(p, "mimeType"))
            if (name := get(file, "name")) is not None:
                out["filename"] = text(name, member(p, "name"))
        elif kind == "data":
            d = get(src, "data")
            if d is None:
                raise bad(member(path, "data"), "an object", None)
            out["data"] = d
        else:
            raise bad(kind_path, '"text", "file" or "data"', kind)
    else:
        present = [k for k in ("text", "raw", "url", "data") if get(src, k) is not None]
        if len(present) != 1:
            raise bad(path, "a part with exactly one of text, raw, url, data", v)
        which = present[0]
        if which == "text":
            out["kind"] = "text"
            out["text"] = src["text"]
        elif which == "data":
            out["kind"] = "data"
            # 0.3 data parts hold an object; any other JSON value is wrapped.
            d = src["data"]
            out["data"] = d if isinstance(d, dict) else {"value": d}
        else:
            held: dict[str, Any] = {"bytes" if which == "raw" else "uri": src[which]}
            if mime := get(src, "mediaType"):
                held["mimeType"] = mime
            if name := get(src, "filename"):
                held["name"] = name
            out["kind"] = "file"
            out["file"] = held
    if (metadata := get(src, "metadata")) is not None:
        out["metadata"] = metadata
    return out


def _schemes(direction: Direction, src: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """0.3 `schemes[]` <-> 1.0 `scheme`: only the first scheme survives the way up."""
    if direction == "v1":
        p = member(path, "schemes")
        items = get(src, "schemes")
        if not isinstance(items, list) or not items:
            raise bad(p, "an array with at least one scheme", src.get("schemes"))
        out["scheme"] = text(items[0], f"{p}[0]")
    elif (s := get(src, "scheme")) is not None:
        out["schemes"] = [s]


def _default_id_from(direction: Direction, src: dict[str, Any], out: dict[str, Any], task_key: str) -> None:
    """Going to 1.0, a config without an id gets the task's id (read from `task_key`), as
    the 0.3 SDKs did: `set` without an id stores the task's default config, and `get`
    without `pushNotificationConfigId` finds it."""
    if direction != "v1" or "id" in out:
        return
    if (t := get(src, task_key)) is not None:
        out["id"] = t


def _oauth_flows(direction: Direction, v: Any, path: str) -> Any:
    src = obj(v, path)
    out: dict[str, Any] = {}
    for name in _FLOWS:
        f = get(src, name)
        if f is None:
            continue
        out[name] = dict(obj(f, member(path, name)))
        if direction == "v1":
            break
    return out


def _security_requirements(direction: Direction, v: Any, path: str) -> Any:
    """0.3 `[{scheme: [scopes]}]` <-> 1.0 `[{schemes: {scheme: {list: [scopes]}}}]`."""
    if not isinstance(v, list):
        raise bad(path, "an array", v)
    out: list[Any] = []
    for i, item in enumerate(v):
        p = f"{path}[{i}]"
        o = obj(item, p)
        req: dict[str, Any] = {}
        if direction == "v1":
            for name, scopes in o.items():
                req[name] = {"list": scopes}
            out.append({"schemes": req})
            continue
        sp = member(p, "schemes")
        schemes_of = get(o, "schemes")
        if schemes_of is not None:
            for name, scopes in obj(schemes_of, sp).items():
                req[name] = get(obj(scopes, member(sp, name)), "list") or []
        out.append(req)
    return out


def _extended_card(direction: Direction, src: dict[str, Any], out: dict[str, Any]) -> None:
    """0.3 `supportsAuthenticatedExtendedCard` <-> 1.0 `capabilities.extendedAgentCard`."""
    if direction == "v1":
        v = get(src, "supportsAuthenticatedExtendedCard")
        if v is None:
            return
        caps = out.get("capabilities")
        if not isinstance(caps, dict):
            caps = out["capabilities"] = {}
        caps["extendedAgentCard"] = v
        return
    caps = src.get("capabilities")
    v = get(caps, "extendedAgentCard") if isinstance(caps, dict) else None
    if v is not None:
        out["supportsAuthenticatedExtendedCard"] = v


def _interfaces(direction: Direction, src: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """0.3 `url` + `preferredTransport` + `additionalInterfaces` + `protocolVersion` <->
    1.0 `supportedInterfaces`. To 1.0: the main interface first, then every additional
    one that is not the main one again, all with the card's `Major.Minor`. To 0.3: the
    interfaces that declare 0.3 if there are any (else all); the first is the main one,
    and when there are several they are all listed in `additionalInterfaces`, main first."""
    if direction == "v1":
        url = text(get(src, "url"), member(path, "url"))
        t = get(src, "preferredTransport")
        transport = "JSONRPC" if t is None else text(t, member(path, "preferredTransport"))
        v = get(src, "protocolVersion")
        version = "0.3" if v is None else _major_minor(text(v, member(path, "protocolVersion")))
        found: list[Any] = [{"url": url, "protocolBinding": transport, "protocolVersion": version}]
        extra = get(src, "additionalInterfaces")
        if extra is not None:
            ap = member(path, "additionalInterfaces")
            if not isinstance(extra, list):
                raise bad(ap, "an array", extra)
            for i, item in enumerate(extra):
                ip = f"{ap}[{i}]"
                o = obj(item, ip)
                u = text(o.get("url"), member(ip, "url"))
                tr = text(o.get("transport"), member(ip, "transport"))
                if u != url or tr != transport:
                    found.append({"url": u, "protocolBinding": tr, "protocolVersion": version})
        out["supportedInterfaces"] = found
        return
    p = member(path, "supportedInterfaces")
    every = get(src, "supportedInterfaces")
    if not isinstance(every, list) or not every:
        raise bad(p, "at least one interface", src.get("supportedInterfaces"))
    chosen: list[tuple[str, str, bool]] = []
    for i, item in enumerate(every):
        ip = f"{p}[{i}]"
        o = obj(item, ip)
        declared = o.get("protocolVersion")
        u = text(o.get("url"), member(ip, "url"))
        tr = text(o.get("protocolBinding"), member(ip, "protocolBinding"))
        chosen.append((u, tr, isinstance(declared, str) and declared.startswith("0.3")))
    if any(c[2] for c in chosen):
        chosen = [c for c in chosen if c[2]]
    out["url"], out["preferredTransport"] = chosen[0][0], chosen[0][1]
    out["protocolVersion"] = "0.3.0"
    if len(chosen) > 1:
        out["additionalInterfaces"] = [{"url": u, "transport": tr} for u, tr, _ in chosen]


def _major_minor(v: str) -> str:
    """`"0.3.0"` → `"0.3"`."""
    parts = v.split(".")
    return f"{parts[0]}.{parts[1]}" if len(parts) >= 2 else v
