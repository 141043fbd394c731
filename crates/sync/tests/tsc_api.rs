//! Our client against the real peers: the pinned `tsc --api` of `typescript@7.0.2`
//! (installed by `npm ci --prefix interop/tsc-api`) and of `typescript@7.1.0-beta`
//! (`npm ci --prefix interop/tsc-api/7.1`). Every test runs against both.

mod support;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agentproto_sync::ast::{kind, SourceFile};
use agentproto_sync::tsc::{self, FsAnswer, OpenedProject, ServerApi, TscError};
use agentproto_sync::{Client, ClientError};
use serde_json::{json, Value};
use support::{
    official_walk, our_walk, spawn_tsc, tsc_lib_dir, Project, Watchdog, DEADLINE, MAIN_TS, POINT_TS, SERVERS,
};

/// `initialize` (the server's method set checked against `server`), then the
/// server's way of opening `tsconfig`: (snapshot, project id, what it answered).
fn open_project(server: ServerApi, client: &mut Client, tsconfig: &Path) -> (u64, String, OpenedProject) {
    let session = tsc::initialize(client, Some(server)).unwrap();
    let opened = session.open_project(client, tsconfig.to_str().unwrap()).unwrap();
    (opened.snapshot, opened.projects[0].id.clone(), opened)
}

fn source_file_bytes(client: &mut Client, snapshot: u64, project: &str, file: &Path) -> Vec<u8> {
    let params = json!({ "snapshot": snapshot, "project": project, "file": file });
    client.request("getSourceFile", params.to_string().as_bytes()).unwrap().to_vec()
}

/// Our reader's walk of `bytes` equals the official client's walk of the same file.
fn assert_walk_matches_official(server: ServerApi, bytes: &[u8], cwd: &Path, tsconfig: &Path, file: &Path) -> u64 {
    let source_file = SourceFile::new(bytes).expect("a source file");
    assert_eq!(source_file.format().version, server.ast_version(), "the binary AST version of {server:?}");
    assert_eq!(source_file.root().kind(), source_file.kinds().source_file);
    let ours = our_walk(&source_file);
    let official = official_walk(server, cwd, tsconfig, &[file]).remove(0);
    assert_eq!(ours, official, "our walk of {} differs from the official client's", file.display());
    // The recursive `for_each_child` walk agrees with the stackless one.
    fn count(node: agentproto_sync::ast::Node<'_>) -> u64 {
        node.children().map(|child| 1 + count(child)).sum()
    }
    assert_eq!(count(source_file.root()), ours.nodes);
    assert_nodes_are_consistent_with_the_text(&source_file);
    ours.nodes
}

/// Every node lies within its parent, and every identifier's text from the
/// string table is the file text just before its end (positions count UTF-16
/// code units; the text is UTF-8).
fn assert_nodes_are_consistent_with_the_text(source_file: &SourceFile<'_>) {
    let text = std::str::from_utf8(source_file.text().expect("source text")).expect("UTF-8 source");
    let mut byte_at_unit = Vec::with_capacity(text.len() + 1);
    for (byte, character) in text.char_indices() {
        byte_at_unit.extend(std::iter::repeat_n(byte, character.len_utf16()));
    }
    byte_at_unit.push(text.len());
    let mut identifiers = 0;
    for node in source_file.root().descendants() {
        let parent = node.parent().expect("every node below the root has a parent");
        assert!(parent.pos() <= node.pos() && node.end() <= parent.end(), "{node:?} outside {parent:?}");
        if node.kind() == kind::IDENTIFIER {
            let name = node.text().expect("an identifier's text");
            let end = byte_at_unit[node.end() as usize];
            assert_eq!(&text.as_bytes()[end - name.len()..end], name, "{node:?}");
            identifiers += 1;
        }
    }
    assert!(identifiers > 0, "no identifiers checked");
}

#[test]
fn initialize_reports_the_absolute_working_directory() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let answer: Value = client.request_json("initialize", &Value::Null).unwrap().unwrap();
        assert_eq!(answer["currentDirectory"], json!(project.root()));
        // The field that names the case sensitivity tells the two method sets apart.
        match server {
            ServerApi::V7_0 => assert_eq!(answer["useCaseSensitiveFileNames"], json!(true)),
            _ => assert_eq!(answer["caseSensitivity"], json!(1)),
        }
        assert_eq!(ServerApi::from_initialize(&answer).unwrap(), server);
        watchdog.finish();
        client.close().unwrap();
    }
}

#[test]
fn the_typed_layer_reads_the_method_set_from_the_server_and_checks_the_configured_one() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let session = tsc::initialize(&mut client, None).unwrap();
        assert_eq!(session.api, server);
        assert!(session.case_sensitive);
        assert_eq!(session.current_directory, project.root().to_str().unwrap());
        let other = if server == ServerApi::V7_0 { ServerApi::V7_1 } else { ServerApi::V7_0 };
        match tsc::initialize(&mut client, Some(other)) {
            Err(TscError::Mismatch { configured, found }) => assert_eq!((configured, found), (other, server)),
            outcome => panic!("expected a mismatch, got {outcome:?}"),
        }
        // The other server's method to open a project is not this server's.
        match client.request(other.open_project_method(), br#"{"openProjects":[]}"#) {
            Err(ClientError::Server(_)) => {}
            outcome if server == ServerApi::V7_1 => {
                // 7.1 also has an `updateSnapshot`, which wants a base snapshot.
                assert!(outcome.is_err(), "{outcome:?}");
            }
            outcome => panic!("expected a server error, got {outcome:?}"),
        }
        let opened = session.open_project(&mut client, project.tsconfig().to_str().unwrap()).unwrap();
        session.release(&mut client, opened.snapshot).unwrap();
        watchdog.finish();
    }
}

#[test]
fn opening_a_project_loads_its_real_files() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let (_, project_id, opened) = open_project(server, &mut client, &project.tsconfig());
        assert_eq!(project_id, project.tsconfig().to_str().unwrap());
        let files: Vec<String> =
            ["point.ts", "main.ts"].map(|name| project.file(name).to_str().unwrap().to_owned()).into();
        assert_eq!(opened.projects[0].root_files, files);
        assert_eq!(opened.projects[0].config_file_name.as_deref(), project.tsconfig().to_str());
        let options = match server {
            ServerApi::V7_0 => &opened.answer["projects"][0]["compilerOptions"],
            _ => &opened.answer["projects"][0]["parsedCommandLine"]["options"],
        };
        assert_eq!(options["strict"], json!(true));
        watchdog.finish();
    }
}

#[test]
fn small_source_file_reads_like_the_official_client() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let (snapshot, project_id, _) = open_project(server, &mut client, &project.tsconfig());
        for (name, text) in [("point.ts", POINT_TS), ("main.ts", MAIN_TS)] {
            let path = project.file(name);
            let bytes = source_file_bytes(&mut client, snapshot, &project_id, &path);
            let source_file = SourceFile::new(&bytes).unwrap();
            assert_eq!(source_file.text(), Some(text.as_bytes()));
            assert_eq!(source_file.file_name(), Some(path.to_str().unwrap().as_bytes()));
            let nodes = assert_walk_matches_official(server, &bytes, &project.root(), &project.tsconfig(), &path);
            assert!(nodes > 20, "{name}: only {nodes} nodes");
        }
        // The identifiers' text comes from the string table.
        let bytes = source_file_bytes(&mut client, snapshot, &project_id, &project.file("point.ts"));
        let source_file = SourceFile::new(&bytes).unwrap();
        let names: Vec<&[u8]> = source_file
            .root()
            .descendants()
            .filter(|node| node.kind() == kind::IDENTIFIER)
            .filter_map(|node| node.text())
            .take(3)
            .collect();
        assert_eq!(names, [&b"Point"[..], b"x", b"y"]);
        // A file outside the program: an empty result ("undefined").
        let missing = source_file_bytes(&mut client, snapshot, &project_id, &project.root().join("src/absent.ts"));
        assert!(missing.is_empty());
        watchdog.finish();
    }
}

#[test]
fn lib_dom_source_file_reads_like_the_official_client() {
    for server in SERVERS {
        let lib_dom = tsc_lib_dir(server).join("lib.dom.d.ts");
        let size = std::fs::metadata(&lib_dom).expect("lib.dom.d.ts in the platform package").len();
        assert!(size > 2_000_000, "lib.dom.d.ts is {size} bytes");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let tsconfig = root.join("tsconfig.json");
        std::fs::write(&tsconfig, json!({ "compilerOptions": { "noLib": true }, "files": [lib_dom] }).to_string())
            .unwrap();
        let mut client = spawn_tsc(server, &root, &[]);
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let (snapshot, project_id, _) = open_project(server, &mut client, &tsconfig);
        let bytes = source_file_bytes(&mut client, snapshot, &project_id, &lib_dom);
        assert!(bytes.len() > 65_536, "a bin32 payload");
        let source_file = SourceFile::new(&bytes).unwrap();
        assert_eq!(source_file.text().map(<[u8]>::len), Some(size as usize));
        let nodes = assert_walk_matches_official(server, &bytes, &root, &tsconfig, &lib_dom);
        assert!(nodes > 50_000, "only {nodes} nodes");
        watchdog.finish();
    }
}

#[test]
fn symbols_at_positions_single_and_batched() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let (snapshot, project_id, _) = open_project(server, &mut client, &project.tsconfig());
        let file = project.file("point.ts");
        let point = POINT_TS.find("Point").unwrap();
        let add = POINT_TS.find("add").unwrap();
        let in_comment = POINT_TS.find("Adds").unwrap();
        let single: Value = client
            .request_json(
                "getSymbolAtPosition",
                &json!({ "snapshot": snapshot, "project": project_id, "file": file, "position": point }),
            )
            .unwrap()
            .unwrap();
        assert_eq!(single["name"], "Point");
        let batched: Value = client
        .request_json(
            "getSymbolsAtPositions",
            &json!({ "snapshot": snapshot, "project": project_id, "file": file, "positions": [point, in_comment, add] }),
        )
        .unwrap()
        .unwrap();
        let batched = batched.as_array().expect("an array");
        assert_eq!(batched.len(), 3);
        assert_eq!(batched[0]["name"], "Point");
        let identity = server.symbol_identity(&single);
        assert!(!identity.is_null(), "{single}");
        assert_eq!(server.symbol_identity(&batched[0]), identity, "the same symbol object");
        assert_eq!(batched[1], Value::Null, "no symbol inside a comment");
        assert_eq!(batched[2]["name"], "add");
        watchdog.finish();
    }
}

/// The file system the server sees in the callback test: nothing of it is on disk.
struct VirtualFiles {
    files: BTreeMap<String, String>,
}

impl VirtualFiles {
    fn is_directory(&self, path: &str) -> bool {
        let prefix = format!("{}/", path.trim_end_matches('/'));
        self.files.keys().any(|file| file.starts_with(&prefix))
    }

    fn entries(&self, path: &str) -> Value {
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let mut files = Vec::new();
        let mut directories = Vec::new();
        for rest in self.files.keys().filter_map(|file| file.strip_prefix(&prefix)) {
            match rest.split_once('/') {
                Some((directory, _)) if !directories.contains(&directory) => directories.push(directory),
                Some(_) => {}
                None => files.push(rest),
            }
        }
        json!({ "files": files, "directories": directories })
    }
}

fn json_argument(payload: &[u8]) -> Result<String, String> {
    serde_json::from_slice(payload).map_err(|error| format!("callback argument is not a JSON string: {error}"))
}

/// `readFile`'s answer for `path` in `server`'s encoding.
fn write_file_content(server: ServerApi, files: &VirtualFiles, path: &str, answer: &mut Vec<u8>) {
    match files.files.get(path) {
        Some(text) => server.write_fs_answer("readFile", FsAnswer::Value(&json!(text)), answer),
        None => server.write_fs_answer("readFile", FsAnswer::Missing, answer),
    }
}

/// Registers the five file-system callbacks over `files`, recording each `readFile` path.
fn register_virtual_fs(
    server: ServerApi,
    client: &mut Client,
    files: Arc<VirtualFiles>,
    reads: Arc<Mutex<Vec<String>>>,
) {
    let vfs = Arc::clone(&files);
    client.register_callback("readFile", move |payload, answer| {
        let path = json_argument(payload)?;
        reads.lock().unwrap().push(path.clone());
        write_file_content(server, &vfs, &path, answer);
        Ok(())
    });
    let vfs = Arc::clone(&files);
    client.register_callback("fileExists", move |payload, answer| {
        let exists = vfs.files.contains_key(&json_argument(payload)?);
        server.write_fs_answer("fileExists", FsAnswer::Value(&json!(exists)), answer);
        Ok(())
    });
    let vfs = Arc::clone(&files);
    client.register_callback("directoryExists", move |payload, answer| {
        let exists = vfs.is_directory(&json_argument(payload)?);
        server.write_fs_answer("directoryExists", FsAnswer::Value(&json!(exists)), answer);
        Ok(())
    });
    let vfs = Arc::clone(&files);
    client.register_callback("getAccessibleEntries", move |payload, answer| {
        let entries = vfs.entries(&json_argument(payload)?);
        server.write_fs_answer("getAccessibleEntries", FsAnswer::Value(&entries), answer);
        Ok(())
    });
    client.register_callback("realpath", move |payload, answer| {
        server.write_fs_answer("realpath", FsAnswer::Value(&json!(json_argument(payload)?)), answer);
        Ok(())
    });
}

const VFS_ROOT: &str = "/agentproto-virtual/project";
const VFS_CALLBACKS: &str = "--callbacks=readFile,fileExists,directoryExists,getAccessibleEntries,realpath";

fn virtual_project() -> Arc<VirtualFiles> {
    let files = BTreeMap::from([
        (
            format!("{VFS_ROOT}/tsconfig.json"),
            r#"{"compilerOptions":{"noLib":true,"strict":true},"files":["src/point.ts","src/main.ts"]}"#.to_owned(),
        ),
        (format!("{VFS_ROOT}/src/point.ts"), POINT_TS.to_owned()),
        (format!("{VFS_ROOT}/src/main.ts"), MAIN_TS.to_owned()),
    ]);
    Arc::new(VirtualFiles { files })
}

#[test]
fn project_served_from_callbacks_only() {
    for server in SERVERS {
        assert!(!Path::new(VFS_ROOT).exists(), "{VFS_ROOT} must not exist on disk");
        let files = virtual_project();
        let reads = Arc::new(Mutex::new(Vec::new()));
        let mut client = spawn_tsc(server, Path::new(VFS_ROOT), &[VFS_CALLBACKS]);
        register_virtual_fs(server, &mut client, Arc::clone(&files), Arc::clone(&reads));
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let tsconfig = Path::new(VFS_ROOT).join("tsconfig.json");
        let (snapshot, project_id, opened) = open_project(server, &mut client, &tsconfig);
        assert_eq!(
            opened.projects[0].root_files,
            [format!("{VFS_ROOT}/src/point.ts"), format!("{VFS_ROOT}/src/main.ts")]
        );
        let reads_seen = reads.lock().unwrap().clone();
        for file in files.files.keys() {
            assert!(reads_seen.contains(file), "{file} was not read through the callback: {reads_seen:?}");
        }
        let main = Path::new(VFS_ROOT).join("src/main.ts");
        let bytes = source_file_bytes(&mut client, snapshot, &project_id, &main);
        assert_eq!(SourceFile::new(&bytes).unwrap().text(), Some(MAIN_TS.as_bytes()));
        // The checker resolves the import across the two virtual files.
        let position = MAIN_TS.find("add(origin").unwrap();
        let symbol: Value = client
            .request_json(
                "getSymbolAtPosition",
                &json!({ "snapshot": snapshot, "project": project_id, "file": main, "position": position }),
            )
            .unwrap()
            .unwrap();
        assert_eq!(symbol["name"], "add");
        watchdog.finish();
    }
}

/// Starts a virtual-file-system server whose `readFile` fails for paths
/// ending in `failing_suffix`.
fn client_with_failing_read(server: ServerApi, failing_suffix: &'static str) -> Client {
    let files = virtual_project();
    let mut client = spawn_tsc(server, Path::new(VFS_ROOT), &[VFS_CALLBACKS]);
    register_virtual_fs(server, &mut client, Arc::clone(&files), Arc::new(Mutex::new(Vec::new())));
    client.register_callback("readFile", move |payload, answer| {
        let path = json_argument(payload)?;
        if path.ends_with(failing_suffix) {
            return Err("the disk is on fire".to_owned());
        }
        write_file_content(server, &files, &path, answer);
        Ok(())
    });
    client
}

/// `initialize`, then the server's way of opening the virtual project.
fn open_virtual_project(server: ServerApi, client: &mut Client) -> Result<Vec<u8>, ClientError> {
    let _: Value = client.request_json("initialize", &Value::Null)?.expect("initialize result");
    let method = server.open_project_method();
    client.request(method, br#"{"openProjects":["/agentproto-virtual/project/tsconfig.json"]}"#).map(<[u8]>::to_vec)
}

#[test]
fn failed_callback_on_the_request_path_is_a_server_error_with_its_text() {
    for server in SERVERS {
        // The official client gives up on the channel after sending a CallError;
        // ours keeps reading. The pinned server reads tsconfig.json on the
        // request's own goroutine, recovers the failure and answers the request
        // with an Error tuple carrying the callback's text; the channel lives on.
        let mut client = client_with_failing_read(server, "tsconfig.json");
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let outcome = open_virtual_project(server, &mut client);
        match outcome {
            Err(ClientError::Server(text)) => assert!(text.contains("the disk is on fire"), "{text}"),
            other => panic!("expected a server error, got {other:?}"),
        }
        assert_eq!(client.request("echo", b"after").unwrap(), b"after");
        watchdog.finish();
    }
}

#[test]
fn failed_callback_off_the_request_path_ends_the_server_and_fails_cleanly() {
    for server in SERVERS {
        // Source files are read by worker goroutines, where the pinned server does
        // not recover the failure: the process dies. The request ends with the
        // exit status instead of hanging.
        let mut client = client_with_failing_read(server, ".ts");
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let outcome = open_virtual_project(server, &mut client);
        assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if !status.success()), "{outcome:?}");
        assert!(matches!(client.request("echo", b"after"), Err(ClientError::ChildExited(_))));
        watchdog.finish();
    }
}

#[test]
fn unknown_method_is_a_server_error_with_the_server_text() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        match client.request("agentprotoNoSuchMethod", b"{}") {
            Err(ClientError::Server(text)) => assert!(text.contains("agentprotoNoSuchMethod"), "{text}"),
            other => panic!("expected a server error, got {other:?}"),
        }
        // The channel is still usable afterwards.
        assert_eq!(client.request("echo", b"still here").unwrap(), b"still here");
        watchdog.finish();
    }
}

#[test]
fn echo_of_a_mebibyte_round_trips() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let payload: Vec<u8> = (0..1_048_576u32).map(|index| (index % 241) as u8).collect();
        assert_eq!(client.request("echo", &payload).unwrap(), payload.as_slice());
        assert_eq!(client.request("echo", b"").unwrap(), b"");
        watchdog.finish();
    }
}

#[test]
fn killed_server_is_a_clean_error_and_is_reaped() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let pid = client.id();
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        assert_eq!(client.request("echo", b"before").unwrap(), b"before");
        client.killer().kill();
        let outcome = client.request("echo", b"after");
        assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.signal() == Some(9)), "{outcome:?}");
        assert!(!agentproto_process::running(pid), "the server was not reaped");
        // Later requests keep failing the same way, at once.
        assert!(matches!(client.request("echo", b"again"), Err(ClientError::ChildExited(_))));
        watchdog.finish();
    }
}

#[test]
fn server_killed_in_the_middle_of_a_request_is_a_clean_error() {
    for server in SERVERS {
        let files = virtual_project();
        let mut client = spawn_tsc(server, Path::new(VFS_ROOT), &[VFS_CALLBACKS]);
        register_virtual_fs(server, &mut client, Arc::clone(&files), Arc::new(Mutex::new(Vec::new())));
        // The first file read kills the server; the callback still answers.
        let killer = client.killer();
        client.register_callback("readFile", move |payload, answer| {
            killer.kill();
            let path = json_argument(payload)?;
            write_file_content(server, &files, &path, answer);
            Ok(())
        });
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        let outcome = open_virtual_project(server, &mut client);
        assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.signal() == Some(9)), "{outcome:?}");
        watchdog.finish();
    }
}

#[test]
fn dropping_the_client_ends_and_reaps_the_server() {
    for server in SERVERS {
        let project = Project::write();
        let mut client = spawn_tsc(server, &project.root(), &[]);
        let pid = client.id();
        let watchdog = Watchdog::new(client.killer(), DEADLINE);
        assert_eq!(client.request("echo", b"x").unwrap(), b"x");
        watchdog.finish();
        drop(client);
        assert!(!agentproto_process::running(pid));
    }
}
