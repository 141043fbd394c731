"""A client-side store of tool calls that tolerates the sequences real agents send (the
Python twin of `crates/acp/src/tool_calls.rs`).

The agent reports tool calls through `session/update`: a `tool_call` update creates one
and `tool_call_update` patches it. In ACP v1 a patch replaces every field it carries,
`null` clears a field, and an absent field stays as it was. Agents in the wild do not
keep to the intended order: they send updates for a call that was never announced,
announce the same call twice, and move a status backwards. `ToolCallStore` accepts all
of that and keeps one `ToolCallState` per (session id, tool call id), in the order the
calls were first seen:

* a `tool_call` for an unknown id creates the call (`CREATED`);
* a `tool_call` for a known id is an upsert: every field it carries replaces the old
  value, absent optional fields are kept (`REPEATED`, or `ANNOUNCED` when the call was
  so far known only from updates);
* a `tool_call_update` for a known id patches it (`UPDATED`);
* a `tool_call_update` for an unknown id creates the call from what it carries, with an
  empty title until one is sent, and sets `created_by_update` (`CREATED_FROM_UPDATE`).

Status changes are applied as sent, even backwards; `Change.status_regressed` tells a UI
that one happened. `session/request_permission` carries a tool call update too: pass it
to `apply_tool_call_update`. ACP v1 has no `cancelled` status: `mark_cancelled` flags the
unfinished calls of a session the client cancelled, leaving `status` as reported. The
store grows with every new id: call `remove_session` when a session ends.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from msgspec import Raw, UnsetType

from agentproto.acp import v1

__all__ = ["Change", "ChangeKind", "ToolCallState", "ToolCallStore"]


@dataclass
class ToolCallState:
    """What the client knows about one tool call."""

    tool_call_id: str
    title: str = ""
    """Empty while the call is known only from updates that carried none."""
    name: str | None = None
    kind: str = "other"
    status: str = "pending"
    content: list[v1.ToolCallContent] = field(default_factory=list)
    locations: list[v1.ToolCallLocation] = field(default_factory=list)
    raw_input: Raw | None = None
    """Verbatim; a JSON `null` clears it."""
    raw_output: Raw | None = None
    meta: Raw | None = None
    """The `_meta` of the last message that carried one."""
    created_by_update: bool = False
    """The first message seen for this id was a `tool_call_update`; stays set."""
    tool_calls: int = 0
    """How many `tool_call` messages were applied (more than one is a repeat)."""
    updates: int = 0
    """How many `tool_call_update` messages were applied."""
    cancelled: bool = False
    """The client cancelled the turn while this call was unfinished (`mark_cancelled`)."""

    @property
    def is_finished(self) -> bool:
        return self.status in ("completed", "failed")

    def _upsert(self, call: v1.ToolCall) -> None:
        self.tool_calls += 1
        self.title = call.title
        self.name = _patch(self.name, call.name)
        if not isinstance(call.kind, UnsetType):
            self.kind = call.kind
        if not isinstance(call.status, UnsetType):
            self.status = call.status
        if not isinstance(call.content, UnsetType):
            self.content = list(call.content)
        if not isinstance(call.locations, UnsetType):
            self.locations = list(call.locations)
        self.raw_input = _replace_raw(self.raw_input, call.raw_input)
        self.raw_output = _replace_raw(self.raw_output, call.raw_output)
        self.meta = _patch(self.meta, call.meta)

    def _patch(self, update: v1.ToolCallUpdate) -> None:
        self.updates += 1
        self.title = _patch_or(self.title, update.title, "")
        self.name = _patch(self.name, update.name)
        self.kind = _patch_or(self.kind, update.kind, "other")
        self.status = _patch_or(self.status, update.status, "pending")
        self.content = list(_patch_or(self.content, update.content, []))
        self.locations = list(_patch_or(self.locations, update.locations, []))
        self.raw_input = _replace_raw(self.raw_input, update.raw_input)
        self.raw_output = _replace_raw(self.raw_output, update.raw_output)
        self.meta = _patch(self.meta, update.meta)


def _patch(slot: Any, value: Any) -> Any:
    """A value replaces, `null` clears, absent keeps."""
    return slot if isinstance(value, UnsetType) else value


def _patch_or(slot: Any, value: Any, default: Any) -> Any:
    """A value replaces, `null` resets to the default, absent keeps."""
    if isinstance(value, UnsetType):
        return slot
    return default if value is None else value


def _replace_raw(slot: Raw | None, value: Raw | UnsetType) -> Raw | None:
    """A raw value replaces; the JSON `null` clears."""
    if isinstance(value, UnsetType):
        return slot
    return None if bytes(value).strip() == b"null" else value


class ChangeKind(enum.Enum):
    """What an applied message did."""

    CREATED = "created"
    """A `tool_call` created a new call."""
    REPEATED = "repeated"
    """A `tool_call` repeated an id already announced by a `tool_call` (merged)."""
    ANNOUNCED = "announced"
    """A `tool_call` arrived for a call so far known only from updates (merged)."""
    UPDATED = "updated"
    """A `tool_call_update` patched a known call."""
    CREATED_FROM_UPDATE = "created-from-update"
    """A `tool_call_update` arrived for an unknown id and created the call."""

    @property
    def is_new(self) -> bool:
        """Whether the call did not exist before (a UI adds a row)."""
        return self in (ChangeKind.CREATED, ChangeKind.CREATED_FROM_UPDATE)

    @property
    def is_out_of_order(self) -> bool:
        """Whether the message broke the intended order (`tool_call` once, then updates)."""
        return self in (ChangeKind.REPEATED, ChangeKind.ANNOUNCED, ChangeKind.CREATED_FROM_UPDATE)


_RANK = {"pending": 0, "in_progress": 1, "completed": 2, "failed": 2}


@dataclass(frozen=True)
class Change:
    """The effect of one applied message, with the call's state after it."""

    kind: ChangeKind
    previous_status: str | None
    """The status before the message (`None` when the call is new)."""
    state: ToolCallState

    @property
    def status_changed(self) -> bool:
        """Whether the status changed (a new call counts as changed)."""
        return self.previous_status != self.state.status

    @property
    def status_regressed(self) -> bool:
        """Whether the status moved backwards: to an earlier step of
        `pending → in_progress → completed | failed`, or from one final status to the other."""
        if self.previous_status is None:
            return False
        before = _RANK.get(self.previous_status, 0)
        after = _RANK.get(self.state.status, 0)
        return after < before or (before == 2 and self.previous_status != self.state.status)


class ToolCallStore:
    """Tool calls keyed by (session id, tool call id), each session in first-seen order."""

    def __init__(self) -> None:
        # Dicts keep insertion order: first-seen order comes for free.
        self._sessions: dict[str, dict[str, ToolCallState]] = {}

    def apply(self, notification: v1.SessionNotification) -> Change | None:
        """Applies a `session/update`; updates other than tool calls give `None`."""
        return self.apply_update(notification.session_id, notification.update)

    def apply_update(self, session_id: str, update: v1.SessionUpdate) -> Change | None:
        if isinstance(update, v1.ToolCall):
            return self.apply_tool_call(session_id, update)
        if isinstance(update, v1.ToolCallUpdate):
            return self.apply_tool_call_update(session_id, update)
        return None

    def apply_tool_call(self, session_id: str, call: v1.ToolCall) -> Change:
        """Applies a `tool_call`: creates the call, or merges it into the known one."""
        state, created = self._entry(session_id, call.tool_call_id)
        previous = None if created else state.status
        if created:
            kind = ChangeKind.CREATED
        elif state.tool_calls == 0:
            kind = ChangeKind.ANNOUNCED
        else:
            kind = ChangeKind.REPEATED
        state._upsert(call)
        return Change(kind, previous, state)

    def apply_tool_call_update(self, session_id: str, update: v1.ToolCallUpdate) -> Change:
        """Applies a `tool_call_update` (from `session/update`, or the `toolCall` of a
        permission request): patches the known call, or creates one."""
        state, created = self._entry(session_id, update.tool_call_id)
        previous = None if created else state.status
        state.created_by_update |= created
        state._patch(update)
        return Change(ChangeKind.CREATED_FROM_UPDATE if created else ChangeKind.UPDATED, previous, state)

    def _entry(self, session_id: str, tool_call_id: str) -> tuple[ToolCallState, bool]:
        calls = self._sessions.setdefault(session_id, {})
        state = calls.get(tool_call_id)
        if state is not None:
            return state, False
        state = calls[tool_call_id] = ToolCallState(tool_call_id)
        return state, True

    def get(self, session_id: str, tool_call_id: str) -> ToolCallState | None:
        return self._sessions.get(session_id, {}).get(tool_call_id)

    def calls(self, session_id: str) -> list[ToolCallState]:
        """The calls of a session, in the order they were first seen."""
        return list(self._sessions.get(session_id, {}).values())

    def sessions(self) -> list[str]:
        """The ids of the sessions that have calls."""
        return list(self._sessions)

    def mark_cancelled(self, session_id: str) -> int:
        """Flags every call of the session that is not `completed` or `failed` as
        cancelled; returns how many were newly flagged."""
        marked = 0
        for state in self._sessions.get(session_id, {}).values():
            if not state.is_finished and not state.cancelled:
                state.cancelled = True
                marked += 1
        return marked

    def remove(self, session_id: str, tool_call_id: str) -> ToolCallState | None:
        calls = self._sessions.get(session_id)
        if calls is None:
            return None
        state = calls.pop(tool_call_id, None)
        if not calls:
            del self._sessions[session_id]
        return state

    def remove_session(self, session_id: str) -> list[ToolCallState]:
        """Forgets a session; returns its calls in first-seen order."""
        return list(self._sessions.pop(session_id, {}).values())

    def __len__(self) -> int:
        return sum(len(calls) for calls in self._sessions.values())
