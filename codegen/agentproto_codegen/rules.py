"""Protocol rules the specs state only in prose, read from ``rules/<protocol>.toml``
into the model.

A rules file is reviewed by hand; this module makes sure it cannot drift from the
schema it describes: every method it names must exist in the version, every
capability path must lead through the ``initialize`` message's types to a field of
the right kind, every session rule must find the ``sessionId`` it reads, every session
gate must name a session-scoped request and exactly the opening requests whose results
carry its member, and every ``source`` must point at a description in the pinned schema.  A mistake fails
``make codegen`` with the rule's name; nothing is silently skipped.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from .model import (
    ArrayRef,
    Decl,
    Gate,
    Method,
    NamedRef,
    PrimRef,
    SessionGate,
    SessionRule,
    Spec,
    Struct,
    TypeRef,
    Union,
    ValueGate,
    resolve,
)

RULES_FORMAT = 1


class RulesError(Exception):
    pass


def load(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The parsed rules file and its source entry (file, sha256) for the model."""
    data = path.read_bytes()
    rules = tomllib.loads(data.decode("utf-8"))
    if rules.get("format") != RULES_FORMAT:
        raise RulesError(f"{path.name}: format {rules.get('format')!r}, this reader knows {RULES_FORMAT}")
    return rules, {"file": f"rules/{path.name}", "sha256": hashlib.sha256(data).hexdigest()}


def handler_words(m: Method) -> str:
    """The default handler name: the params type without its suffix, in snake_case
    (``PromptRequest`` -> ``prompt``, ``NewSessionRequest`` -> ``new_session``)."""
    base = re.sub(r"(Request|Notification)$", "", m.params or m.wire)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", base)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return re.sub(r"[^A-Za-z0-9]+", "_", s).lower().strip("_")


class AcpRules:
    """Applies ``rules/acp.toml`` to one ACP version's model (the unstable superset)."""

    def __init__(self, spec: Spec, rules: dict[str, Any], schema: dict[str, Any]):
        self.spec = spec
        self.rules = rules
        self.schema = schema
        self.version = spec.version
        self.by_name: dict[tuple[str, str], Method] = {(m.wire, m.kind): m for m in spec.methods}

    def fail(self, where: str, what: str) -> RulesError:
        return RulesError(f"rules/acp.toml [{self.version}] {where}: {what}")

    def request(self, wire: str, where: str) -> Method:
        m = self.by_name.get((wire, "request"))
        if m is None:
            raise self.fail(where, f"`{wire}` is not a request of ACP {self.version}")
        return m

    def check_source(self, where: str, rule: dict[str, Any]) -> str:
        """The rule's reference: its schema pointer (checked) and docs page."""
        parts = []
        pointer = rule.get("source")
        if pointer is not None:
            node: Any = self.schema
            for seg in pointer.strip("/").split("/"):
                if isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
                    node = node[int(seg)]  # a JSON pointer indexes arrays by position
                    continue
                if not isinstance(node, dict) or seg not in node:
                    raise self.fail(where, f"source {pointer} is not in the pinned schema")
                node = node[seg]
            parts.append(f"spec/{self.spec.source_file}#{pointer}")
        if "docs" in rule:
            parts.append(rule["docs"])
        if not parts:
            raise self.fail(where, "a rule needs a `source` or `docs` reference")
        return " ".join(parts)

    # -- types ---------------------------------------------------------------

    def decl(self, t: TypeRef | str | None) -> Decl | None:
        return resolve(self.spec.decls, NamedRef(t) if isinstance(t, str) else t)

    def field(self, owner: Decl | None, wire: str):  # type: ignore[no-untyped-def]
        if isinstance(owner, Struct):
            for f in owner.fields:
                if f.wire == wire:
                    return f
        return None

    # -- apply ---------------------------------------------------------------

    def apply(self) -> None:
        section = self.rules.get(self.version)
        if section is None:
            raise self.fail("", "no rules for this version")
        self.apply_unions(section.get("unions", {}))
        self.apply_required(section.get("required", {}))
        self.apply_names(self.rules.get("names", {}))
        self.apply_results(self.rules.get("results", {}))
        for wire, rule in section.get("gates", {}).items():
            m = self.request(wire, f"gates.{wire!r}")
            m.gate = self.gate(m, rule, f"gates.{wire!r}")
        for i, rule in enumerate(section.get("values", [])):
            for wire in rule["methods"]:
                m = self.request(wire, f"values[{i}]")
                m.values.append(self.value_gate(m, rule, f"values[{i}] {wire!r}"))
        for wire, rule in section.get("sessions", {}).items():
            m = self.request(wire, f"sessions.{wire!r}")
            m.session = self.session(m, rule, f"sessions.{wire!r}")
        # After the session effects: a session gate names requests that open sessions.
        for wire, rule in section.get("session_gates", {}).items():
            m = self.request(wire, f"session_gates.{wire!r}")
            m.session_gate = self.session_gate(m, rule, f"session_gates.{wire!r}")
        lifecycle = self.rules.get("lifecycle", {}) | {"prompt_turn": None} | section.get("lifecycle", {})
        for key in ("initialize", "cancel_request", "session_cancel", "prompt_turn"):
            wire = lifecycle.get(key)
            if key == "prompt_turn" and wire is None:
                continue
            if wire is None or not any(m.wire == wire for m in self.spec.methods):
                raise self.fail(f"lifecycle.{key}", f"`{wire}` is not a method of this version")
        self.spec.rules = {
            "lifecycle": {k: v for k, v in lifecycle.items() if k != "docs"},
            "unions": {"open": self.rules["unions"]["open"], "closed": self.rules["unions"]["closed"]},
            "results": {"null_reads_as_empty": bool(self.rules.get("results", {}).get("null_reads_as_empty"))},
            # Where each side advertises its capabilities, from the gates' paths.
            "capabilities": self.capability_roots(),
            # Whether a request id may be `null`: the schema's RequestId says (v1 yes, v2 no).
            "envelope": {"null_request_id": self.null_request_id()},
        }

    def apply_unions(self, here: dict[str, Any]) -> None:
        policy = self.rules["unions"]
        if here:
            self.check_source("unions", here)
        for name in here.get("unknown_tag_to_default", []):
            d = self.spec.decls.get(name)
            if not isinstance(d, Union) or d.default is None:
                raise self.fail(f"unions.unknown_tag_to_default {name!r}", "not a union with a default variant")
            d.unknown_to_default = True
        for d in self.spec.decls.values():
            if isinstance(d, Union):
                if d.strategy == "keyed":
                    d.on_unknown = "error"
                else:
                    d.on_unknown = policy["open"] if d.open else policy["closed"]

    def apply_required(self, required: dict[str, Any]) -> None:
        for side in ("agent", "client"):
            for wire in required.get(side, []):
                ms = [m for m in self.spec.methods if m.wire == wire]
                if not ms or any(m.side != side for m in ms):
                    raise self.fail(f"required.{side}", f"`{wire}` is not handled by the {side}")
                for m in ms:
                    m.required = True

    def apply_names(self, names: dict[str, str]) -> None:
        for m in self.spec.methods:
            m.handler = handler_words(m)
        for wire, name in names.items():
            ms = [m for m in self.spec.methods if m.wire == wire]
            if not ms:
                continue  # named for another version
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise self.fail(f"names.{wire!r}", f"{name!r} is not snake_case")
            for m in ms:
                m.handler = name

    def apply_results(self, results: dict[str, Any]) -> None:
        if not results.get("null_reads_as_empty"):
            return
        for m in self.spec.methods:
            d = self.decl(m.result)
            m.null_result = (
                m.kind == "request"
                and isinstance(d, Struct)
                and d.flatten is None
                and not any(f.required for f in d.fields)
            )

    def init_message(self, m: Method, where: str) -> tuple[str | None, str]:
        """The type of the handling side's `initialize` message, and which one it is."""
        if m.side not in ("agent", "client"):
            raise self.fail(where, f"`{m.wire}` is handled by {m.side}, not by a role that advertises capabilities")
        init = next(x for x in self.spec.methods if x.wire == "initialize" and x.kind == "request")
        return (init.result, "initialize.result") if m.side == "agent" else (init.params, "initialize.params")

    def capability_path(self, message: str | None, dotted: str, where: str) -> list[str]:
        """A plain capability path (no `{member}`), checked to end at a capability."""
        path = dotted.split(".")
        owner = self.decl(message)
        for i, seg in enumerate(path):
            f = self.field(owner, seg)
            if f is None:
                raise self.fail(where, f"`{'.'.join(path[: i + 1])}` is not in {message}")
            if i == len(path) - 1:
                self.check_capability_type(f.type, "advertised", where)
            owner = self.decl(f.type)
        return path

    def value_gate(self, m: Method, rule: dict[str, Any], where: str) -> ValueGate:
        message, at = self.init_message(m, where)
        member = self.field(self.decl(m.params), rule["member"])
        item = member.type.item if member is not None and isinstance(member.type, ArrayRef) else None
        union = self.decl(item)
        if not isinstance(union, Union) or union.strategy != "tagged" or union.tag_field is None:
            raise self.fail(where, f"`{m.params}.{rule['member']}` is not a list of a tagged union")
        tags = {v.tag or "" for v in union.variants}
        baseline = list(rule.get("baseline", []))
        gated = {tag: self.capability_path(message, dotted, where) for tag, dotted in rule.get("requires", {}).items()}
        listed = baseline + list(gated)
        if sorted(listed) != sorted(tags) or len(set(listed)) != len(listed):
            raise self.fail(where, f"{union.name} has variants {sorted(tags)}; the rule lists {sorted(listed)} (each exactly once)")
        return ValueGate(
            member=rule["member"], union=union.name, tag=union.tag_field, where=at,  # type: ignore[arg-type]
            baseline=baseline, gated=gated, section=self.check_source(where, rule),
        )

    def gate(self, m: Method, rule: dict[str, Any], where: str) -> Gate:
        message, at = self.init_message(m, where)
        path = rule["requires"].split(".")
        test = rule.get("test", "advertised")
        owner = self.decl(message)
        refusal = -32601
        for i, seg in enumerate(path):
            last = i == len(path) - 1
            placeholder = re.fullmatch(r"\{([A-Za-z_]+)\}", seg)
            if placeholder:
                member = placeholder.group(1)
                values = self.member_values(m, member, where)
                for value in values:
                    if self.field(owner, value) is None:
                        raise self.fail(where, f"`{'.'.join(path[:i])}` has no capability for {member} `{value}`")
                refusal = -32602
                if not last:
                    raise self.fail(where, "a `{member}` segment must come last")
                break
            f = self.field(owner, seg)
            if f is None:
                raise self.fail(where, f"`{'.'.join(path[: i + 1])}` is not in {message}")
            if last:
                self.check_capability_type(f.type, test, where)
            owner = self.decl(f.type)
        return Gate(where=at, path=path, test=test, refusal=refusal, section=self.check_source(where, rule))  # type: ignore[arg-type]

    def member_values(self, m: Method, member: str, where: str) -> list[str]:
        """The values a request member may take: the tags of the params' union whose
        tag it is (elicitation's `mode`), or a string enum's values."""
        params = self.decl(m.params)
        if isinstance(params, Struct) and params.flatten:
            u = self.spec.decls.get(params.flatten)
            if isinstance(u, Union) and u.tag_field == member:
                return [v.tag for v in u.variants if v.tag is not None]
        raise self.fail(where, f"`{m.params}` has no `{member}` tag to choose a capability by")

    def check_capability_type(self, t: TypeRef, test: str, where: str) -> None:
        d = self.decl(t)
        if test == "non-empty":
            if not isinstance(t, ArrayRef):
                raise self.fail(where, "a non-empty test needs a list")
        elif test == "advertised":
            if not (isinstance(t, PrimRef) and t.prim == "bool") and not isinstance(d, Struct):
                raise self.fail(where, "a capability is a boolean or an object")
        else:
            raise self.fail(where, f"unknown test {test!r}")

    def session(self, m: Method, rule: dict[str, Any], where: str) -> SessionRule:
        effect = rule.get("effect")
        if effect not in ("created", "opened", "removed"):
            raise self.fail(where, f"effect {effect!r}")
        holder = m.result if effect == "created" else m.params
        f = self.field(self.decl(holder), "sessionId")
        if f is None or not f.required:
            raise self.fail(where, f"`{holder}` has no required sessionId for a `{effect}` effect")
        return SessionRule(effect=effect, unseen_ok=bool(rule.get("unseen", False)), section=self.check_source(where, rule))

    def session_gate(self, m: Method, rule: dict[str, Any], where: str) -> SessionGate:
        """A request served only for sessions whose opening answer carried `member`:
        the request names its session, does not open or remove one itself, and every
        request of the same side that opens a session with a result carrying
        `member` is listed in `opened_by` (none more: each must carry it, optional)."""
        if m.side not in ("agent", "client"):
            raise self.fail(where, f"`{m.wire}` is handled by {m.side}, not by a role that tracks sessions")
        f = self.field(self.decl(m.params), "sessionId")
        if f is None or not f.required:
            raise self.fail(where, f"`{m.params}` has no required sessionId: the request is not session-scoped")
        if m.session is not None and m.session.effect is not None:
            raise self.fail(where, f"`{m.wire}` changes sessions itself ({m.session.effect})")
        member = rule.get("member")
        opened_by = rule.get("opened_by")
        if not isinstance(member, str) or not isinstance(opened_by, list) or not opened_by:
            raise self.fail(where, "a session gate needs a `member` and a non-empty `opened_by` list")
        if len(set(opened_by)) != len(opened_by):
            raise self.fail(where, "`opened_by` lists a request twice")
        for wire in opened_by:
            opener = self.request(wire, where)
            if opener.side != m.side:
                raise self.fail(where, f"`{wire}` is handled by {opener.side}, `{m.wire}` by {m.side}")
            if opener.session is None or opener.session.effect not in ("created", "opened"):
                raise self.fail(where, f"`{wire}` neither creates nor opens a session (see [sessions])")
            carried = self.field(self.decl(opener.result), member)
            if carried is None:
                raise self.fail(where, f"`{opener.result}` (the result of `{wire}`) has no `{member}`")
            if carried.required and not carried.nullable:
                raise self.fail(where, f"`{opener.result}.{member}` is always there: the gate could never shut")
            if not isinstance(self.decl(carried.type), Struct):
                raise self.fail(where, f"`{opener.result}.{member}` is not an object; announcing it means holding one")
        unlisted = [
            x.wire
            for x in self.spec.methods
            if x.kind == "request" and x.side == m.side and x.wire not in opened_by
            and x.session is not None and x.session.effect in ("created", "opened")
            and self.field(self.decl(x.result), member) is not None
        ]
        if unlisted:
            raise self.fail(where, f"{unlisted} also open sessions with `{member}` in their result; list them in `opened_by`")
        return SessionGate(member=member, opened_by=list(opened_by), section=self.check_source(where, rule))

    def null_request_id(self) -> bool:
        """Whether the schema's `RequestId` admits `null`."""
        request_id = self.schema["$defs"].get("RequestId")
        if not isinstance(request_id, dict) or "anyOf" not in request_id:
            raise self.fail("envelope", "the schema has no RequestId union to read the null-id rule from")
        return any(branch.get("type") == "null" for branch in request_id["anyOf"])

    def capability_roots(self) -> dict[str, str]:
        """The member of each side's `initialize` message that holds its capabilities
        (the field typed `AgentCapabilities` / `ClientCapabilities`)."""
        init = next(x for x in self.spec.methods if x.wire == "initialize" and x.kind == "request")
        roots = {}
        for side, message, type_name in (("agent", init.result, "AgentCapabilities"), ("client", init.params, "ClientCapabilities")):
            owner = self.decl(message)
            found = [f.wire for f in owner.fields if f.type == NamedRef(type_name)] if isinstance(owner, Struct) else []
            if len(found) != 1:
                raise self.fail("capabilities", f"{message} has {len(found)} fields of type {type_name}")
            roots[side] = found[0]
        return roots


def apply_acp(spec: Spec, rules_path: Path, schema_path: Path) -> None:
    """Reads the ACP rules file into ``spec`` (one version's whole model)."""
    rules, source = load(rules_path)
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    AcpRules(spec, rules, schema).apply()
    spec.sources.append(source)
