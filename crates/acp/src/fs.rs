//! File-system handlers for the client role, confined to a set of root directories.
//!
//! An ACP client that advertises `fs.readTextFile` / `fs.writeTextFile` answers the
//! agent's `fs/read_text_file` and `fs/write_text_file` requests. The agent names
//! any path it likes, so the client must decide which paths it is willing to touch.
//! [`FsRoots`] makes that decision once, the same way for every request:
//!
//! * the path must be absolute;
//! * it must not contain a `..` component, even one that would stay inside a root;
//! * once symbolic links are resolved, the file must lie inside one of the roots.
//!   A read resolves the whole path. A write (whose file may not exist yet)
//!   resolves the parent directory, and follows the final component if it is a
//!   symbolic link, so a link that points out of the roots is refused even when its
//!   target does not exist yet.
//!
//! A path whose resolution leaves the roots is refused whether or not it exists, so
//! the answers do not reveal which files exist outside the roots.
//!
//! [`FsRoots::read_text_file`] and [`FsRoots::write_text_file`] take the decoded
//! request and return the response or the wire [`ErrorObject`] to reply with. The
//! same steps are available on their own for editors that serve unsaved buffer
//! contents: [`FsRoots::resolve_read`], [`FsRoots::resolve_write`] and
//! [`slice_lines`].
//!
//! Errors map to wire codes as follows (the mapping may expand over time):
//!
//! | [`FsError`] | code | `data` |
//! |---|---|---|
//! | `NotAbsolute`, `ParentComponent`, `NulByte`, `OutsideRoots` | -32602 | `{"path": "$.params.path", "expected": …, "found": <path>}` |
//! | `NotFound` | -32002 | `{"path": <path>}` |
//! | `NotUtf8`, `Io` | -32603 | none; the message names the path |
//!
//! No error ever carries file content.
//!
//! The checks and the file operation are separate system calls, so a process that
//! can rewrite the directories under a root between the two can still race them.
//! Files are written in place (truncate, then write), which keeps their inode,
//! permissions and hard links but is not atomic.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

use agentproto_jsonrpc::{ErrorCode, ErrorObject};

use crate::v1;

/// The JSON path of the `path` member of both requests, used in `-32602` replies.
const PARAMS_PATH: &str = "$.params.path";

/// How many symbolic links a write follows before giving up (Linux's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// The root directories that file-system requests are confined to.
///
/// Roots are canonicalized (symbolic links resolved) when the set is built, and
/// every request is checked against those canonical paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsRoots {
    roots: Vec<PathBuf>,
}

/// Why a set of roots could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum RootError {
    /// No root was given.
    Empty,
    /// A root was not an absolute path.
    NotAbsolute {
        /// The root as given.
        root: PathBuf,
    },
    /// A root exists but is not a directory.
    NotADirectory {
        /// The root as given.
        root: PathBuf,
    },
    /// A root could not be resolved (for example because it does not exist).
    Io {
        /// The root as given.
        root: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl fmt::Display for RootError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("no root directory given"),
            Self::NotAbsolute { root } => write!(f, "root `{}` is not an absolute path", root.display()),
            Self::NotADirectory { root } => write!(f, "root `{}` is not a directory", root.display()),
            Self::Io { root, .. } => write!(f, "could not resolve root `{}`", root.display()),
        }
    }
}

impl std::error::Error for RootError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Why a file-system request was refused or failed. A local error: convert it with
/// [`FsError::to_error_object`] (or `ErrorObject::from`) to reply on the wire.
#[derive(Debug)]
#[non_exhaustive]
pub enum FsError {
    /// The path is not absolute.
    NotAbsolute {
        /// The path as requested.
        path: String,
    },
    /// The path has a `..` component.
    ParentComponent {
        /// The path as requested.
        path: String,
    },
    /// The path contains a NUL byte, which no file name can hold.
    NulByte {
        /// The path as requested.
        path: String,
    },
    /// Once symbolic links are resolved, the path lies outside every root.
    OutsideRoots {
        /// The path as requested.
        path: String,
        /// The canonical roots it was checked against.
        roots: Vec<PathBuf>,
    },
    /// The file (for a write: its parent directory) does not exist.
    NotFound {
        /// The path as requested.
        path: String,
    },
    /// The file is not valid UTF-8.
    NotUtf8 {
        /// The path as requested.
        path: String,
    },
    /// Any other I/O failure (permission denied, is a directory, ...).
    Io {
        /// The path as requested.
        path: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAbsolute { path } => write!(f, "path `{path}` is not absolute"),
            Self::ParentComponent { path } => write!(f, "path `{path}` has a `..` component"),
            Self::NulByte { path } => write!(f, "path {path:?} contains a NUL byte"),
            Self::OutsideRoots { path, roots } => {
                write!(f, "path `{path}` is outside the allowed roots ({})", RootList(roots))
            }
            Self::NotFound { path } => write!(f, "no such file or directory: `{path}`"),
            Self::NotUtf8 { path } => write!(f, "file `{path}` is not valid UTF-8"),
            Self::Io { path, .. } => write!(f, "could not access `{path}`"),
        }
    }
}

impl std::error::Error for FsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Formats roots as `/a, /b`.
struct RootList<'a>(&'a [PathBuf]);

impl fmt::Display for RootList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, root) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", root.display())?;
        }
        Ok(())
    }
}

impl FsError {
    /// The path as the request gave it.
    pub fn path(&self) -> &str {
        match self {
            Self::NotAbsolute { path }
            | Self::ParentComponent { path }
            | Self::NulByte { path }
            | Self::OutsideRoots { path, .. }
            | Self::NotFound { path }
            | Self::NotUtf8 { path }
            | Self::Io { path, .. } => path,
        }
    }

    /// Whether the path was refused by a check (as opposed to the file operation failing).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Self::NotAbsolute { .. } | Self::ParentComponent { .. } | Self::NulByte { .. } | Self::OutsideRoots { .. }
        )
    }

    /// The wire error to reply with (see the module documentation for the mapping).
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Self::NotAbsolute { path } => ErrorObject::invalid_params(PARAMS_PATH, "an absolute path", path),
            Self::ParentComponent { path } => {
                ErrorObject::invalid_params(PARAMS_PATH, "a path without .. components", path)
            }
            Self::NulByte { path } => ErrorObject::invalid_params(PARAMS_PATH, "a path without NUL bytes", path),
            Self::OutsideRoots { path, roots } => ErrorObject::invalid_params(
                PARAMS_PATH,
                &format!("a path inside the allowed roots ({})", RootList(roots)),
                path,
            ),
            Self::NotFound { path } => {
                let error = ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, format!("file not found: `{path}`"));
                #[derive(serde::Serialize)]
                struct PathData<'a> {
                    path: &'a str,
                }
                match serde_json::value::to_raw_value(&PathData { path }) {
                    Ok(data) => error.with_data(data),
                    Err(_) => error,
                }
            }
            Self::NotUtf8 { path } => ErrorObject::internal_error(format!("file `{path}` is not valid UTF-8")),
            Self::Io { path, source } => ErrorObject::internal_error(format!("could not access `{path}`: {source}")),
        }
    }
}

impl From<&FsError> for ErrorObject {
    fn from(error: &FsError) -> ErrorObject {
        error.to_error_object()
    }
}

impl From<FsError> for ErrorObject {
    fn from(error: FsError) -> ErrorObject {
        error.to_error_object()
    }
}

impl FsRoots {
    /// Builds the set from one or more root directories, each of which must be an
    /// absolute path to an existing directory. Each root is canonicalized here
    /// (a blocking call, made once).
    pub fn new<I, P>(roots: I) -> Result<FsRoots, RootError>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let mut canonical_roots = Vec::new();
        for root in roots {
            let root = root.as_ref();
            if !root.is_absolute() {
                return Err(RootError::NotAbsolute { root: root.to_path_buf() });
            }
            let canonical =
                std::fs::canonicalize(root).map_err(|source| RootError::Io { root: root.to_path_buf(), source })?;
            if !canonical.is_dir() {
                return Err(RootError::NotADirectory { root: root.to_path_buf() });
            }
            if !canonical_roots.contains(&canonical) {
                canonical_roots.push(canonical);
            }
        }
        if canonical_roots.is_empty() {
            return Err(RootError::Empty);
        }
        Ok(FsRoots { roots: canonical_roots })
    }

    /// The canonical roots, in the order given (duplicates removed).
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a canonical path lies inside (or is) one of the roots.
    ///
    /// The comparison is by whole components: `/srv/a` does not contain `/srv/ab`.
    pub fn contains(&self, canonical: &Path) -> bool {
        self.roots.iter().any(|root| canonical.starts_with(root))
    }

    /// Answers `fs/read_text_file`: the file's text, from line `line` (1-based)
    /// for at most `limit` lines when those are given.
    pub async fn read_text_file(
        &self,
        request: &v1::ReadTextFileRequest,
    ) -> Result<v1::ReadTextFileResponse, ErrorObject> {
        let content = self
            .read_text(&request.path, request.line.value().copied(), request.limit.value().copied())
            .await
            .map_err(|error| error.to_error_object())?;
        Ok(v1::ReadTextFileResponse { content, meta: crate::MaybeUndefined::Undefined })
    }

    /// Answers `fs/write_text_file`: creates the file if it does not exist (its
    /// parent directory must) and replaces its content.
    pub async fn write_text_file(
        &self,
        request: &v1::WriteTextFileRequest,
    ) -> Result<v1::WriteTextFileResponse, ErrorObject> {
        self.write_text(&request.path, &request.content).await.map_err(|error| error.to_error_object())?;
        Ok(v1::WriteTextFileResponse::default())
    }

    /// Reads the text of the file at `path` (checked as for a read), sliced by
    /// [`slice_lines`].
    pub async fn read_text(&self, path: &str, line: Option<u32>, limit: Option<u32>) -> Result<String, FsError> {
        let resolved = self.resolve_read(path).await?;
        let bytes = tokio::fs::read(&resolved).await.map_err(|source| io_error(path, source))?;
        let mut text = String::from_utf8(bytes).map_err(|_| FsError::NotUtf8 { path: path.to_owned() })?;
        let range = line_range(&text, line, limit);
        // Cut in place rather than copy: the file may be large.
        text.truncate(range.end);
        text.drain(..range.start);
        Ok(text)
    }

    /// Writes `content` to the file at `path` (checked as for a write), creating
    /// the file if needed and replacing what it held.
    pub async fn write_text(&self, path: &str, content: &str) -> Result<(), FsError> {
        let resolved = self.resolve_write(path).await?;
        tokio::fs::write(&resolved, content).await.map_err(|source| io_error(path, source))
    }

    /// Checks `path` for a read and returns the canonical file to read.
    ///
    /// Every symbolic link in the path is resolved and the result must lie inside
    /// a root. A file that does not exist is [`FsError::NotFound`] only when the
    /// part of the path that does exist resolves inside a root; otherwise the path
    /// is [`FsError::OutsideRoots`].
    pub async fn resolve_read(&self, path: &str) -> Result<PathBuf, FsError> {
        let requested = check_lexically(path)?;
        match tokio::fs::canonicalize(requested).await {
            Ok(canonical) if self.contains(&canonical) => Ok(canonical),
            Ok(_) => Err(self.outside(path)),
            Err(source) => Err(self.missing(path, requested, source).await),
        }
    }

    /// Checks `path` for a write and returns the file to write.
    ///
    /// The parent directory must exist and resolve inside a root. If the final
    /// component is a symbolic link it is followed (also when its target does not
    /// exist yet), and its target is checked the same way, so the returned path is
    /// never a symbolic link.
    pub async fn resolve_write(&self, path: &str) -> Result<PathBuf, FsError> {
        let mut target = check_lexically(path)?.to_path_buf();
        for _ in 0..MAX_SYMLINK_HOPS {
            let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
                return Err(io_error(path, io::Error::new(io::ErrorKind::IsADirectory, "not a file path")));
            };
            let canonical_parent = match tokio::fs::canonicalize(parent).await {
                Ok(canonical) => canonical,
                Err(source) => return Err(self.missing(path, parent, source).await),
            };
            if !self.contains(&canonical_parent) {
                return Err(self.outside(path));
            }
            let candidate = canonical_parent.join(name);
            match tokio::fs::symlink_metadata(&candidate).await {
                Ok(metadata) if metadata.file_type().is_symlink() => {
                    let link = tokio::fs::read_link(&candidate).await.map_err(|source| io_error(path, source))?;
                    // `join` keeps an absolute link target as it is and resolves a
                    // relative one against the link's directory.
                    target = canonical_parent.join(link);
                }
                Ok(_) => return Ok(candidate),
                Err(source) if source.kind() == io::ErrorKind::NotFound => return Ok(candidate),
                Err(source) => return Err(io_error(path, source)),
            }
        }
        Err(io_error(path, io::Error::other("too many levels of symbolic links")))
    }

    fn outside(&self, path: &str) -> FsError {
        FsError::OutsideRoots { path: path.to_owned(), roots: self.roots.clone() }
    }

    /// Classifies a failure to resolve `missing` (the requested path or one of its
    /// ancestors): when the deepest ancestor that does resolve lies outside the
    /// roots, the path is refused as outside, whatever the failure was.
    async fn missing(&self, path: &str, missing: &Path, source: io::Error) -> FsError {
        for ancestor in missing.ancestors().skip(1) {
            if let Ok(canonical) = tokio::fs::canonicalize(ancestor).await {
                if !self.contains(&canonical) {
                    return self.outside(path);
                }
                break;
            }
        }
        match source.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => FsError::NotFound { path: path.to_owned() },
            _ => io_error(path, source),
        }
    }
}

fn io_error(path: &str, source: io::Error) -> FsError {
    if source.kind() == io::ErrorKind::NotFound {
        return FsError::NotFound { path: path.to_owned() };
    }
    FsError::Io { path: path.to_owned(), source }
}

/// The checks that need no file system: absolute, no `..`, no NUL byte.
fn check_lexically(path: &str) -> Result<&Path, FsError> {
    if path.contains('\0') {
        return Err(FsError::NulByte { path: path.to_owned() });
    }
    let requested = Path::new(path);
    if !requested.is_absolute() {
        return Err(FsError::NotAbsolute { path: path.to_owned() });
    }
    if requested.components().any(|component| component == Component::ParentDir) {
        return Err(FsError::ParentComponent { path: path.to_owned() });
    }
    Ok(requested)
}

/// The lines of `text` from `line` (1-based; `0` reads as `1`) for at most
/// `limit` lines, with their line endings kept.
///
/// Lines end at `\n` (so `\r\n` stays intact). A `line` past the end gives an
/// empty string; `None` for both gives the whole text.
pub fn slice_lines(text: &str, line: Option<u32>, limit: Option<u32>) -> &str {
    &text[line_range(text, line, limit)]
}

/// The byte range [`slice_lines`] returns.
fn line_range(text: &str, line: Option<u32>, limit: Option<u32>) -> std::ops::Range<usize> {
    let skip = line.map_or(0, |line| line.saturating_sub(1));
    let start = line_start(text, skip);
    match limit {
        None => start..text.len(),
        Some(limit) => start..start + line_start(&text[start..], limit),
    }
}

/// The byte offset where line `index` (0-based) of `text` starts, or `text.len()`.
fn line_start(text: &str, index: u32) -> usize {
    if index == 0 {
        return 0;
    }
    text.match_indices('\n').nth((index - 1) as usize).map_or(text.len(), |(offset, _)| offset + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentproto_codec::MaybeUndefined;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A directory under the system temp dir, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("agentproto-fs-test-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn path(&self, relative: &str) -> PathBuf {
            self.0.join(relative)
        }

        fn text(&self, relative: &str) -> String {
            self.path(relative).to_str().unwrap().to_owned()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A temp dir holding `root/` (the only root) and `outside/`, each with a file.
    fn fixture() -> (TempDir, FsRoots) {
        let dir = TempDir::new();
        std::fs::create_dir(dir.path("root")).unwrap();
        std::fs::create_dir(dir.path("outside")).unwrap();
        std::fs::write(dir.path("root/a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
        std::fs::write(dir.path("outside/secret.txt"), "secret\n").unwrap();
        let roots = FsRoots::new([dir.path("root")]).unwrap();
        (dir, roots)
    }

    fn read_request(path: &str, line: Option<u32>, limit: Option<u32>) -> v1::ReadTextFileRequest {
        v1::ReadTextFileRequest {
            session_id: "s1".into(),
            path: path.to_owned(),
            line: line.into(),
            limit: limit.into(),
            meta: MaybeUndefined::Undefined,
        }
    }

    fn write_request(path: &str, content: &str) -> v1::WriteTextFileRequest {
        v1::WriteTextFileRequest {
            session_id: "s1".into(),
            path: path.to_owned(),
            content: content.to_owned(),
            meta: MaybeUndefined::Undefined,
        }
    }

    async fn read(roots: &FsRoots, path: &str) -> Result<String, ErrorObject> {
        roots.read_text_file(&read_request(path, None, None)).await.map(|response| response.content)
    }

    async fn write(roots: &FsRoots, path: &str, content: &str) -> Result<(), ErrorObject> {
        roots.write_text_file(&write_request(path, content)).await.map(|_| ())
    }

    fn data(error: &ErrorObject) -> &str {
        error.data.as_ref().map_or("", |data| data.get())
    }

    /// Asserts a -32602 refusal of `path` whose `expected` starts with `expected`.
    fn assert_refused(error: &ErrorObject, path: &str, expected: &str) {
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
        let data: serde_json::Value = serde_json::from_str(data(error)).unwrap();
        assert_eq!(data["path"], PARAMS_PATH);
        assert_eq!(data["found"], path);
        assert!(data["expected"].as_str().unwrap().starts_with(expected), "{data}");
        assert_eq!(data.as_object().unwrap().len(), 3);
    }

    fn assert_outside(error: &ErrorObject, path: &str) {
        assert_refused(error, path, "a path inside the allowed roots (");
    }

    #[test]
    fn roots_must_be_absolute_existing_directories() {
        let dir = TempDir::new();
        std::fs::write(dir.path("file"), "x").unwrap();
        assert!(matches!(FsRoots::new(Vec::<PathBuf>::new()), Err(RootError::Empty)));
        assert!(matches!(FsRoots::new(["relative/dir"]), Err(RootError::NotAbsolute { .. })));
        let missing = FsRoots::new([dir.path("missing")]).unwrap_err();
        assert!(matches!(&missing, RootError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound));
        assert!(missing.to_string().contains("missing"));
        assert!(matches!(FsRoots::new([dir.path("file")]), Err(RootError::NotADirectory { .. })));
        let roots = FsRoots::new([dir.path(""), dir.path(".")]).unwrap();
        assert_eq!(roots.roots(), &[std::fs::canonicalize(&dir.0).unwrap()]);
    }

    #[tokio::test]
    async fn reads_whole_file() {
        let (dir, roots) = fixture();
        assert_eq!(read(&roots, &dir.text("root/a.txt")).await.unwrap(), "one\ntwo\nthree\nfour\n");
    }

    #[tokio::test]
    async fn read_honours_line_and_limit() {
        let (dir, roots) = fixture();
        let path = dir.text("root/a.txt");
        let cases: &[(Option<u32>, Option<u32>, &str)] = &[
            (Some(2), Some(2), "two\nthree\n"),
            (Some(3), None, "three\nfour\n"),
            (None, Some(1), "one\n"),
            (Some(1), Some(0), ""),
            (Some(0), Some(1), "one\n"),
            (Some(4), Some(10), "four\n"),
            (Some(5), None, ""),
            (Some(99), Some(1), ""),
        ];
        for &(line, limit, expected) in cases {
            let response = roots.read_text_file(&read_request(&path, line, limit)).await.unwrap();
            assert_eq!(response.content, expected, "line {line:?} limit {limit:?}");
        }
        // `null` reads as absent.
        let mut request = read_request(&path, None, None);
        request.line = MaybeUndefined::Null;
        request.limit = MaybeUndefined::Null;
        assert_eq!(roots.read_text_file(&request).await.unwrap().content, "one\ntwo\nthree\nfour\n");
    }

    #[test]
    fn slice_lines_keeps_line_endings() {
        assert_eq!(slice_lines("a\r\nb\r\nc", Some(2), Some(1)), "b\r\n");
        assert_eq!(slice_lines("a\nb\nc", Some(3), Some(5)), "c");
        assert_eq!(slice_lines("a\nb\nc", Some(2), None), "b\nc");
        assert_eq!(slice_lines("", Some(1), Some(1)), "");
        assert_eq!(slice_lines("a\n\nb", Some(2), Some(1)), "\n");
        assert_eq!(slice_lines("é\nü\n", Some(2), None), "ü\n");
        assert_eq!(slice_lines("x", Some(u32::MAX), Some(u32::MAX)), "");
    }

    #[tokio::test]
    async fn write_creates_missing_file() {
        let (dir, roots) = fixture();
        write(&roots, &dir.text("root/new.txt"), "fresh\n").await.unwrap();
        assert_eq!(std::fs::read_to_string(dir.path("root/new.txt")).unwrap(), "fresh\n");
    }

    #[tokio::test]
    async fn write_replaces_existing_content() {
        let (dir, roots) = fixture();
        write(&roots, &dir.text("root/a.txt"), "short").await.unwrap();
        assert_eq!(std::fs::read_to_string(dir.path("root/a.txt")).unwrap(), "short");
        assert_eq!(read(&roots, &dir.text("root/a.txt")).await.unwrap(), "short");
    }

    #[tokio::test]
    async fn write_does_not_create_parent_directories() {
        let (dir, roots) = fixture();
        let path = dir.text("root/missing/new.txt");
        let error = write(&roots, &path, "x").await.unwrap_err();
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert!(!dir.path("root/missing").exists());
    }

    #[tokio::test]
    async fn relative_path_is_refused() {
        let (_dir, roots) = fixture();
        for path in ["a.txt", "root/a.txt", "./a.txt", ""] {
            assert_refused(&read(&roots, path).await.unwrap_err(), path, "an absolute path");
            assert_refused(&write(&roots, path, "x").await.unwrap_err(), path, "an absolute path");
        }
    }

    #[tokio::test]
    async fn parent_component_is_refused_even_inside_a_root() {
        let (dir, roots) = fixture();
        std::fs::create_dir(dir.path("root/sub")).unwrap();
        let inside = dir.text("root/sub/../a.txt");
        assert_refused(&read(&roots, &inside).await.unwrap_err(), &inside, "a path without .. components");
        assert_refused(&write(&roots, &inside, "x").await.unwrap_err(), &inside, "a path without .. components");
        let escaping = dir.text("root/../outside/secret.txt");
        assert_refused(&read(&roots, &escaping).await.unwrap_err(), &escaping, "a path without .. components");
        assert_eq!(std::fs::read_to_string(dir.path("root/a.txt")).unwrap(), "one\ntwo\nthree\nfour\n");
    }

    #[tokio::test]
    async fn nul_byte_is_refused() {
        let (dir, roots) = fixture();
        let path = format!("{}\0x", dir.text("root/a.txt"));
        assert_refused(&read(&roots, &path).await.unwrap_err(), &path, "a path without NUL bytes");
    }

    #[tokio::test]
    async fn plain_path_outside_roots_is_refused() {
        let (dir, roots) = fixture();
        let path = dir.text("outside/secret.txt");
        assert_outside(&read(&roots, &path).await.unwrap_err(), &path);
        let new = dir.text("outside/new.txt");
        assert_outside(&write(&roots, &new, "x").await.unwrap_err(), &new);
        assert!(!dir.path("outside/new.txt").exists());
    }

    #[tokio::test]
    async fn sibling_with_root_as_name_prefix_is_outside() {
        let (dir, roots) = fixture();
        std::fs::create_dir(dir.path("root2")).unwrap();
        std::fs::write(dir.path("root2/b.txt"), "b").unwrap();
        let path = dir.text("root2/b.txt");
        assert_outside(&read(&roots, &path).await.unwrap_err(), &path);
    }

    #[tokio::test]
    async fn missing_file_outside_roots_is_refused_not_reported_missing() {
        let (dir, roots) = fixture();
        for relative in ["outside/nothing.txt", "outside/no/such/dir.txt", "nothing/at/all"] {
            let path = dir.text(relative);
            assert_outside(&read(&roots, &path).await.unwrap_err(), &path);
            assert_outside(&write(&roots, &path, "x").await.unwrap_err(), &path);
        }
    }

    #[tokio::test]
    async fn missing_file_is_resource_not_found() {
        let (dir, roots) = fixture();
        let path = dir.text("root/nothing.txt");
        let error = read(&roots, &path).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(data(&error), serde_json::json!({ "path": path }).to_string());
        // A file used as a directory is missing too.
        let under_file = dir.text("root/a.txt/x");
        assert_eq!(read(&roots, &under_file).await.unwrap_err().code, ErrorCode::RESOURCE_NOT_FOUND);
    }

    #[tokio::test]
    async fn non_utf8_file_is_internal_error_naming_the_path() {
        let (dir, roots) = fixture();
        std::fs::write(dir.path("root/bin.dat"), b"secret\xff\xfe").unwrap();
        let path = dir.text("root/bin.dat");
        let error = read(&roots, &path).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert!(error.message.contains(&path), "{}", error.message);
        assert!(!error.message.contains("secret"));
        assert!(error.data.is_none());
    }

    #[tokio::test]
    async fn reading_a_directory_is_internal_error() {
        let (dir, roots) = fixture();
        let path = dir.text("root");
        let error = read(&roots, &path).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert!(error.message.contains(&path));
    }

    #[tokio::test]
    async fn second_root_is_allowed() {
        let dir = TempDir::new();
        std::fs::create_dir(dir.path("one")).unwrap();
        std::fs::create_dir(dir.path("two")).unwrap();
        let roots = FsRoots::new([dir.path("one"), dir.path("two")]).unwrap();
        write(&roots, &dir.text("two/x.txt"), "x").await.unwrap();
        assert_eq!(read(&roots, &dir.text("two/x.txt")).await.unwrap(), "x");
    }

    #[test]
    fn error_data_shapes() {
        let roots = vec![PathBuf::from("/srv/a"), PathBuf::from("/srv/b")];
        let outside = FsError::OutsideRoots { path: "/etc/passwd".into(), roots };
        assert_eq!(
            serde_json::to_string(&outside.to_error_object()).unwrap(),
            concat!(
                r#"{"code":-32602,"message":"invalid params: expected a path inside the allowed roots (/srv/a, /srv/b), "#,
                r#"found /etc/passwd at $.params.path","data":{"path":"$.params.path","#,
                r#""expected":"a path inside the allowed roots (/srv/a, /srv/b)","found":"/etc/passwd"}}"#
            )
        );
        assert_eq!(outside.to_string(), "path `/etc/passwd` is outside the allowed roots (/srv/a, /srv/b)");
        assert!(outside.is_refusal());

        let relative = FsError::NotAbsolute { path: "a\"b".into() };
        assert_eq!(
            data(&ErrorObject::from(&relative)),
            r#"{"path":"$.params.path","expected":"an absolute path","found":"a\"b"}"#
        );

        let missing = FsError::NotFound { path: "/srv/a/\"x\".txt".into() };
        assert!(!missing.is_refusal());
        assert_eq!(
            serde_json::to_string(&ErrorObject::from(missing)).unwrap(),
            r#"{"code":-32002,"message":"file not found: `/srv/a/\"x\".txt`","data":{"path":"/srv/a/\"x\".txt"}}"#
        );

        let io = FsError::Io { path: "/srv/a/x".into(), source: io::Error::from(io::ErrorKind::PermissionDenied) };
        let error = io.to_error_object();
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert!(error.message.starts_with("could not access `/srv/a/x`: "));
        assert!(std::error::Error::source(&io).is_some());
        assert_eq!(io.path(), "/srv/a/x");
    }

    #[cfg(unix)]
    mod symlinks {
        use super::*;
        use std::os::unix::fs::symlink;

        #[tokio::test]
        async fn file_link_to_outside_is_refused_for_read() {
            let (dir, roots) = fixture();
            symlink(dir.path("outside/secret.txt"), dir.path("root/link.txt")).unwrap();
            let path = dir.text("root/link.txt");
            let error = read(&roots, &path).await.unwrap_err();
            assert_outside(&error, &path);
            assert!(!error.message.contains("secret\n"));
        }

        #[tokio::test]
        async fn file_link_to_outside_is_refused_for_write() {
            let (dir, roots) = fixture();
            symlink(dir.path("outside/secret.txt"), dir.path("root/link.txt")).unwrap();
            let path = dir.text("root/link.txt");
            assert_outside(&write(&roots, &path, "pwned").await.unwrap_err(), &path);
            assert_eq!(std::fs::read_to_string(dir.path("outside/secret.txt")).unwrap(), "secret\n");
        }

        #[tokio::test]
        async fn dangling_link_to_outside_is_refused_for_write() {
            let (dir, roots) = fixture();
            symlink(dir.path("outside/planted.txt"), dir.path("root/dangling.txt")).unwrap();
            let path = dir.text("root/dangling.txt");
            assert_outside(&write(&roots, &path, "pwned").await.unwrap_err(), &path);
            assert!(!dir.path("outside/planted.txt").exists());
        }

        #[tokio::test]
        async fn relative_link_escaping_is_refused_for_write() {
            let (dir, roots) = fixture();
            symlink("../outside/planted.txt", dir.path("root/rel.txt")).unwrap();
            let path = dir.text("root/rel.txt");
            assert_outside(&write(&roots, &path, "pwned").await.unwrap_err(), &path);
            assert!(!dir.path("outside/planted.txt").exists());
        }

        #[tokio::test]
        async fn link_inside_roots_is_followed() {
            let (dir, roots) = fixture();
            symlink("a.txt", dir.path("root/alias.txt")).unwrap();
            symlink("created.txt", dir.path("root/to-be.txt")).unwrap();
            assert_eq!(read(&roots, &dir.text("root/alias.txt")).await.unwrap(), "one\ntwo\nthree\nfour\n");
            write(&roots, &dir.text("root/alias.txt"), "via link").await.unwrap();
            assert_eq!(std::fs::read_to_string(dir.path("root/a.txt")).unwrap(), "via link");
            assert!(std::fs::symlink_metadata(dir.path("root/alias.txt")).unwrap().file_type().is_symlink());
            write(&roots, &dir.text("root/to-be.txt"), "new").await.unwrap();
            assert_eq!(std::fs::read_to_string(dir.path("root/created.txt")).unwrap(), "new");
        }

        #[tokio::test]
        async fn link_loop_is_an_error_not_a_hang() {
            let (dir, roots) = fixture();
            symlink("loop-b", dir.path("root/loop-a")).unwrap();
            symlink("loop-a", dir.path("root/loop-b")).unwrap();
            let path = dir.text("root/loop-a");
            assert_eq!(write(&roots, &path, "x").await.unwrap_err().code, ErrorCode::INTERNAL_ERROR);
            assert_eq!(read(&roots, &path).await.unwrap_err().code, ErrorCode::INTERNAL_ERROR);
        }

        #[tokio::test]
        async fn symlinked_directory_escape_is_refused() {
            let (dir, roots) = fixture();
            symlink(dir.path("outside"), dir.path("root/door")).unwrap();
            let secret = dir.text("root/door/secret.txt");
            assert_outside(&read(&roots, &secret).await.unwrap_err(), &secret);
            assert_outside(&write(&roots, &secret, "pwned").await.unwrap_err(), &secret);
            let new = dir.text("root/door/new.txt");
            assert_outside(&write(&roots, &new, "pwned").await.unwrap_err(), &new);
            let missing = dir.text("root/door/nothing.txt");
            assert_outside(&read(&roots, &missing).await.unwrap_err(), &missing);
            assert!(!dir.path("outside/new.txt").exists());
            assert_eq!(std::fs::read_to_string(dir.path("outside/secret.txt")).unwrap(), "secret\n");
        }

        #[tokio::test]
        async fn path_inside_a_symlinked_root_is_allowed() {
            let (dir, _) = fixture();
            symlink(dir.path("root"), dir.path("root-link")).unwrap();
            let roots = FsRoots::new([dir.path("root-link")]).unwrap();
            assert_eq!(roots.roots(), &[std::fs::canonicalize(dir.path("root")).unwrap()]);
            assert_eq!(read(&roots, &dir.text("root-link/a.txt")).await.unwrap(), "one\ntwo\nthree\nfour\n");
            assert_eq!(read(&roots, &dir.text("root/a.txt")).await.unwrap(), "one\ntwo\nthree\nfour\n");
            write(&roots, &dir.text("root-link/new.txt"), "n").await.unwrap();
            assert_eq!(std::fs::read_to_string(dir.path("root/new.txt")).unwrap(), "n");
            let secret = dir.text("outside/secret.txt");
            assert_outside(&read(&roots, &secret).await.unwrap_err(), &secret);
        }
    }
}
