"""Builders for the ACP v1 values an agent or a client writes most: content blocks,
the `session/update` kinds (message, thought and user chunks, tool calls, plans) and
the notification around them.

Each builder returns the generated type (`v1.TextContent`, `v1.ToolCall`, ...), so what
it builds is validated like any other value when it is sent. Optional fields left out
stay absent on the wire; in `update_tool_call` an explicit `None` clears a field (the
protocol's patch rule), which is why its defaults are `UNSET` rather than `None`.

    await cx.peer.session_update(session_id, update_agent_message_text("Hello"))
    await cx.peer.session_update(session_id, start_tool_call("t1", "Read notes.md", kind="read"))
    await cx.peer.session_update(session_id, update_tool_call("t1", status="completed"))
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec import UNSET, UnsetType

from agentproto.acp.generated.v1 import (
    AudioContent,
    Content,
    ContentBlock,
    Diff,
    ImageContent,
    Plan,
    PlanEntry,
    PlanEntryPriority,
    PlanEntryStatus,
    ResourceLink,
    SessionNotification,
    SessionUpdate,
    SessionUpdateAgentMessageChunk,
    SessionUpdateAgentThoughtChunk,
    SessionUpdateToolCallUpdate,
    SessionUpdateUserMessageChunk,
    Terminal,
    TextContent,
    ToolCall,
    ToolCallContent,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
)

__all__ = [
    "audio_block",
    "image_block",
    "plan_entry",
    "resource_link_block",
    "session_notification",
    "start_tool_call",
    "text_block",
    "tool_content",
    "tool_diff_content",
    "tool_location",
    "tool_terminal_content",
    "update_agent_message",
    "update_agent_message_text",
    "update_agent_thought",
    "update_agent_thought_text",
    "update_plan",
    "update_tool_call",
    "update_user_message",
    "update_user_message_text",
]


# -- content blocks ---------------------------------------------------------------------


def text_block(text: str) -> TextContent:
    """A text content block."""
    return TextContent(text=text)


def image_block(data: str, mime_type: str, uri: str | None = None) -> ImageContent:
    """An image content block: `data` is base64, `mime_type` e.g. `image/png`."""
    return ImageContent(data=data, mime_type=mime_type, uri=UNSET if uri is None else uri)


def audio_block(data: str, mime_type: str) -> AudioContent:
    """An audio content block: `data` is base64, `mime_type` e.g. `audio/wav`."""
    return AudioContent(data=data, mime_type=mime_type)


def resource_link_block(
    uri: str,
    name: str,
    *,
    mime_type: str | None = None,
    title: str | None = None,
    description: str | None = None,
    size: int | None = None,
) -> ResourceLink:
    """A link to a resource the other side can fetch (a file, a URL)."""
    return ResourceLink(
        uri=uri,
        name=name,
        mime_type=UNSET if mime_type is None else mime_type,
        title=UNSET if title is None else title,
        description=UNSET if description is None else description,
        size=UNSET if size is None else size,
    )


# -- message chunks ---------------------------------------------------------------------


def update_agent_message(content: ContentBlock) -> SessionUpdateAgentMessageChunk:
    """A chunk of the agent's reply (`agent_message_chunk`)."""
    return SessionUpdateAgentMessageChunk(content=content)


def update_agent_message_text(text: str) -> SessionUpdateAgentMessageChunk:
    """A text chunk of the agent's reply."""
    return SessionUpdateAgentMessageChunk(content=TextContent(text=text))


def update_agent_thought(content: ContentBlock) -> SessionUpdateAgentThoughtChunk:
    """A chunk of the agent's reasoning (`agent_thought_chunk`)."""
    return SessionUpdateAgentThoughtChunk(content=content)


def update_agent_thought_text(text: str) -> SessionUpdateAgentThoughtChunk:
    """A text chunk of the agent's reasoning."""
    return SessionUpdateAgentThoughtChunk(content=TextContent(text=text))


def update_user_message(content: ContentBlock) -> SessionUpdateUserMessageChunk:
    """A chunk of the user's message (`user_message_chunk`), e.g. when a session is replayed."""
    return SessionUpdateUserMessageChunk(content=content)


def update_user_message_text(text: str) -> SessionUpdateUserMessageChunk:
    """A text chunk of the user's message."""
    return SessionUpdateUserMessageChunk(content=TextContent(text=text))


# -- tool calls -------------------------------------------------------------------------


def tool_content(content: ContentBlock) -> Content:
    """Tool call content that is a content block."""
    return Content(content=content)


def tool_diff_content(path: str, new_text: str, old_text: str | None = None) -> Diff:
    """Tool call content that is a file edit (`old_text` `None`: a new file)."""
    return Diff(path=path, new_text=new_text, old_text=UNSET if old_text is None else old_text)


def tool_terminal_content(terminal_id: str) -> Terminal:
    """Tool call content that embeds a terminal the agent created."""
    return Terminal(terminal_id=terminal_id)


def tool_location(path: str, line: int | None = None) -> ToolCallLocation:
    """A file (and line) a tool call works on."""
    return ToolCallLocation(path=path, line=UNSET if line is None else line)


def start_tool_call(
    tool_call_id: str,
    title: str,
    *,
    kind: ToolKind | None = None,
    status: ToolCallStatus | None = None,
    content: Iterable[ToolCallContent] | None = None,
    locations: Iterable[ToolCallLocation] | None = None,
) -> ToolCall:
    """Announces a tool call (`tool_call`)."""
    return ToolCall(
        tool_call_id=tool_call_id,
        title=title,
        kind=UNSET if kind is None else kind,
        status=UNSET if status is None else status,
        content=UNSET if content is None else list(content),
        locations=UNSET if locations is None else list(locations),
    )


def update_tool_call(
    tool_call_id: str,
    *,
    title: str | None | UnsetType = UNSET,
    kind: ToolKind | None | UnsetType = UNSET,
    status: ToolCallStatus | None | UnsetType = UNSET,
    content: Iterable[ToolCallContent] | None | UnsetType = UNSET,
    locations: Iterable[ToolCallLocation] | None | UnsetType = UNSET,
) -> SessionUpdateToolCallUpdate:
    """Patches a tool call (`tool_call_update`): each field given replaces the old value,
    `None` clears it, a field left out stays as it was."""
    return SessionUpdateToolCallUpdate(
        tool_call_id=tool_call_id,
        title=title,
        kind=kind,
        status=status,
        content=content if content is None or isinstance(content, UnsetType) else list(content),
        locations=locations if locations is None or isinstance(locations, UnsetType) else list(locations),
    )


# -- plans and the notification ---------------------------------------------------------


def plan_entry(
    content: str, *, priority: PlanEntryPriority = "medium", status: PlanEntryStatus = "pending"
) -> PlanEntry:
    """One step of the agent's plan."""
    return PlanEntry(content=content, priority=priority, status=status)


def update_plan(entries: Iterable[PlanEntry]) -> Plan:
    """The agent's whole plan (`plan`): every update replaces the previous one."""
    return Plan(entries=list(entries))


def session_notification(session_id: str, update: SessionUpdate) -> SessionNotification:
    """The `session/update` params for `update` in `session_id`."""
    return SessionNotification(session_id=session_id, update=update)
