"""The v1 builders give the typed values a hand-written construction gives, and each
one is valid on the wire (decoded back by the generated decoder of `session/update`)."""

from __future__ import annotations

import pytest

from agentproto.acp import v1
from agentproto.acp.builders import (
    audio_block,
    image_block,
    plan_entry,
    resource_link_block,
    session_notification,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_location,
    tool_terminal_content,
    update_agent_message,
    update_agent_message_text,
    update_agent_thought,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from agentproto.codec import encode
from agentproto.codec.errors import DecodeError


def wire(update: v1.SessionUpdate) -> bytes:
    """The `session/update` params for `update`, decoded back by the receiving side."""
    raw = encode(session_notification("s-1", update))
    decoded = v1.SURFACE.decode("SessionNotification", raw, "$.params")
    assert decoded.warnings == []
    assert decoded.value == v1.SessionNotification(session_id="s-1", update=update)
    return raw


def test_text_chunks() -> None:
    assert update_agent_message_text("hi") == v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text="hi"))
    assert update_agent_thought_text("hm") == v1.SessionUpdateAgentThoughtChunk(content=v1.TextContent(text="hm"))
    assert update_user_message_text("yo") == v1.SessionUpdateUserMessageChunk(content=v1.TextContent(text="yo"))
    raw = wire(update_agent_message_text("hi"))
    assert (
        raw
        == b'{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}'
    )


def test_chunks_of_any_content_block() -> None:
    link = resource_link_block("file:///notes.md", "notes.md", mime_type="text/markdown", size=12)
    assert link == v1.ResourceLink(uri="file:///notes.md", name="notes.md", mime_type="text/markdown", size=12)
    for block in (text_block("a"), image_block("aGk=", "image/png"), audio_block("aGk=", "audio/wav"), link):
        for build in (update_agent_message, update_agent_thought, update_user_message):
            wire(build(block))
    assert b'"uri"' not in encode(image_block("aGk=", "image/png"))  # left out, not null


def test_a_tool_call_and_its_patches() -> None:
    call = start_tool_call(
        "t1",
        "Edit notes.md",
        kind="edit",
        status="pending",
        content=[tool_diff_content("/notes.md", "new", "old"), tool_content(text_block("why"))],
        locations=[tool_location("/notes.md", 3)],
    )
    assert call.locations == [v1.ToolCallLocation(path="/notes.md", line=3)]
    wire(call)
    assert encode(start_tool_call("t2", "Think")) == b'{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Think"}'
    # A patch carries what it was given; `None` clears a field, a field left out stays.
    patch = update_tool_call("t1", status="completed", content=[tool_terminal_content("term-1")], title=None)
    raw = wire(patch)
    assert b'"title":null' in raw and b'"status":"completed"' in raw and b'"kind"' not in raw


def test_a_plan() -> None:
    plan = update_plan([plan_entry("read"), plan_entry("write", priority="high", status="in_progress")])
    assert plan.entries[1] == v1.PlanEntry(content="write", priority="high", status="in_progress")
    wire(plan)


def test_builders_do_not_validate_what_the_sender_checks() -> None:
    # A builder is a constructor: a wrong value is caught where it is sent (strict by
    # default) or decoded, here by the receiving side's decoder.
    raw = encode(session_notification("s-1", update_agent_message_text(42)))  # type: ignore[arg-type]
    with pytest.raises(DecodeError, match=r"\$\.params\.update\.content\.text"):
        v1.SURFACE.decode("SessionNotification", raw, "$.params")
