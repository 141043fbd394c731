//! Typed calls of our roles, started by method name: the client application calling
//! the agent ([`call_agent`]) and the agent application calling the client
//! ([`call_client`]), each through the SDK's public typed API.

use std::future::Future;
use std::pin::Pin;

use agentproto_acp::v1::*;
use agentproto_acp::RawJson;
use serde::Deserialize;
use serde_json::Value;

/// The result of a call that succeeded, re-encoded with the SDK's own encoder
/// (the one its runtime sends with).
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    /// The schema type the result was decoded as (`None` for an extension method).
    pub(crate) type_name: Option<&'static str>,
    /// Its encoding.
    pub(crate) bytes: Vec<u8>,
}

impl Answer {
    /// The encoding as a JSON value.
    pub(crate) fn value(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }
}

/// How a typed call ended.
pub(crate) type CallEnd = Result<Answer, Box<AcpError>>;

/// A typed call, not started until polled.
pub(crate) type CallFuture = Pin<Box<dyn Future<Output = CallEnd> + Send>>;

fn parse<T: for<'de> Deserialize<'de>>(params: &Value, method: &str) -> Result<T, String> {
    serde_json::from_str(&params.to_string())
        .map_err(|e| format!("the params of the `{method}` call do not decode: {e}"))
}

/// The last segment of a Rust type's path: the generated types bear their schema names.
fn short_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

fn encoded<T: serde::Serialize>(result: Result<T, AcpError>) -> CallEnd {
    let value = result.map_err(Box::new)?;
    let bytes = serde_json::to_vec(&value).unwrap_or_else(|e| format!("\"cannot encode: {e}\"").into_bytes());
    Ok(Answer { type_name: Some(short_name::<T>()), bytes })
}

fn raw_answer(result: Result<RawJson, AcpError>) -> CallEnd {
    result.map(|raw| Answer { type_name: None, bytes: raw.get().as_bytes().to_vec() }).map_err(Box::new)
}

fn ext_params(params: &Value) -> Result<Option<RawJson>, String> {
    match params {
        Value::Null => Ok(None),
        other => RawJson::from_text(&other.to_string()).map(Some).map_err(|e| e.to_string()),
    }
}

/// Matches a method name to the typed call of `$handle` that sends it; extension
/// methods (`_…`) go through `ext_method`, and `$notify` lists notifications.
macro_rules! typed_calls {
    ($handle:ident, $method:ident, $params:ident; $($name:literal => $call:ident),* $(,)?; $($notify:literal => $note:ident),* $(,)?) => {
        match $method {
            $($name => {
                let params = parse($params, $method)?;
                Box::pin(async move { encoded($handle.$call(params).await) }) as CallFuture
            })*
            $($notify => {
                let params = parse($params, $method)?;
                Box::pin(async move {
                    $handle
                        .$note(params)
                        .await
                        .map(|()| Answer { type_name: None, bytes: b"null".to_vec() })
                        .map_err(Box::new)
                }) as CallFuture
            })*
            ext if ext.starts_with('_') => {
                let method = ext.to_owned();
                let params = ext_params($params)?;
                Box::pin(async move { raw_answer($handle.ext_method(&method, params).await) }) as CallFuture
            }
            other => return Err(format!("the runner cannot call `{other}`")),
        }
    };
}

/// The client application calls the agent: the typed call of `method` with `params`.
pub(crate) fn call_agent(agent: AgentConnection<V1>, method: &str, params: &Value) -> Result<CallFuture, String> {
    Ok(typed_calls! {
        agent, method, params;
        "initialize" => initialize,
        "authenticate" => authenticate,
        "logout" => logout,
        "session/new" => new_session,
        "session/load" => load_session,
        "session/list" => list_sessions,
        "session/resume" => resume_session,
        "session/close" => close_session,
        "session/delete" => delete_session,
        "session/set_mode" => set_session_mode,
        "session/set_config_option" => set_session_config_option,
        "session/prompt" => prompt;
        "session/cancel" => cancel,
    })
}

/// The agent application calls the client: the typed call of `method` with `params`.
pub(crate) fn call_client(client: ClientConnection<V1>, method: &str, params: &Value) -> Result<CallFuture, String> {
    Ok(typed_calls! {
        client, method, params;
        "session/request_permission" => request_permission,
        "fs/read_text_file" => read_text_file,
        "fs/write_text_file" => write_text_file,
        "elicitation/create" => create_elicitation,
        "terminal/create" => create_terminal,
        "terminal/output" => terminal_output,
        "terminal/wait_for_exit" => wait_for_terminal_exit,
        "terminal/kill" => kill_terminal,
        "terminal/release" => release_terminal;
        "session/update" => session_update,
        "elicitation/complete" => complete_elicitation,
    })
}
