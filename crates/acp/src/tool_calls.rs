//! A client-side store of tool calls that tolerates the sequences real agents send.
//!
//! The agent reports tool calls through `session/update`: a `tool_call` update
//! creates one and `tool_call_update` patches it. In ACP v1 a patch replaces every
//! field it carries, `null` clears a field, and an absent field stays as it was.
//! Agents in the wild do not keep to the intended order: they send updates for a
//! call that was never announced, announce the same call twice, and move a call's
//! status backwards. [`ToolCallStore`] accepts all of that and keeps one
//! [`ToolCallState`] per (session id, tool call id), in the order the calls were
//! first seen, so a UI can render from it:
//!
//! * a `tool_call` for an unknown id creates the call ([`ChangeKind::Created`]);
//! * a `tool_call` for a known id is an upsert: every field it carries replaces the
//!   old value, absent optional fields are kept ([`ChangeKind::Repeated`], or
//!   [`ChangeKind::Announced`] when the call was so far known only from updates);
//! * a `tool_call_update` for a known id patches it ([`ChangeKind::Updated`]);
//! * a `tool_call_update` for an unknown id creates the call from what the update
//!   carries, with an empty title until one is sent, and sets
//!   [`ToolCallState::created_by_update`] ([`ChangeKind::CreatedFromUpdate`]).
//!
//! Status changes are applied as sent, even backwards; [`Change::status_regressed`]
//! tells a UI that one happened. `session/request_permission` carries a tool call
//! update too (sometimes for a call that was never announced); pass it to
//! [`ToolCallStore::apply_tool_call_update`].
//!
//! ACP v1 has no `cancelled` status. A client that cancels a turn SHOULD mark its
//! unfinished tool calls as cancelled; [`ToolCallStore::mark_cancelled`] sets
//! [`ToolCallState::cancelled`] on every call of the session that is not
//! `completed` or `failed`, and leaves `status` as the agent reported it.
//!
//! The store grows with every new id it sees; call
//! [`ToolCallStore::remove_session`] when a session ends.

use std::collections::HashMap;

use crate::v1::{
    SessionNotification, SessionUpdate, ToolCall, ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolKind,
};
use crate::{MaybeUndefined, RawJson};
use agentproto_codec::RawObject;

/// What the client knows about one tool call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallState {
    /// The id, unique within its session.
    pub tool_call_id: ToolCallId,
    /// The human-readable title; empty while the call is known only from updates
    /// that carried none.
    pub title: String,
    /// The programmatic name of the tool, if sent.
    pub name: Option<String>,
    /// The category of tool (`other` when not sent).
    pub kind: ToolKind,
    /// The status as the agent last reported it (`pending` when not sent).
    pub status: ToolCallStatus,
    /// The content produced so far (empty when not sent).
    pub content: Vec<ToolCallContent>,
    /// The file locations involved (empty when not sent).
    pub locations: Vec<ToolCallLocation>,
    /// The raw input of the tool, verbatim; a JSON `null` clears it.
    pub raw_input: Option<RawJson>,
    /// The raw output of the tool, verbatim; a JSON `null` clears it.
    pub raw_output: Option<RawJson>,
    /// The `_meta` of the last message that carried one.
    pub meta: Option<RawObject>,
    /// The first message seen for this id was a `tool_call_update`, not a `tool_call`.
    /// Stays set once the `tool_call` arrives.
    pub created_by_update: bool,
    /// How many `tool_call` messages were applied (more than one is a repeat).
    pub tool_calls: u32,
    /// How many `tool_call_update` messages were applied.
    pub updates: u32,
    /// The client cancelled the turn while this call was unfinished
    /// ([`ToolCallStore::mark_cancelled`]). A later update does not clear it.
    pub cancelled: bool,
}

impl ToolCallState {
    /// A call with every field at its schema default.
    fn empty(tool_call_id: ToolCallId) -> ToolCallState {
        ToolCallState {
            tool_call_id,
            title: String::new(),
            name: None,
            kind: ToolKind::Other,
            status: ToolCallStatus::Pending,
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: None,
            raw_output: None,
            meta: None,
            created_by_update: false,
            tool_calls: 0,
            updates: 0,
            cancelled: false,
        }
    }

    /// Whether the status is `completed` or `failed`.
    pub fn is_finished(&self) -> bool {
        matches!(self.status, ToolCallStatus::Completed | ToolCallStatus::Failed)
    }

    /// Applies a `tool_call`: the title and every optional field it carries replace
    /// the old values; `name: null` clears the name.
    fn upsert(&mut self, tool_call: &ToolCall) {
        self.tool_calls = self.tool_calls.saturating_add(1);
        self.title.clone_from(&tool_call.title);
        patch(&mut self.name, &tool_call.name);
        if let Some(kind) = tool_call.kind {
            self.kind = kind;
        }
        if let Some(status) = tool_call.status {
            self.status = status;
        }
        if let Some(content) = &tool_call.content {
            self.content.clone_from(content);
        }
        if let Some(locations) = &tool_call.locations {
            self.locations.clone_from(locations);
        }
        replace_raw(&mut self.raw_input, tool_call.raw_input.as_ref());
        replace_raw(&mut self.raw_output, tool_call.raw_output.as_ref());
        patch(&mut self.meta, &tool_call.meta);
    }

    /// Applies a `tool_call_update`: a value replaces, `null` resets the field to
    /// its default (empty title, no name, `other`, `pending`, empty lists), absent
    /// leaves it.
    fn patch(&mut self, update: &ToolCallUpdate) {
        self.updates = self.updates.saturating_add(1);
        patch_or_default(&mut self.title, &update.title, String::new);
        patch(&mut self.name, &update.name);
        patch_or_default(&mut self.kind, &update.kind, || ToolKind::Other);
        patch_or_default(&mut self.status, &update.status, || ToolCallStatus::Pending);
        patch_or_default(&mut self.content, &update.content, Vec::new);
        patch_or_default(&mut self.locations, &update.locations, Vec::new);
        replace_raw(&mut self.raw_input, update.raw_input.as_ref());
        replace_raw(&mut self.raw_output, update.raw_output.as_ref());
        patch(&mut self.meta, &update.meta);
    }
}

/// A value replaces, `null` clears, absent keeps.
fn patch<T: Clone>(slot: &mut Option<T>, field: &MaybeUndefined<T>) {
    match field {
        MaybeUndefined::Undefined => {}
        MaybeUndefined::Null => *slot = None,
        MaybeUndefined::Value(value) => *slot = Some(value.clone()),
    }
}

/// A value replaces, `null` resets to the default, absent keeps.
fn patch_or_default<T: Clone>(slot: &mut T, field: &MaybeUndefined<T>, default: impl FnOnce() -> T) {
    match field {
        MaybeUndefined::Undefined => {}
        MaybeUndefined::Null => *slot = default(),
        MaybeUndefined::Value(value) => slot.clone_from(value),
    }
}

/// A raw value replaces; the JSON `null` clears.
fn replace_raw(slot: &mut Option<RawJson>, field: Option<&RawJson>) {
    if let Some(raw) = field {
        *slot = if raw.get().trim() == "null" { None } else { Some(raw.clone()) };
    }
}

/// What an applied message did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChangeKind {
    /// A `tool_call` created a new call.
    Created,
    /// A `tool_call` repeated an id already announced by a `tool_call`; it was
    /// merged as an upsert.
    Repeated,
    /// A `tool_call` arrived for a call so far known only from updates; it was
    /// merged as an upsert.
    Announced,
    /// A `tool_call_update` patched a known call.
    Updated,
    /// A `tool_call_update` arrived for an unknown id and created the call.
    CreatedFromUpdate,
}

impl ChangeKind {
    /// Whether the call did not exist before (a UI adds a row).
    pub fn is_new(self) -> bool {
        matches!(self, Self::Created | Self::CreatedFromUpdate)
    }

    /// Whether the message broke the intended order (`tool_call` once, then updates).
    pub fn is_out_of_order(self) -> bool {
        matches!(self, Self::Repeated | Self::Announced | Self::CreatedFromUpdate)
    }
}

/// The effect of one applied message, with the call's state after it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change<'a> {
    /// What happened.
    pub kind: ChangeKind,
    /// The status before the message (`None` when the call is new).
    pub previous_status: Option<ToolCallStatus>,
    /// The call as it is now.
    pub state: &'a ToolCallState,
}

impl Change<'_> {
    /// Whether the status changed (a new call counts as changed).
    pub fn status_changed(&self) -> bool {
        self.previous_status != Some(self.state.status)
    }

    /// Whether the status moved backwards: to an earlier step of
    /// `pending → in_progress → completed | failed`, or from one final status to
    /// the other. The store applies it anyway.
    pub fn status_regressed(&self) -> bool {
        let Some(previous) = self.previous_status else { return false };
        let (before, after) = (status_rank(previous), status_rank(self.state.status));
        after < before || (before == 2 && previous != self.state.status)
    }
}

fn status_rank(status: ToolCallStatus) -> u8 {
    match status {
        ToolCallStatus::Pending => 0,
        ToolCallStatus::InProgress => 1,
        ToolCallStatus::Completed | ToolCallStatus::Failed => 2,
    }
}

/// The calls of one session, in first-seen order.
#[derive(Debug, Default, Clone)]
struct SessionCalls {
    calls: Vec<ToolCallState>,
    index: HashMap<String, usize>,
}

impl SessionCalls {
    /// The position of `id`, creating an empty call there when it is unknown.
    fn position_or_insert(&mut self, id: &ToolCallId) -> (usize, bool) {
        if let Some(&position) = self.index.get(id.as_str()) {
            return (position, false);
        }
        let position = self.calls.len();
        self.calls.push(ToolCallState::empty(id.clone()));
        self.index.insert(id.as_str().to_owned(), position);
        (position, true)
    }
}

/// Tool calls keyed by (session id, tool call id), each session in first-seen order.
#[derive(Debug, Default, Clone)]
pub struct ToolCallStore {
    sessions: HashMap<String, SessionCalls>,
    len: usize,
}

impl ToolCallStore {
    /// An empty store.
    pub fn new() -> ToolCallStore {
        ToolCallStore::default()
    }

    /// Applies a `session/update` notification. Updates other than `tool_call` and
    /// `tool_call_update` (including unknown ones) are ignored and give `None`.
    pub fn apply(&mut self, notification: &SessionNotification) -> Option<Change<'_>> {
        self.apply_update(notification.session_id.as_str(), &notification.update)
    }

    /// Applies one session update of session `session_id`; see [`ToolCallStore::apply`].
    pub fn apply_update(&mut self, session_id: &str, update: &SessionUpdate) -> Option<Change<'_>> {
        match update {
            SessionUpdate::ToolCall(tool_call) => Some(self.apply_tool_call(session_id, tool_call)),
            SessionUpdate::ToolCallUpdate(update) => Some(self.apply_tool_call_update(session_id, update)),
            _ => None,
        }
    }

    /// Applies a `tool_call`: creates the call, or merges it into the known one.
    pub fn apply_tool_call(&mut self, session_id: &str, tool_call: &ToolCall) -> Change<'_> {
        let (state, created) = self.entry(session_id, &tool_call.tool_call_id);
        let previous_status = (!created).then_some(state.status);
        let kind = if created {
            ChangeKind::Created
        } else if state.tool_calls == 0 {
            ChangeKind::Announced
        } else {
            ChangeKind::Repeated
        };
        state.upsert(tool_call);
        Change { kind, previous_status, state }
    }

    /// Applies a `tool_call_update` (from `session/update`, or the `toolCall` of a
    /// `session/request_permission`): patches the known call, or creates one.
    pub fn apply_tool_call_update(&mut self, session_id: &str, update: &ToolCallUpdate) -> Change<'_> {
        let (state, created) = self.entry(session_id, &update.tool_call_id);
        let previous_status = (!created).then_some(state.status);
        state.created_by_update |= created;
        state.patch(update);
        let kind = if created { ChangeKind::CreatedFromUpdate } else { ChangeKind::Updated };
        Change { kind, previous_status, state }
    }

    /// The call `tool_call_id` of session `session_id`, creating an empty one when
    /// unknown (`true` then).
    fn entry(&mut self, session_id: &str, tool_call_id: &ToolCallId) -> (&mut ToolCallState, bool) {
        let calls = self.sessions.entry(session_id.to_owned()).or_default();
        let (position, created) = calls.position_or_insert(tool_call_id);
        if created {
            self.len += 1;
        }
        (&mut calls.calls[position], created)
    }

    /// The call `tool_call_id` of session `session_id`.
    pub fn get(&self, session_id: &str, tool_call_id: &str) -> Option<&ToolCallState> {
        let calls = self.sessions.get(session_id)?;
        calls.index.get(tool_call_id).and_then(|&position| calls.calls.get(position))
    }

    /// The calls of session `session_id`, in the order they were first seen.
    pub fn iter(&self, session_id: &str) -> impl Iterator<Item = &ToolCallState> + '_ {
        self.sessions.get(session_id).into_iter().flat_map(|calls| calls.calls.iter())
    }

    /// The ids of the sessions that have calls, in no particular order.
    pub fn sessions(&self) -> impl Iterator<Item = &str> + '_ {
        self.sessions.keys().map(String::as_str)
    }

    /// Sets [`ToolCallState::cancelled`] on every call of the session that is not
    /// `completed` or `failed`, and returns how many calls were newly marked.
    pub fn mark_cancelled(&mut self, session_id: &str) -> usize {
        let Some(calls) = self.sessions.get_mut(session_id) else { return 0 };
        let mut marked = 0;
        for state in calls.calls.iter_mut().filter(|state| !state.is_finished() && !state.cancelled) {
            state.cancelled = true;
            marked += 1;
        }
        marked
    }

    /// Forgets one call and returns it.
    pub fn remove(&mut self, session_id: &str, tool_call_id: &str) -> Option<ToolCallState> {
        let calls = self.sessions.get_mut(session_id)?;
        let position = calls.index.remove(tool_call_id)?;
        let state = calls.calls.remove(position);
        for later in calls.index.values_mut().filter(|later| **later > position) {
            *later -= 1;
        }
        if calls.calls.is_empty() {
            self.sessions.remove(session_id);
        }
        self.len -= 1;
        Some(state)
    }

    /// Forgets a session and returns its calls in first-seen order (empty when unknown).
    pub fn remove_session(&mut self, session_id: &str) -> Vec<ToolCallState> {
        let calls = self.sessions.remove(session_id).map(|calls| calls.calls).unwrap_or_default();
        self.len -= calls.len();
        calls
    }

    /// The number of calls over all sessions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the store holds no call.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::{ContentBlock, ContentChunk};

    fn tool_call(id: &str, title: &str) -> ToolCall {
        ToolCall {
            tool_call_id: id.into(),
            title: title.to_owned(),
            name: MaybeUndefined::Undefined,
            kind: None,
            status: None,
            content: None,
            locations: None,
            raw_input: None,
            raw_output: None,
            meta: MaybeUndefined::Undefined,
        }
    }

    fn update(id: &str) -> ToolCallUpdate {
        ToolCallUpdate {
            tool_call_id: id.into(),
            kind: MaybeUndefined::Undefined,
            status: MaybeUndefined::Undefined,
            title: MaybeUndefined::Undefined,
            name: MaybeUndefined::Undefined,
            content: MaybeUndefined::Undefined,
            locations: MaybeUndefined::Undefined,
            raw_input: None,
            raw_output: None,
            meta: MaybeUndefined::Undefined,
        }
    }

    fn notification(session: &str, update: SessionUpdate) -> SessionNotification {
        SessionNotification { session_id: session.into(), update, meta: MaybeUndefined::Undefined }
    }

    fn location(path: &str) -> ToolCallLocation {
        ToolCallLocation { path: path.to_owned(), line: MaybeUndefined::Undefined, meta: MaybeUndefined::Undefined }
    }

    fn raw(text: &str) -> RawJson {
        RawJson::from_text(text).unwrap()
    }

    fn text_content(text: &str) -> ToolCallContent {
        let json = format!(r#"{{"type":"content","content":{{"type":"text","text":{text:?}}}}}"#);
        serde_json::from_str(&json).unwrap()
    }

    /// Applies `update` to session `s1` and returns the change kind and a copy of the state.
    fn check(store: &mut ToolCallStore, update: SessionUpdate) -> (ChangeKind, ToolCallState) {
        let change = store.apply(&notification("s1", update)).expect("a tool-call update");
        (change.kind, change.state.clone())
    }

    #[test]
    fn tool_call_creates_with_schema_defaults() {
        let mut store = ToolCallStore::new();
        let (kind, state) = check(&mut store, SessionUpdate::ToolCall(tool_call("c1", "Reading main.rs")));
        assert_eq!(kind, ChangeKind::Created);
        assert_eq!(state.title, "Reading main.rs");
        assert_eq!(state.kind, ToolKind::Other);
        assert_eq!(state.status, ToolCallStatus::Pending);
        assert!(state.content.is_empty() && state.locations.is_empty());
        assert_eq!((state.name.as_deref(), state.raw_input.as_ref(), state.meta.as_ref()), (None, None, None));
        assert_eq!((state.created_by_update, state.tool_calls, state.updates, state.cancelled), (false, 1, 0, false));
        assert_eq!(store.get("s1", "c1"), Some(&state));
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn tool_call_keeps_every_field_it_carries() {
        let mut store = ToolCallStore::new();
        let mut call = tool_call("c1", "Edit");
        call.name = MaybeUndefined::Value("edit_file".into());
        call.kind = Some(ToolKind::Edit);
        call.status = Some(ToolCallStatus::InProgress);
        call.content = Some(vec![text_content("x")]);
        call.locations = Some(vec![location("/a")]);
        call.raw_input = Some(raw(r#"{"path":"/a"}"#));
        call.raw_output = Some(raw("[1]"));
        call.meta = MaybeUndefined::Value(RawObject::from_value(&serde_json::json!({"k": 1})).unwrap());
        let (_, state) = check(&mut store, SessionUpdate::ToolCall(call));
        assert_eq!(state.name.as_deref(), Some("edit_file"));
        assert_eq!((state.kind, state.status), (ToolKind::Edit, ToolCallStatus::InProgress));
        assert_eq!(state.content, vec![text_content("x")]);
        assert_eq!(state.locations, vec![location("/a")]);
        assert_eq!(state.raw_input.as_ref().map(RawJson::get), Some(r#"{"path":"/a"}"#));
        assert_eq!(state.raw_output.as_ref().map(RawJson::get), Some("[1]"));
        assert_eq!(state.meta.as_ref().map(|meta| meta.get()), Some(r#"{"k":1}"#));
    }

    #[test]
    fn other_updates_are_ignored() {
        let mut store = ToolCallStore::new();
        let chunk = ContentChunk {
            content: ContentBlock::Unknown(raw(r#"{"type":"future"}"#)),
            message_id: MaybeUndefined::Undefined,
            meta: MaybeUndefined::Undefined,
        };
        assert!(store.apply(&notification("s1", SessionUpdate::AgentMessageChunk(chunk))).is_none());
        let unknown = raw(r#"{"sessionUpdate":"future_thing","toolCallId":"c1"}"#);
        assert!(store.apply(&notification("s1", SessionUpdate::Unknown(unknown))).is_none());
        assert!(store.is_empty());
        assert_eq!(store.sessions().count(), 0);
    }

    #[test]
    fn repeated_tool_call_is_an_upsert() {
        let mut store = ToolCallStore::new();
        let mut first = tool_call("c1", "Reading");
        first.kind = Some(ToolKind::Read);
        first.name = MaybeUndefined::Value("read".into());
        first.locations = Some(vec![location("/a")]);
        first.raw_input = Some(raw(r#"{"a":1}"#));
        check(&mut store, SessionUpdate::ToolCall(first));

        let mut again = tool_call("c1", "Reading /a");
        again.status = Some(ToolCallStatus::InProgress);
        again.locations = Some(vec![location("/b")]);
        let (kind, state) = check(&mut store, SessionUpdate::ToolCall(again));
        assert_eq!(kind, ChangeKind::Repeated);
        assert!(kind.is_out_of_order() && !kind.is_new());
        assert_eq!(state.title, "Reading /a");
        assert_eq!(state.status, ToolCallStatus::InProgress);
        assert_eq!(state.locations, vec![location("/b")]);
        // Fields the repeat did not carry are kept.
        assert_eq!(state.kind, ToolKind::Read);
        assert_eq!(state.name.as_deref(), Some("read"));
        assert_eq!(state.raw_input.as_ref().map(RawJson::get), Some(r#"{"a":1}"#));
        assert_eq!(state.tool_calls, 2);
        assert_eq!(store.len(), 1);

        let mut clearing = tool_call("c1", "Reading /a");
        clearing.name = MaybeUndefined::Null;
        let (_, state) = check(&mut store, SessionUpdate::ToolCall(clearing));
        assert_eq!(state.name, None);
    }

    #[test]
    fn update_replaces_present_fields_and_keeps_absent_ones() {
        let mut store = ToolCallStore::new();
        let mut call = tool_call("c1", "Run");
        call.kind = Some(ToolKind::Execute);
        call.content = Some(vec![text_content("old")]);
        call.raw_input = Some(raw(r#"{"cmd":"ls"}"#));
        check(&mut store, SessionUpdate::ToolCall(call));

        let mut patch = update("c1");
        patch.status = MaybeUndefined::Value(ToolCallStatus::Completed);
        patch.content = MaybeUndefined::Value(vec![text_content("new"), text_content("more")]);
        patch.raw_output = Some(raw(r#""done""#));
        let change = store.apply(&notification("s1", SessionUpdate::ToolCallUpdate(patch))).unwrap();
        assert_eq!(change.kind, ChangeKind::Updated);
        assert_eq!(change.previous_status, Some(ToolCallStatus::Pending));
        assert!(change.status_changed() && !change.status_regressed());
        let state = change.state;
        assert_eq!(state.status, ToolCallStatus::Completed);
        assert_eq!(state.content, vec![text_content("new"), text_content("more")]);
        assert_eq!(state.raw_output.as_ref().map(RawJson::get), Some(r#""done""#));
        assert_eq!(state.title, "Run");
        assert_eq!(state.kind, ToolKind::Execute);
        assert_eq!(state.raw_input.as_ref().map(RawJson::get), Some(r#"{"cmd":"ls"}"#));
        assert_eq!((state.tool_calls, state.updates), (1, 1));
    }

    #[test]
    fn update_null_clears_fields() {
        let mut store = ToolCallStore::new();
        let mut call = tool_call("c1", "Edit");
        call.name = MaybeUndefined::Value("edit".into());
        call.kind = Some(ToolKind::Edit);
        call.status = Some(ToolCallStatus::InProgress);
        call.content = Some(vec![text_content("x")]);
        call.locations = Some(vec![location("/a")]);
        call.raw_input = Some(raw("{}"));
        call.raw_output = Some(raw("{}"));
        call.meta = MaybeUndefined::Value(RawObject::from_value(&serde_json::json!({})).unwrap());
        check(&mut store, SessionUpdate::ToolCall(call));

        let patch = ToolCallUpdate {
            tool_call_id: "c1".into(),
            kind: MaybeUndefined::Null,
            status: MaybeUndefined::Null,
            title: MaybeUndefined::Null,
            name: MaybeUndefined::Null,
            content: MaybeUndefined::Null,
            locations: MaybeUndefined::Null,
            raw_input: Some(raw("null")),
            raw_output: Some(raw("null")),
            meta: MaybeUndefined::Null,
        };
        let (_, state) = check(&mut store, SessionUpdate::ToolCallUpdate(patch));
        let mut expected = ToolCallState::empty("c1".into());
        expected.tool_calls = 1;
        expected.updates = 1;
        assert_eq!(state, expected);
    }

    #[test]
    fn update_before_tool_call_creates_a_flagged_entry() {
        let mut store = ToolCallStore::new();
        let mut early = update("c1");
        early.status = MaybeUndefined::Value(ToolCallStatus::InProgress);
        let change = store.apply(&notification("s1", SessionUpdate::ToolCallUpdate(early))).unwrap();
        assert_eq!(change.kind, ChangeKind::CreatedFromUpdate);
        assert!(change.kind.is_new() && change.kind.is_out_of_order());
        assert_eq!(change.previous_status, None);
        assert!(change.status_changed());
        let state = change.state.clone();
        assert_eq!(state.title, "");
        assert_eq!(state.kind, ToolKind::Other);
        assert_eq!(state.status, ToolCallStatus::InProgress);
        assert!(state.created_by_update);
        assert_eq!((state.tool_calls, state.updates), (0, 1));

        let (kind, state) = check(&mut store, SessionUpdate::ToolCall(tool_call("c1", "Late title")));
        assert_eq!(kind, ChangeKind::Announced);
        assert_eq!(state.title, "Late title");
        // The tool_call carried no status, so the one from the update stays.
        assert_eq!(state.status, ToolCallStatus::InProgress);
        assert!(state.created_by_update);
        assert_eq!((state.tool_calls, state.updates), (1, 1));

        let (kind, _) = check(&mut store, SessionUpdate::ToolCall(tool_call("c1", "Again")));
        assert_eq!(kind, ChangeKind::Repeated);
    }

    #[test]
    fn update_for_unknown_id_takes_the_title_it_carries() {
        let mut store = ToolCallStore::new();
        let mut early = update("c1");
        early.title = MaybeUndefined::Value("From permission".into());
        early.kind = MaybeUndefined::Value(ToolKind::Delete);
        let change = store.apply_tool_call_update("s1", &early);
        assert_eq!(change.kind, ChangeKind::CreatedFromUpdate);
        assert_eq!((change.state.title.as_str(), change.state.kind), ("From permission", ToolKind::Delete));
    }

    #[test]
    fn status_regression_is_applied_and_reported() {
        let mut store = ToolCallStore::new();
        check(&mut store, SessionUpdate::ToolCall(tool_call("c1", "t")));
        let steps = [
            (ToolCallStatus::InProgress, false),
            (ToolCallStatus::InProgress, false),
            (ToolCallStatus::Pending, true),
            (ToolCallStatus::Completed, false),
            (ToolCallStatus::Failed, true),
            (ToolCallStatus::InProgress, true),
        ];
        for (status, regressed) in steps {
            let mut patch = update("c1");
            patch.status = MaybeUndefined::Value(status);
            let change = store.apply_tool_call_update("s1", &patch);
            assert_eq!(change.state.status, status);
            assert_eq!(change.status_regressed(), regressed, "to {status:?}");
        }
        let mut patch = update("c1");
        patch.title = MaybeUndefined::Value("no status".into());
        let change = store.apply_tool_call_update("s1", &patch);
        assert!(!change.status_changed() && !change.status_regressed());
    }

    #[test]
    fn sessions_are_kept_apart() {
        let mut store = ToolCallStore::new();
        store.apply(&notification("s1", SessionUpdate::ToolCall(tool_call("c1", "one"))));
        let change = store.apply(&notification("s2", SessionUpdate::ToolCall(tool_call("c1", "two")))).unwrap();
        assert_eq!(change.kind, ChangeKind::Created);
        assert_eq!(store.get("s1", "c1").map(|state| state.title.as_str()), Some("one"));
        assert_eq!(store.get("s2", "c1").map(|state| state.title.as_str()), Some("two"));
        assert_eq!(store.get("s3", "c1"), None);
        assert_eq!(store.len(), 2);
        let mut sessions: Vec<_> = store.sessions().collect();
        sessions.sort_unstable();
        assert_eq!(sessions, ["s1", "s2"]);
    }

    #[test]
    fn iter_yields_first_seen_order() {
        let mut store = ToolCallStore::new();
        store.apply_tool_call_update("s1", &update("b"));
        store.apply_tool_call("s1", &tool_call("a", "a"));
        store.apply_tool_call("s1", &tool_call("c", "c"));
        store.apply_tool_call("s1", &tool_call("b", "b"));
        store.apply_tool_call_update("s1", &update("a"));
        let ids: Vec<_> = store.iter("s1").map(|state| state.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["b", "a", "c"]);
        assert_eq!(store.iter("unknown").count(), 0);
    }

    #[test]
    fn mark_cancelled_flags_unfinished_calls_only() {
        let mut store = ToolCallStore::new();
        for (id, status) in [
            ("pending", ToolCallStatus::Pending),
            ("running", ToolCallStatus::InProgress),
            ("done", ToolCallStatus::Completed),
            ("failed", ToolCallStatus::Failed),
        ] {
            let mut call = tool_call(id, id);
            call.status = Some(status);
            store.apply_tool_call("s1", &call);
        }
        store.apply_tool_call("s2", &tool_call("other", "other"));
        assert_eq!(store.mark_cancelled("s1"), 2);
        assert_eq!(store.mark_cancelled("s1"), 0);
        assert_eq!(store.mark_cancelled("unknown"), 0);
        let cancelled: Vec<_> =
            store.iter("s1").filter(|state| state.cancelled).map(|state| state.tool_call_id.as_str()).collect();
        assert_eq!(cancelled, ["pending", "running"]);
        assert_eq!(store.get("s1", "running").map(|state| state.status), Some(ToolCallStatus::InProgress));
        assert_eq!(store.get("s2", "other").map(|state| state.cancelled), Some(false));

        // A late update is still applied and the flag stays.
        let mut late = update("running");
        late.status = MaybeUndefined::Value(ToolCallStatus::Failed);
        let change = store.apply_tool_call_update("s1", &late);
        assert!(change.state.cancelled && change.state.is_finished());
    }

    #[test]
    fn remove_and_remove_session() {
        let mut store = ToolCallStore::new();
        for id in ["a", "b", "c"] {
            store.apply_tool_call("s1", &tool_call(id, id));
        }
        store.apply_tool_call("s2", &tool_call("x", "x"));
        assert_eq!(store.remove("s1", "b").map(|state| state.title), Some("b".to_owned()));
        assert_eq!(store.remove("s1", "b"), None);
        assert_eq!(store.get("s1", "c").map(|state| state.title.as_str()), Some("c"));
        let ids: Vec<_> = store.iter("s1").map(|state| state.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!(store.len(), 3);

        let removed: Vec<_> = store.remove_session("s1").into_iter().map(|state| state.title).collect();
        assert_eq!(removed, ["a", "c"]);
        assert!(store.remove_session("s1").is_empty());
        assert_eq!(store.len(), 1);
        assert_eq!(store.remove("s2", "x").map(|state| state.title), Some("x".to_owned()));
        assert!(store.is_empty());
        assert_eq!(store.sessions().count(), 0);
    }

    #[test]
    fn decoded_wire_messages_apply() {
        let mut store = ToolCallStore::new();
        let lines = [
            r#"{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}}"#,
            r#"{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read","kind":"read","locations":[{"path":"/r/a.rs","line":1}]}}"#,
            r#"{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","locations":null,"rawOutput":{"ok":true}}}"#,
        ];
        let kinds: Vec<_> = lines
            .iter()
            .map(|line| {
                let notification = agentproto_codec::decode::<SessionNotification>(line, "$.params").unwrap().value;
                store.apply(&notification).unwrap().kind
            })
            .collect();
        assert_eq!(kinds, [ChangeKind::CreatedFromUpdate, ChangeKind::Announced, ChangeKind::Updated]);
        let state = store.get("s1", "c1").unwrap();
        assert_eq!(
            (state.title.as_str(), state.kind, state.status),
            ("Read", ToolKind::Read, ToolCallStatus::Completed)
        );
        assert!(state.locations.is_empty());
        assert_eq!(state.raw_output.as_ref().map(RawJson::get), Some(r#"{"ok":true}"#));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Create { session: usize, id: usize, title: String, status: Option<ToolCallStatus> },
            Update { session: usize, id: usize, title: MaybeUndefined<String>, status: MaybeUndefined<ToolCallStatus> },
        }

        fn status() -> impl Strategy<Value = ToolCallStatus> {
            prop::sample::select(vec![
                ToolCallStatus::Pending,
                ToolCallStatus::InProgress,
                ToolCallStatus::Completed,
                ToolCallStatus::Failed,
            ])
        }

        fn maybe<T: std::fmt::Debug + Clone>(
            value: impl Strategy<Value = T>,
        ) -> impl Strategy<Value = MaybeUndefined<T>> {
            prop_oneof![
                Just(MaybeUndefined::Undefined),
                Just(MaybeUndefined::Null),
                value.prop_map(MaybeUndefined::Value),
            ]
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                (0..2usize, 0..4usize, "[a-c]{0,2}", proptest::option::of(status()))
                    .prop_map(|(session, id, title, status)| Op::Create { session, id, title, status }),
                (0..2usize, 0..4usize, maybe("[a-c]{0,2}"), maybe(status()))
                    .prop_map(|(session, id, title, status)| Op::Update { session, id, title, status }),
            ]
        }

        const SESSIONS: [&str; 2] = ["s0", "s1"];
        const IDS: [&str; 4] = ["t0", "t1", "t2", "t3"];

        proptest! {
            #[test]
            fn any_sequence_keeps_one_entry_per_id(ops in proptest::collection::vec(op(), 0..40)) {
                let mut store = ToolCallStore::new();
                // Per session: ids in first-seen order, and what the first message was.
                let mut seen: [Vec<(usize, bool)>; 2] = [Vec::new(), Vec::new()];
                for op in &ops {
                    let (session, id, is_update) = match op {
                        Op::Create { session, id, title, status } => {
                            let mut call = tool_call(IDS[*id], title);
                            call.status = *status;
                            let change = store.apply(&notification(SESSIONS[*session], SessionUpdate::ToolCall(call)));
                            let change = change.expect("a tool call is applied");
                            prop_assert_eq!(&change.state.title, title);
                            if let Some(status) = status {
                                prop_assert_eq!(change.state.status, *status);
                            }
                            (*session, *id, false)
                        }
                        Op::Update { session, id, title, status } => {
                            let mut patch = update(IDS[*id]);
                            patch.title = title.clone();
                            patch.status = *status;
                            let before = store.get(SESSIONS[*session], IDS[*id]).cloned();
                            let change = store.apply_tool_call_update(SESSIONS[*session], &patch);
                            let expected_title = match title {
                                MaybeUndefined::Undefined => before.map(|state| state.title).unwrap_or_default(),
                                MaybeUndefined::Null => String::new(),
                                MaybeUndefined::Value(title) => title.clone(),
                            };
                            prop_assert_eq!(&change.state.title, &expected_title);
                            (*session, *id, true)
                        }
                    };
                    if !seen[session].iter().any(|&(seen_id, _)| seen_id == id) {
                        seen[session].push((id, is_update));
                    }
                }
                let mut total = 0;
                for (session, expected) in seen.iter().enumerate() {
                    let states: Vec<_> = store.iter(SESSIONS[session]).collect();
                    let ids: Vec<_> = states.iter().map(|state| state.tool_call_id.as_str()).collect();
                    let expected_ids: Vec<_> = expected.iter().map(|&(id, _)| IDS[id]).collect();
                    prop_assert_eq!(ids, expected_ids);
                    for (state, &(id, first_was_update)) in states.iter().zip(expected) {
                        prop_assert_eq!(state.created_by_update, first_was_update);
                        prop_assert_eq!(store.get(SESSIONS[session], IDS[id]), Some(*state));
                    }
                    total += states.len();
                }
                prop_assert_eq!(store.len(), total);
                let created = ops.iter().filter(|op| matches!(op, Op::Create { .. })).count();
                let updates = ops.len() - created;
                let counted: u32 = SESSIONS.iter().flat_map(|session| store.iter(session)).map(|state| state.tool_calls).sum();
                prop_assert_eq!(counted as usize, created);
                let counted: u32 = SESSIONS.iter().flat_map(|session| store.iter(session)).map(|state| state.updates).sum();
                prop_assert_eq!(counted as usize, updates);
            }
        }
    }
}
