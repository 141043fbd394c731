//! A typed layer over the few TypeScript API server methods that differ
//! between the two pinned servers: `initialize` and opening a project.
//!
//! The channel is the same for TypeScript 7.0.2 and 7.1.0-beta; the method
//! set is not. 7.0.2 opens a project with `updateSnapshot` and answers
//! `initialize` with `useCaseSensitiveFileNames`; 7.1.0-beta opens one with
//! `createSnapshot` (its `updateSnapshot` takes a base snapshot and changes)
//! and answers `initialize` with `caseSensitivity`. The file-system callbacks
//! are answered differently too ([`ServerApi::write_fs_answer`]): 7.0.2 takes
//! the bare value (`readFile` wrapped in `{"content": …}`) and an empty answer
//! for "use the real file system"; 7.1 takes `{"kind": "value", "value": …}`,
//! `{"kind": "missing"}` or `{"kind": "useOS"}`. [`initialize`] tells them
//! apart from that answer, or checks the version the caller configured
//! against it; nothing is tried and retried. Methods whose params and
//! results are the same in both (`getSourceFile`, `getSymbolAtPosition`, …)
//! go through [`Client::request`] and [`Client::request_json`] unchanged.
//!
//! ```no_run
//! use std::process::Command;
//! use agentproto_sync::{ast::SourceFile, tsc, Client, ClientOptions};
//!
//! let mut command = Command::new("interop/tsc-api/7.1/node_modules/@typescript/typescript-linux-x64/lib/tsc");
//! command.args(["--api", "--cwd", "/abs/project"]);
//! let mut client = Client::spawn(command, ClientOptions::default())?;
//! let session = tsc::initialize(&mut client, None)?; // or Some(tsc::ServerApi::V7_1)
//! let opened = session.open_project(&mut client, "/abs/project/tsconfig.json")?;
//! let bytes = session.source_file(&mut client, opened.snapshot, &opened.projects[0].id, "/abs/project/a.ts")?;
//! let file = SourceFile::new(bytes)?;
//! assert_eq!(file.format().version, 9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::Deserialize;
use serde_json::{json, Value};

use crate::{Client, ClientError};

/// The method set of one TypeScript API server release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerApi {
    /// TypeScript 7.0.2: `updateSnapshot {openProjects}`, binary AST version 5.
    V7_0,
    /// TypeScript 7.1.0-beta: `createSnapshot {openProjects}`, binary AST version 9.
    V7_1,
}

impl ServerApi {
    /// The TypeScript release this method set was read from.
    pub fn typescript(self) -> &'static str {
        match self {
            ServerApi::V7_0 => "7.0.2",
            ServerApi::V7_1 => "7.1.0-beta",
        }
    }

    /// The method that creates a snapshot with projects opened.
    pub fn open_project_method(self) -> &'static str {
        match self {
            ServerApi::V7_0 => "updateSnapshot",
            ServerApi::V7_1 => "createSnapshot",
        }
    }

    /// The binary AST protocol version this server's `getSourceFile` writes.
    pub fn ast_version(self) -> u32 {
        match self {
            ServerApi::V7_0 => crate::ast::FORMAT_V5.version,
            ServerApi::V7_1 => crate::ast::FORMAT_V9.version,
        }
    }

    /// What identifies a symbol result: 7.0.2's `id`, 7.1's `reference` (an
    /// owner kind, the declaring file's descriptor and an id within it);
    /// `Value::Null` if absent.
    pub fn symbol_identity(self, symbol: &Value) -> &Value {
        match self {
            ServerApi::V7_0 => &symbol["id"],
            ServerApi::V7_1 => &symbol["reference"],
        }
    }

    /// The method set an `initialize` answer belongs to: `useCaseSensitiveFileNames`
    /// (7.0.2) or `caseSensitivity` (7.1.0-beta), exactly one of the two.
    pub fn from_initialize(answer: &Value) -> Result<ServerApi, TscError> {
        let fields = (answer.get("useCaseSensitiveFileNames"), answer.get("caseSensitivity"));
        match fields {
            (Some(_), None) => Ok(ServerApi::V7_0),
            (None, Some(_)) => Ok(ServerApi::V7_1),
            _ => Err(TscError::UnknownServer { found: answer.to_string() }),
        }
    }
}

/// What a file-system callback answers, before the server's encoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FsAnswer<'v> {
    /// The value: the text for `readFile`, a boolean for `fileExists` and
    /// `directoryExists`, `{files, directories}` for `getAccessibleEntries`,
    /// the resolved path for `realpath`.
    Value(&'v Value),
    /// No such file (`readFile`; 7.1 also `stat`).
    Missing,
    /// Let the server use the real file system for this call.
    UseOs,
}

impl ServerApi {
    /// Appends `answer` to the callback `callback` in this server's encoding.
    pub fn write_fs_answer(self, callback: &str, answer: FsAnswer<'_>, out: &mut Vec<u8>) {
        let encoded = match (self, answer) {
            (ServerApi::V7_0, FsAnswer::UseOs) => return,
            (ServerApi::V7_0, FsAnswer::Value(value)) if callback == "readFile" => json!({ "content": value }),
            (ServerApi::V7_0, FsAnswer::Value(value)) => value.clone(),
            (ServerApi::V7_0, FsAnswer::Missing) if callback == "readFile" => json!({ "content": null }),
            (ServerApi::V7_0, FsAnswer::Missing) => Value::Null,
            (_, FsAnswer::Value(value)) => json!({ "kind": "value", "value": value }),
            (_, FsAnswer::Missing) => json!({ "kind": "missing" }),
            (_, FsAnswer::UseOs) => json!({ "kind": "useOS" }),
        };
        serde_json::to_writer(out, &encoded).expect("a JSON value serializes into a Vec");
    }
}

/// A typed call that did not produce a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TscError {
    /// The request itself failed.
    #[error("request failed")]
    Client(#[from] ClientError),
    /// The `initialize` answer matches neither known method set.
    #[error("`initialize` answered {found}: expected exactly one of `useCaseSensitiveFileNames` (7.0.2) and `caseSensitivity` (7.1)")]
    UnknownServer {
        /// The answer, as JSON text.
        found: String,
    },
    /// The server is not the release the caller configured.
    #[error("configured for TypeScript {}, the server answers like {}", .configured.typescript(), .found.typescript())]
    Mismatch {
        /// What the caller asked for.
        configured: ServerApi,
        /// What the server's answer says.
        found: ServerApi,
    },
    /// A result is missing or does not have the expected shape.
    #[error("`{method}` answered {found}: expected {expected}")]
    Shape {
        /// The method.
        method: &'static str,
        /// What was expected.
        expected: &'static str,
        /// What came, as JSON text (`undefined` for an empty answer).
        found: String,
    },
}

/// The server after `initialize`: which method set it speaks and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The server's method set.
    pub api: ServerApi,
    /// The server's working directory (absolute).
    pub current_directory: String,
    /// Whether the server compares paths case-sensitively.
    pub case_sensitive: bool,
}

/// A project in a snapshot, in the fields both servers report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectInfo {
    /// The project id the other methods take.
    pub id: String,
    /// The tsconfig file the project was opened from, if any.
    pub config_file_name: Option<String>,
    /// The root files (7.0.2's `rootFiles`, 7.1's `parsedCommandLine.fileNames`).
    pub root_files: Vec<String>,
}

/// A snapshot created with projects opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedProject {
    /// The snapshot handle.
    pub snapshot: u64,
    /// Its projects.
    pub projects: Vec<ProjectInfo>,
    /// The whole answer, for the fields the two servers do not share.
    pub answer: Value,
}

#[derive(Deserialize)]
struct InitializeAnswer {
    #[serde(rename = "currentDirectory")]
    current_directory: String,
    #[serde(rename = "useCaseSensitiveFileNames")]
    use_case_sensitive_file_names: Option<bool>,
    #[serde(rename = "caseSensitivity")]
    case_sensitivity: Option<u8>,
}

/// Sends `initialize` and reads which method set the server speaks from its
/// answer; with `configured`, fails unless the answer says the same.
pub fn initialize(client: &mut Client, configured: Option<ServerApi>) -> Result<Session, TscError> {
    let answer: Value = client.request_json("initialize", &Value::Null)?.unwrap_or(Value::Null);
    let found = ServerApi::from_initialize(&answer)?;
    if let Some(configured) = configured.filter(|configured| *configured != found) {
        return Err(TscError::Mismatch { configured, found });
    }
    let shape = || TscError::Shape {
        method: "initialize",
        expected: "currentDirectory and a case sensitivity",
        found: answer.to_string(),
    };
    let fields: InitializeAnswer = serde_json::from_value(answer.clone()).map_err(|_| shape())?;
    let case_sensitive = match found {
        ServerApi::V7_0 => fields.use_case_sensitive_file_names.ok_or_else(shape)?,
        // CaseSensitivity: 0 insensitive, 1 sensitive.
        ServerApi::V7_1 => fields.case_sensitivity.ok_or_else(shape)? == 1,
    };
    Ok(Session { api: found, current_directory: fields.current_directory, case_sensitive })
}

impl Session {
    /// Creates a snapshot with the projects of `tsconfigs` opened
    /// (`updateSnapshot` on 7.0.2, `createSnapshot` on 7.1).
    pub fn open_projects<S: AsRef<str>>(
        &self,
        client: &mut Client,
        tsconfigs: &[S],
    ) -> Result<OpenedProject, TscError> {
        let method = self.api.open_project_method();
        let names: Vec<&str> = tsconfigs.iter().map(AsRef::as_ref).collect();
        let answer: Value = client.request_json(method, &json!({ "openProjects": names }))?.unwrap_or(Value::Null);
        let shape = || TscError::Shape { method, expected: "a snapshot and its projects", found: answer.to_string() };
        let snapshot = answer["snapshot"].as_u64().ok_or_else(shape)?;
        let projects = answer["projects"].as_array().ok_or_else(shape)?;
        let projects = projects.iter().map(|project| self.project_info(project)).collect::<Option<Vec<_>>>();
        let projects = projects.ok_or_else(shape)?;
        Ok(OpenedProject { snapshot, projects, answer })
    }

    /// [`Session::open_projects`] with one tsconfig.
    pub fn open_project(&self, client: &mut Client, tsconfig: &str) -> Result<OpenedProject, TscError> {
        self.open_projects(client, &[tsconfig])
    }

    fn project_info(&self, project: &Value) -> Option<ProjectInfo> {
        let root_files = match self.api {
            ServerApi::V7_0 => &project["rootFiles"],
            ServerApi::V7_1 => &project["parsedCommandLine"]["fileNames"],
        };
        let root_files: Option<Vec<String>> =
            root_files.as_array()?.iter().map(|file| file.as_str().map(str::to_owned)).collect();
        Some(ProjectInfo {
            id: project["id"].as_str()?.to_owned(),
            config_file_name: project["configFileName"].as_str().map(str::to_owned),
            root_files: root_files?,
        })
    }

    /// The binary AST of `file` in `project` (empty when the file is not in the
    /// program), a view of the client's reused buffer.
    pub fn source_file<'c>(
        &self,
        client: &'c mut Client,
        snapshot: u64,
        project: &str,
        file: &str,
    ) -> Result<&'c [u8], TscError> {
        let params = json!({ "snapshot": snapshot, "project": project, "file": file });
        Ok(client.request("getSourceFile", params.to_string().as_bytes())?)
    }

    /// Releases a snapshot (the same `release {snapshot}` on both servers).
    pub fn release(&self, client: &mut Client, snapshot: u64) -> Result<(), TscError> {
        client.request("release", json!({ "snapshot": snapshot }).to_string().as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_initialize_answer_names_the_method_set() {
        let old = json!({"useCaseSensitiveFileNames": true, "currentDirectory": "/p"});
        let new = json!({"caseSensitivity": 1, "currentDirectory": "/p"});
        assert_eq!(ServerApi::from_initialize(&old).unwrap(), ServerApi::V7_0);
        assert_eq!(ServerApi::from_initialize(&new).unwrap(), ServerApi::V7_1);
        for unknown in [
            json!({"currentDirectory": "/p"}),
            json!(null),
            json!({"useCaseSensitiveFileNames": true, "caseSensitivity": 1}),
        ] {
            let error = ServerApi::from_initialize(&unknown).unwrap_err();
            assert!(matches!(error, TscError::UnknownServer { .. }), "{error}");
        }
        assert_eq!(
            [ServerApi::V7_0, ServerApi::V7_1].map(ServerApi::open_project_method),
            ["updateSnapshot", "createSnapshot"]
        );
        assert_eq!([ServerApi::V7_0, ServerApi::V7_1].map(ServerApi::ast_version), [5, 9]);
    }

    #[test]
    fn fs_answers_are_encoded_per_server() {
        let encode = |api: ServerApi, callback: &str, answer: FsAnswer<'_>| {
            let mut out = Vec::new();
            api.write_fs_answer(callback, answer, &mut out);
            String::from_utf8(out).unwrap()
        };
        let text = json!("export {}");
        assert_eq!(encode(ServerApi::V7_0, "readFile", FsAnswer::Value(&text)), r#"{"content":"export {}"}"#);
        assert_eq!(encode(ServerApi::V7_0, "readFile", FsAnswer::Missing), r#"{"content":null}"#);
        assert_eq!(encode(ServerApi::V7_0, "fileExists", FsAnswer::Value(&json!(true))), "true");
        assert_eq!(encode(ServerApi::V7_0, "realpath", FsAnswer::UseOs), "");
        assert_eq!(
            encode(ServerApi::V7_1, "readFile", FsAnswer::Value(&text)),
            r#"{"kind":"value","value":"export {}"}"#
        );
        assert_eq!(encode(ServerApi::V7_1, "readFile", FsAnswer::Missing), r#"{"kind":"missing"}"#);
        assert_eq!(encode(ServerApi::V7_1, "realpath", FsAnswer::UseOs), r#"{"kind":"useOS"}"#);
    }

    #[test]
    fn a_mismatch_names_both_releases() {
        let error = TscError::Mismatch { configured: ServerApi::V7_1, found: ServerApi::V7_0 };
        assert_eq!(error.to_string(), "configured for TypeScript 7.1.0-beta, the server answers like 7.0.2");
    }
}
