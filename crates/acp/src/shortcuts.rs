//! Thin shortcuts over the generated types, for the messages every agent and client
//! writes: text content from a string, a text chunk of the agent's reply, a session
//! update sent without building its notification (a tool call, its update or a plan
//! convert into one), the text of a prompt, and a
//! client-side [`Session`](crate::Session) with `prompt("text")`.
//!
//! Nothing here bypasses the typed core: each shortcut builds the same generated
//! value a program would build by hand, and everything sent still goes through the
//! connection's checks (state, capabilities, outgoing validation).
//!
//! ```
//! use agentproto_acp::v1::*;
//!
//! let block: ContentBlock = "hello".into();
//! assert!(matches!(&block, ContentBlock::Text(text) if text.text == "hello"));
//! let update = SessionUpdate::agent_message_text("hi");
//! assert!(matches!(&update, SessionUpdate::AgentMessageChunk(chunk)
//!     if matches!(&chunk.content, ContentBlock::Text(text) if text.text == "hi")));
//! let prompt = PromptRequest::new("s1", vec!["two ".into(), "words".into()]);
//! assert_eq!(prompt.text(), "two words");
//! ```

// Each macro adds the conveniences of one type, in the generated module that writes
// that type (`codegen/agentproto_codegen/rust.py`, `SHORTCUTS`): a type two surfaces
// share gets them once, from its owner. The names resolve where the macro is invoked.

/// `TextContent` from a string.
macro_rules! text_content {
    () => {
        impl From<&str> for TextContent {
            fn from(text: &str) -> TextContent {
                TextContent::new(text)
            }
        }

        impl From<String> for TextContent {
            fn from(text: String) -> TextContent {
                TextContent::new(text)
            }
        }
    };
}
pub(crate) use text_content;

/// A text `ContentBlock` from a string, and the text of one.
macro_rules! content_block {
    () => {
        impl From<&str> for ContentBlock {
            fn from(text: &str) -> ContentBlock {
                ContentBlock::Text(TextContent::new(text))
            }
        }

        impl From<String> for ContentBlock {
            fn from(text: String) -> ContentBlock {
                ContentBlock::Text(TextContent::new(text))
            }
        }

        impl ContentBlock {
            /// A text block: `ContentBlock::Text` with nothing but `text`.
            pub fn text(text: impl Into<String>) -> ContentBlock {
                ContentBlock::Text(TextContent::new(text))
            }

            /// The text of a text block; `None` for any other kind.
            pub fn as_text(&self) -> Option<&str> {
                match self {
                    ContentBlock::Text(text) => Some(&text.text),
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use content_block;

/// A `SessionId` from a borrowed one (so `&id` can be passed where an id is wanted).
macro_rules! session_id {
    () => {
        impl From<&SessionId> for SessionId {
            fn from(id: &SessionId) -> SessionId {
                id.clone()
            }
        }
    };
}
pub(crate) use session_id;

/// The text of a prompt.
macro_rules! prompt_request {
    () => {
        impl PromptRequest {
            /// The prompt's text blocks joined in order, as one string; other kinds
            /// of blocks (images, resources, …) are left out.
            pub fn text(&self) -> String {
                self.prompt.iter().filter_map(ContentBlock::as_text).collect()
            }
        }
    };
}
pub(crate) use prompt_request;

/// A chunk of text (wire version 1: a chunk needs no message id).
macro_rules! content_chunk_v1 {
    () => {
        impl ContentChunk {
            /// A chunk of text: a text block and no message id.
            pub fn text(text: impl Into<String>) -> ContentChunk {
                ContentChunk::new(ContentBlock::text(text))
            }
        }
    };
}
pub(crate) use content_chunk_v1;

/// The text chunks of a turn as updates (wire version 1's `session/update` shapes).
macro_rules! session_update_v1 {
    () => {
        impl SessionUpdate {
            /// An `agent_message_chunk` update carrying `text`: a piece of the
            /// agent's reply.
            pub fn agent_message_text(text: impl Into<String>) -> SessionUpdate {
                SessionUpdate::AgentMessageChunk(ContentChunk::text(text))
            }

            /// An `agent_thought_chunk` update carrying `text`: a piece of the
            /// agent's reasoning.
            pub fn agent_thought_text(text: impl Into<String>) -> SessionUpdate {
                SessionUpdate::AgentThoughtChunk(ContentChunk::text(text))
            }

            /// A `user_message_chunk` update carrying `text` (an agent replaying a
            /// loaded session's history).
            pub fn user_message_text(text: impl Into<String>) -> SessionUpdate {
                SessionUpdate::UserMessageChunk(ContentChunk::text(text))
            }
        }
    };
}
pub(crate) use session_update_v1;

/// The shortcuts of the wire-version-1 connections: their `session/update` and
/// `session/new` params have the shapes these build (the draft renames and reshapes
/// both).
macro_rules! version_one {
    ($surface:ident, $marker:ident) => {
        mod $surface {
            use crate::$surface::{
                $marker, CancelNotification, ContentBlock, NewSessionRequest, PromptRequest, PromptResponse, SessionId,
                SessionNotification, SessionUpdate,
            };
            use crate::{AcpError, AgentConnection, ClientConnection, Session};

            impl ClientConnection<$marker> {
                /// Sends `session/update` for `session_id`: the generated
                /// `session_update` without building
                /// the [`SessionNotification`] by hand.
                ///
                /// # Errors
                ///
                /// As `session_update`: the connection is closed, `initialize` has not
                /// completed, or the update is invalid ([`AcpError::InvalidParams`]).
                pub async fn update(
                    &self,
                    session_id: impl Into<SessionId>,
                    update: impl Into<SessionUpdate>,
                ) -> Result<(), AcpError> {
                    self.session_update(SessionNotification::new(session_id, update.into())).await
                }
            }

            impl AgentConnection<$marker> {
                /// Sends `session/new` for `cwd` (an absolute path) with no MCP servers
                /// and returns the new [`Session`]. For other params, or to keep the
                /// answer's modes and config options, call `new_session` and
                /// [`Session::new`].
                ///
                /// # Errors
                ///
                /// As `new_session`: not initialized, the connection failed, or the
                /// agent answered with an error.
                pub async fn open_session(&self, cwd: impl Into<String>) -> Result<Session<$marker>, AcpError> {
                    let opened = self.new_session(NewSessionRequest::new(cwd, Vec::new())).await?;
                    Ok(Session::new(self.clone(), opened.session_id.0))
                }
            }

            impl Session<$marker> {
                /// Sends one prompt turn of `text` and waits for its stop reason; the
                /// turn's updates reach the client's `session_update` handler meanwhile.
                ///
                /// # Errors
                ///
                /// As `prompt`: the connection failed or the agent answered with an error.
                pub async fn prompt(&self, text: impl Into<String>) -> Result<PromptResponse, AcpError> {
                    self.prompt_blocks(vec![ContentBlock::text(text)]).await
                }

                /// Sends one prompt turn made of `blocks` and waits for its stop reason.
                ///
                /// # Errors
                ///
                /// As [`Session::prompt`].
                pub async fn prompt_blocks(&self, blocks: Vec<ContentBlock>) -> Result<PromptResponse, AcpError> {
                    self.agent().prompt(PromptRequest::new(self.id(), blocks)).await
                }

                /// Sends `session/cancel`: the running turn ends with `cancelled`.
                ///
                /// # Errors
                ///
                /// As `cancel`: the connection is closed or not initialized.
                pub async fn cancel(&self) -> Result<(), AcpError> {
                    self.agent().cancel(CancelNotification::new(self.id())).await
                }
            }
        }
    };
}

mod one {
    version_one!(v1, V1);
    #[cfg(feature = "unstable")]
    version_one!(v1_unstable, V1Unstable);
}

#[cfg(test)]
mod tests {
    use crate::v1::*;

    #[test]
    fn text_converts_into_content() {
        assert_eq!(TextContent::from("a"), TextContent::new("a"));
        assert_eq!(TextContent::from("a".to_owned()), TextContent::new("a"));
        assert_eq!(ContentBlock::from("a"), ContentBlock::Text(TextContent::new("a")));
        assert_eq!(ContentBlock::from("a".to_owned()), ContentBlock::text("a"));
        assert_eq!(ContentBlock::from(TextContent::new("a")), ContentBlock::text("a"));
        assert_eq!(ContentBlock::text("a").as_text(), Some("a"));
        let image = ContentBlock::Image(ImageContent::new("AAAA", "image/png"));
        assert_eq!(image.as_text(), None);
    }

    #[test]
    fn updates_encode_as_the_wire_form() {
        let encoded = |update: SessionUpdate| serde_json::to_string(&update).unwrap();
        assert_eq!(
            encoded(SessionUpdate::agent_message_text("hi")),
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}"#
        );
        assert_eq!(
            encoded(SessionUpdate::agent_thought_text("hm")),
            r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"}}"#
        );
        assert_eq!(
            encoded(SessionUpdate::user_message_text("yo")),
            r#"{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"yo"}}"#
        );
        assert_eq!(ContentChunk::text("x"), ContentChunk::new(ContentBlock::text("x")));
        assert_eq!(
            encoded(ToolCall::new("t1", "Edit").into()),
            r#"{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit"}"#
        );
        assert_eq!(
            encoded(ToolCallUpdate::new("t1").into()),
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"t1"}"#
        );
        assert_eq!(encoded(Plan::new(Vec::new()).into()), r#"{"sessionUpdate":"plan","entries":[]}"#);
    }

    #[test]
    fn a_prompt_text_joins_its_text_blocks_only() {
        let blocks = vec![
            ContentBlock::from("one "),
            ContentBlock::Image(ImageContent::new("AAAA", "image/png")),
            ContentBlock::from("two"),
        ];
        assert_eq!(PromptRequest::new("s1", blocks).text(), "one two");
        assert_eq!(PromptRequest::new("s1", Vec::new()).text(), "");
    }
}
