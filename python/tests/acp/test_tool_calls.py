"""The tool-call store: creation, upserts, patches with the three states, calls known
only from updates, status regressions, cancellation marks, removal."""

from __future__ import annotations

from msgspec import Raw

from agentproto.acp import v1
from agentproto.acp.tool_calls import ChangeKind, ToolCallStore


def note(update: v1.SessionUpdate, session: str = "s") -> v1.SessionNotification:
    return v1.SessionNotification(session_id=session, update=update)


def test_a_tool_call_then_updates_patch_it_with_three_states() -> None:
    store = ToolCallStore()
    call = v1.ToolCall(tool_call_id="c1", title="Edit", kind="edit", raw_input=Raw(b'{"a":1}'))
    change = store.apply(note(call))
    assert change is not None and change.kind is ChangeKind.CREATED and change.kind.is_new
    assert change.status_changed and not change.status_regressed
    update = v1.SessionUpdateToolCallUpdate(tool_call_id="c1", status="in_progress", title=None)
    change = store.apply(note(update))
    assert change is not None and change.kind is ChangeKind.UPDATED
    state = change.state
    # A value replaces, null resets to the default, absent keeps.
    assert (state.status, state.title, state.kind) == ("in_progress", "", "edit")
    assert state.raw_input is not None and bytes(state.raw_input) == b'{"a":1}'
    store.apply(note(v1.SessionUpdateToolCallUpdate(tool_call_id="c1", raw_input=Raw(b" null"))))
    assert store.get("s", "c1") is not None and store.get("s", "c1").raw_input is None  # type: ignore[union-attr]


def test_out_of_order_sequences_are_accepted_and_named() -> None:
    store = ToolCallStore()
    change = store.apply_tool_call_update("s", v1.ToolCallUpdate(tool_call_id="c", status="completed"))
    assert change.kind is ChangeKind.CREATED_FROM_UPDATE and change.state.created_by_update
    assert change.state.title == ""
    change = store.apply_tool_call("s", v1.ToolCall(tool_call_id="c", title="Late"))
    assert change.kind is ChangeKind.ANNOUNCED and change.kind.is_out_of_order
    assert (change.state.title, change.state.status) == ("Late", "completed")
    change = store.apply_tool_call("s", v1.ToolCall(tool_call_id="c", title="Again", status="pending"))
    assert change.kind is ChangeKind.REPEATED and change.status_regressed
    assert (change.state.tool_calls, change.state.updates) == (2, 1)


def test_other_updates_are_ignored_and_sessions_are_kept_apart() -> None:
    store = ToolCallStore()
    chunk = v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text="hi"))
    assert store.apply(note(chunk)) is None
    store.apply(note(v1.ToolCall(tool_call_id="x", title="a"), "s1"))
    store.apply(note(v1.ToolCall(tool_call_id="y", title="b"), "s1"))
    store.apply(note(v1.ToolCall(tool_call_id="x", title="c"), "s2"))
    assert [c.tool_call_id for c in store.calls("s1")] == ["x", "y"]
    assert len(store) == 3 and sorted(store.sessions()) == ["s1", "s2"]


def test_cancelling_marks_unfinished_calls_and_removal_forgets() -> None:
    store = ToolCallStore()
    store.apply(note(v1.ToolCall(tool_call_id="done", title="a", status="completed")))
    store.apply(note(v1.ToolCall(tool_call_id="open", title="b", status="in_progress")))
    assert store.mark_cancelled("s") == 1
    assert store.mark_cancelled("s") == 0
    open_call = store.get("s", "open")
    assert open_call is not None and open_call.cancelled and open_call.status == "in_progress"
    removed = store.remove("s", "done")
    assert removed is not None and removed.tool_call_id == "done"
    assert [c.tool_call_id for c in store.remove_session("s")] == ["open"]
    assert len(store) == 0
