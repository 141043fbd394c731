//! A throwaway PostgreSQL server for tests.
//!
//! [`PgCluster::start`] runs `initdb` in a temporary directory and starts `postgres` on a
//! Unix socket in that directory (no TCP port), with durability off (the tests check
//! behaviour, not crash safety). [`PgCluster::shared`] starts one per test process, and
//! [`PgCluster::database`] hands out a fresh database on it, dropped again with its
//! [`TestDb`].
//!
//! **Binaries.** `AGENTPROTO_PG_BIN` if set, else the directory on `PATH` that holds
//! `initdb` and `postgres`, else the newest `/usr/lib/postgresql/*/bin` (where Debian's
//! `postgresql` package puts them, off `PATH`). None found is a test failure naming the
//! package, never a skip.
//!
//! **Root.** PostgreSQL refuses to run as root. A test process running as root (as in
//! CI) runs `initdb` and `postgres` as the `postgres` user (made by the Debian package),
//! or `nobody` if there is none, through `setpriv`, after giving it the directory.
//!
//! **Stopping.** A small `sh` supervisor runs `initdb` and then `postgres`; it leads its
//! own process group and reads its standard input from a pipe this process holds: the
//! lifeline. When the pipe closes (the [`PgCluster`] is dropped, or this process exits
//! in any way, SIGKILL included: the kernel closes the pipe) the supervisor stops
//! `postgres` (SIGTERM then SIGQUIT: immediate shutdown, in which PostgreSQL itself
//! SIGKILLs a backend that takes over 5 s), waits for it and removes the directory; killed during `initdb`,
//! it lets `initdb` finish first. That is what stops the shared cluster, which as a
//! static is never dropped. Dropping a cluster also waits for the supervisor (bounded),
//! then SIGKILLs the whole group and removes the directory whatever happened. Every wait
//! here is bounded.
//!
//! **Restarting.** The lifeline also carries commands, one a line: `stop` shuts the
//! server down as `pg_ctl stop -m fast` does (SIGINT: sessions are terminated and open
//! transactions rolled back) and waits for it, `start` starts it again on the same data
//! directory and socket. [`PgCluster::stop_server`] and [`PgCluster::start_server`] send
//! them and wait for the answer (and for the server to accept connections); a test that
//! restarts the server starts a cluster of its own, never the shared one.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use agentproto_process::{isolate, Group};

/// How long `initdb` may take.
const INITDB_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the supervisor may take to stop the server and clean up.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);
/// How long creating or dropping a test database may take.
const DB_TIMEOUT: Duration = Duration::from_secs(30);

const INSTALL_HINT: &str = "install the Debian package with `apt-get install -y postgresql` \
     (or set AGENTPROTO_PG_BIN to the directory holding initdb and postgres)";

/// The supervisor. Arguments: the directory, the binaries' directory, the uid and gid
/// to run as (empty: as itself), then the server's settings. It runs `initdb`, starts
/// the server, prints the server's pid (or `initdb-failed`), waits for the end of its
/// standard input, stops the server and removes the directory. Started before `initdb`,
/// so that a test process killed at any point after it leaves nothing behind.
///
/// A background command of a shell without job control starts with SIGINT and SIGQUIT
/// ignored, so a server that has not installed its handlers yet would lose a SIGQUIT:
/// SIGTERM goes first (before the handlers it terminates the server; after them it
/// asks for a smart shutdown, which the SIGQUIT that follows makes immediate).
const SUPERVISOR: &str = r#"
trap '' PIPE
dir=$1 bin=$2 uid=$3 gid=$4
shift 4
server=
if [ -n "$uid" ]; then
    set -- setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$bin/postgres" -D "$dir/data" -k "$dir" "$@"
    setpriv --reuid="$uid" --regid="$gid" --clear-groups -- \
        "$bin/initdb" -U postgres -A trust -E UTF8 --locale=C --no-sync -D "$dir/data" >"$dir/initdb.log" 2>&1
else
    set -- "$bin/postgres" -D "$dir/data" -k "$dir" "$@"
    "$bin/initdb" -U postgres -A trust -E UTF8 --locale=C --no-sync -D "$dir/data" >"$dir/initdb.log" 2>&1
fi
ok=
if [ $? -eq 0 ]; then
    ok=1
    "$@" >>"$dir/postgres.log" 2>&1 </dev/null &
    server=$!
    echo "$server"
else
    echo initdb-failed
fi
while read -r command; do
    case $command in
    stop)
        if [ -n "$server" ]; then
            kill -INT "$server" 2>/dev/null
            wait "$server"
            server=
        fi
        echo stopped
        ;;
    start)
        if [ -z "$server" ] && [ -n "$ok" ]; then
            "$@" >>"$dir/postgres.log" 2>&1 </dev/null &
            server=$!
        fi
        echo "started ${server:-none}"
        ;;
    esac
done
if [ -n "$server" ]; then
    kill -TERM "$server" 2>/dev/null
    kill -QUIT "$server" 2>/dev/null
    wait "$server"
fi
rm -rf "$dir"
"#;

/// A running throwaway server.
#[derive(Debug)]
pub struct PgCluster {
    /// Holds the data directory (`data/`), the socket and the log; `None` once removed.
    dir: Option<tempfile::TempDir>,
    socket_dir: PathBuf,
    /// The supervisor, leader of the group.
    supervisor: Option<Child>,
    /// Its standard input: commands, and closing it stops everything.
    lifeline: Mutex<Option<ChildStdin>>,
    /// The lines the supervisor prints, read by a thread of their own.
    answers: Mutex<mpsc::Receiver<String>>,
    group: Group,
    /// The server's pid (0 while it is stopped).
    server_pid: AtomicU32,
    next_db: AtomicU64,
}

/// A fresh database on a [`PgCluster`], dropped with this handle.
#[derive(Debug)]
pub struct TestDb {
    /// A connection string for it (`host=<socket dir> … dbname=…`).
    pub config: String,
    pub name: String,
    admin: String,
}

static SHARED: OnceLock<PgCluster> = OnceLock::new();

impl PgCluster {
    /// The cluster of this test process, started on first use. Panics (failing the
    /// test) when PostgreSQL cannot be started, saying why.
    pub fn shared() -> &'static PgCluster {
        SHARED.get_or_init(|| PgCluster::start().unwrap_or_else(|error| panic!("PostgreSQL for the tests: {error}")))
    }

    /// Starts a cluster of its own (stopped when dropped).
    pub fn start() -> Result<PgCluster, String> {
        let bin = find_bin_dir()?;
        let user = run_as()?;
        let dir = tempfile::Builder::new()
            .prefix("agentproto-pg-")
            .tempdir()
            .map_err(|e| format!("temporary directory: {e}"))?;
        let root = dir.path().to_owned();
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&root, Some(uid), Some(gid))
                .map_err(|e| format!("give {} to uid {uid}: {e}", root.display()))?;
        }
        let mut supervisor = Command::new("sh");
        supervisor.arg("-c").arg(SUPERVISOR).arg("agentproto-pg-supervisor").arg(&root).arg(&bin);
        match user {
            Some((uid, gid)) => supervisor.arg(uid.to_string()).arg(gid.to_string()),
            None => supervisor.args(["", ""]),
        };
        for setting in [
            "listen_addresses=",
            "fsync=off",
            "synchronous_commit=off",
            "full_page_writes=off",
            "max_connections=300",
            "shared_buffers=32MB",
        ] {
            supervisor.args(["-c", setting]);
        }
        supervisor.current_dir(&root).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        isolate(&mut supervisor);
        let mut child = supervisor.spawn().map_err(|e| format!("start sh: {e}"))?;
        let group = Group::new(child.id());
        let lifeline = child.stdin.take();
        let (lines, answers) = mpsc::channel();
        // Not joined: the pipe closes when the supervisor ends, and so does this thread.
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { return };
                    if lines.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        let cluster = PgCluster {
            dir: Some(dir),
            socket_dir: root,
            supervisor: Some(child),
            lifeline: Mutex::new(lifeline),
            answers: Mutex::new(answers),
            group,
            server_pid: AtomicU32::new(0),
            next_db: AtomicU64::new(0),
        };
        // The supervisor prints the pid once `initdb` is done (or exits, ending the line).
        let line = cluster.answer(INITDB_TIMEOUT).map_err(|e| format!("initdb: {e}"))?;
        if line.trim() == "initdb-failed" {
            return Err(format!("initdb failed: {}", cluster.read("initdb.log")));
        }
        let pid = line.trim().parse().map_err(|_| format!("the supervisor did not start postgres ({line:?})"))?;
        cluster.server_pid.store(pid, Ordering::SeqCst);
        cluster.wait_ready()?;
        Ok(cluster)
    }

    /// The supervisor's next line, within `timeout`.
    fn answer(&self, timeout: Duration) -> Result<String, String> {
        let answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        answers.recv_timeout(timeout).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => format!("no answer from the supervisor within {timeout:?}"),
            mpsc::RecvTimeoutError::Disconnected => "the supervisor is gone".to_owned(),
        })
    }

    /// Sends the supervisor a command and returns its answer.
    fn command(&self, command: &str, timeout: Duration) -> Result<String, String> {
        {
            let mut lifeline = self.lifeline.lock().unwrap_or_else(PoisonError::into_inner);
            let pipe = lifeline.as_mut().ok_or("the cluster is stopped")?;
            writeln!(pipe, "{command}").and_then(|()| pipe.flush()).map_err(|e| format!("tell the supervisor: {e}"))?;
        }
        self.answer(timeout)
    }

    /// Shuts the server down as `pg_ctl stop -m fast` does and waits until it has exited;
    /// the data directory and the socket directory stay.
    pub fn stop_server(&self) -> Result<(), String> {
        let answer = self.command("stop", STOP_TIMEOUT)?;
        if answer.trim() != "stopped" {
            return Err(format!("unexpected answer to stop: {answer:?}"));
        }
        self.server_pid.store(0, Ordering::SeqCst);
        Ok(())
    }

    /// Starts the server again after [`PgCluster::stop_server`], and waits until it
    /// accepts connections.
    pub fn start_server(&self) -> Result<(), String> {
        let answer = self.command("start", START_TIMEOUT)?;
        let pid = answer
            .trim()
            .strip_prefix("started ")
            .and_then(|pid| pid.parse().ok())
            .ok_or_else(|| format!("the supervisor did not start postgres ({answer:?})"))?;
        self.server_pid.store(pid, Ordering::SeqCst);
        self.wait_ready()
    }

    /// Waits until `postmaster.pid` says the server accepts connections (PostgreSQL
    /// writes `ready` on its status line then), or fails if the server exits first.
    fn wait_ready(&self) -> Result<(), String> {
        let pid_file = self.data_dir().join("postmaster.pid");
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(text) = std::fs::read_to_string(&pid_file) {
                if text.lines().any(|line| line.trim() == "ready") && self.socket_dir.join(".s.PGSQL.5432").exists() {
                    return Ok(());
                }
            }
            if !agentproto_process::running(self.server_pid()) {
                return Err(format!("postgres exited during start-up; its log:\n{}", self.log()));
            }
            if Instant::now() >= deadline {
                return Err(format!("postgres not ready after {START_TIMEOUT:?}; its log:\n{}", self.log()));
            }
            // A bounded poll of a file the server writes; nothing to be woken by.
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    pub fn data_dir(&self) -> PathBuf {
        self.socket_dir.join("data")
    }

    pub fn server_pid(&self) -> u32 {
        self.server_pid.load(Ordering::SeqCst)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        self.read("postgres.log")
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.socket_dir.join(file)).unwrap_or_default()
    }

    /// A connection string for database `name` as the superuser `postgres`.
    pub fn config(&self, name: &str) -> String {
        format!("host={} port=5432 user=postgres dbname={name}", self.socket_dir.display())
    }

    /// A fresh, empty database.
    pub async fn database(&self) -> TestDb {
        let name = format!("a2a_test_{}_{}", std::process::id(), self.next_db.fetch_add(1, Ordering::Relaxed));
        let admin = self.config("postgres");
        tokio::time::timeout(DB_TIMEOUT, admin_execute(&admin, &format!("CREATE DATABASE {name}")))
            .await
            .unwrap_or_else(|_| Err(format!("timed out after {DB_TIMEOUT:?}")))
            .unwrap_or_else(|error| panic!("create database {name}: {error}\nserver log:\n{}", self.log()));
        TestDb { config: self.config(&name), name, admin }
    }

    /// Stops the server and removes the directory: closes the lifeline, waits (bounded)
    /// for the supervisor, then SIGKILLs whatever is left of the group.
    pub fn stop(&mut self) {
        self.lifeline.get_mut().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(child) = self.supervisor.take() {
            let _ = wait_bounded(child, STOP_TIMEOUT);
        }
        self.group.end();
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Drop for TestDb {
    /// Drops the database (closing its connections) from a thread of its own, since a
    /// test's runtime may be the one running this drop.
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        let dropper = std::thread::spawn(move || {
            let runtime =
                tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                tokio::time::timeout(DB_TIMEOUT, admin_execute(&admin, &sql))
                    .await
                    .unwrap_or_else(|_| Err(format!("timed out after {DB_TIMEOUT:?}")))
            })
        });
        let outcome = dropper.join().unwrap_or_else(|_| Err("the dropping thread panicked".into()));
        if let Err(error) = outcome {
            if !std::thread::panicking() {
                panic!("drop database {}: {error}", self.name);
            }
        }
    }
}

/// Runs one statement on its own connection.
pub async fn admin_execute(config: &str, sql: &str) -> Result<(), String> {
    let (client, connection) =
        tokio_postgres::connect(config, tokio_postgres::NoTls).await.map_err(|e| e.to_string())?;
    let driver = tokio::spawn(connection);
    let outcome = client.batch_execute(sql).await.map_err(|e| match e.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => e.to_string(),
    });
    drop(client);
    let _ = driver.await;
    outcome
}

/// The directory holding `initdb` and `postgres` (see "Binaries").
fn find_bin_dir() -> Result<PathBuf, String> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Some(dir) = std::env::var_os("AGENTPROTO_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if has_both(&dir) {
            Ok(dir)
        } else {
            Err(format!("AGENTPROTO_PG_BIN={} holds no initdb and postgres", dir.display()))
        };
    }
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(dir) = std::env::split_paths(&path).find(|dir| has_both(dir)) {
            return Ok(dir);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            has_both(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        format!("the PostgreSQL server (initdb, postgres) is not on PATH nor under /usr/lib/postgresql/*/bin: {INSTALL_HINT}")
    })
}

/// `None` when this process is not root; else the uid and gid to run the server as.
fn run_as() -> Result<Option<(u32, u32)>, String> {
    if id(&["-u"])? != 0 {
        return Ok(None);
    }
    for user in ["postgres", "nobody"] {
        if let (Ok(uid), Ok(gid)) = (id(&["-u", user]), id(&["-g", user])) {
            return Ok(Some((uid, gid)));
        }
    }
    Err("running as root, and neither a `postgres` nor a `nobody` user exists to run the server as".into())
}

fn id(args: &[&str]) -> Result<u32, String> {
    let output = run_bounded(
        {
            let mut command = Command::new("id");
            command.args(args);
            command
        },
        Duration::from_secs(10),
    )?;
    if !output.status.success() {
        return Err(format!("id {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr)));
    }
    String::from_utf8_lossy(&output.stdout).trim().parse().map_err(|e| format!("id {}: {e}", args.join(" ")))
}

/// Runs `command` in a process group of its own and collects its output; past
/// `timeout` the group is killed and this fails.
fn run_bounded(mut command: Command, timeout: Duration) -> Result<Output, String> {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    isolate(&mut command);
    let program = command.get_program().to_string_lossy().into_owned();
    let child = command.spawn().map_err(|e| format!("start {program}: {e}"))?;
    let mut group = Group::new(child.id());
    let (done, outcome) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let result = outcome.recv_timeout(timeout);
    group.end();
    let _ = waiter.join();
    match result {
        Ok(output) => output.map_err(|e| format!("wait for {program}: {e}")),
        Err(_) => Err(format!("{program} did not finish within {timeout:?}")),
    }
}

/// Waits for `child` at most `timeout`; `false` if it was still running.
fn wait_bounded(mut child: Child, timeout: Duration) -> bool {
    let (done, outcome) = mpsc::channel();
    let pid = child.id();
    let waiter = std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    let finished = outcome.recv_timeout(timeout).is_ok();
    if !finished {
        // The waiter returns once the group is killed.
        let _ = agentproto_process::signal_group(pid, agentproto_process::Signal::Kill);
    }
    let _ = waiter.join();
    finished
}
