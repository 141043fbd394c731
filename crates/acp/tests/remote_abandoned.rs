//! 10,000 Streamable HTTP connections opened and abandoned against our Rust server, run
//! in its own process (this test binary run again, as `serve_for_the_abandoned_test`) so
//! that its memory can be read from /proc: each is an `initialize` POST (an ACP connection
//! and its agent) and then nothing. With the idle timeout set short, the server reaps
//! them: its peak memory stays bounded (the connections do not pile up, and the
//! 1024-connection cap holds while they do), none is left afterwards, every abandoned id
//! is unknown (404), and a new client still gets two prompt turns with their updates.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use agentproto_acp::remote::{connect, RemoteOptions, RemoteServer, ServerLimits, CONNECTION_ID_HEADER};
use agentproto_acp::v1::*;

mod remote_peers;
use remote_peers::{within, Collect, Words};

const CHILD: &str = "AGENTPROTO_ABANDONED_SERVER";
const CONNECTIONS: usize = 10_000;
const BATCH: usize = 200;
const IDLE_TIMEOUT: Duration = Duration::from_millis(500);
/// The server's resident memory may grow by at most this much over its size before the
/// first connection (measured ~50 MB on the reference machine, debug build, with ~1,000
/// live at a time; the bound leaves room).
const GROWTH_BOUND_MB: f64 = 100.0;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
const NEW_SESSION: &str = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;

/// The server side, when run as the child of the test below (otherwise it does nothing):
/// serves `Words` on 127.0.0.1, prints `port N`, answers each `count` line on its stdin
/// with `connections N`, and exits when its stdin ends.
#[test]
fn serve_for_the_abandoned_test() {
    let Ok(idle_ms) = std::env::var(CHILD) else { return };
    let idle = Duration::from_millis(idle_ms.parse().unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let limits = ServerLimits::default().idle_timeout(idle);
        let server = RemoteServer::agent::<V1, _, _>(Words::default, AcpOptions::default(), limits);
        let serving = server.clone();
        tokio::spawn(async move { serving.serve(listener, tokio_util::sync::CancellationToken::new()).await });
        println!("port {port}");
        server
    });
    for line in std::io::stdin().lock().lines() {
        if line.unwrap() == "count" {
            println!("connections {}", server.connection_count());
        }
    }
    std::process::exit(0);
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start() -> Server {
        let exe = std::env::current_exe().unwrap();
        let mut child = Command::new(exe)
            .args(["serve_for_the_abandoned_test", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, IDLE_TIMEOUT.as_millis().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server { child, stdin, stdout }
    }

    /// The value after `key ` in the next line of output holding it (the test harness
    /// prints its own lines too). Bounded: the child prints it or exits, ending the output.
    fn next(&mut self, key: &str) -> usize {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server exited");
            // Not necessarily at the start: the harness prints `test NAME ... ` first.
            if let Some(at) = line.find(&format!("{key} ")) {
                return line[at + key.len() + 1..].split_whitespace().next().unwrap().parse().unwrap();
            }
        }
    }

    fn connections(&mut self) -> usize {
        writeln!(self.stdin, "count").unwrap();
        self.next("connections")
    }

    /// VmRSS and VmHWM, in kB.
    fn memory_kb(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| -> u64 {
            let line = status.lines().find(|l| l.starts_with(name)).unwrap();
            line[name.len()..].trim().trim_end_matches("kB").trim().parse().unwrap()
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `initialize` POST, left at that: its status and connection id.
async fn abandon(client: &reqwest::Client, url: &str) -> (u16, Option<String>) {
    let response =
        within(client.post(url).header("content-type", "application/json").body(INITIALIZE).send()).await.unwrap();
    let id = response.headers().get(CONNECTION_ID_HEADER).map(|v| v.to_str().unwrap().to_owned());
    let status = response.status().as_u16();
    within(response.bytes()).await.unwrap();
    (status, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_abandoned_connections_are_reaped_in_bounded_memory() {
    if !std::path::Path::new("/proc/self/status").exists() {
        return; // reads /proc
    }
    let mut server = Server::start();
    let url = format!("http://127.0.0.1:{}/acp", server.next("port"));
    let client = reqwest::Client::new();
    assert_eq!(abandon(&client, &url).await.0, 200); // warmed up
    let (before, _) = server.memory_kb();
    let started = Instant::now();
    let (mut opened, mut refused) = (0, 0);
    let mut sample = Vec::new();
    for _ in (0..CONNECTIONS).step_by(BATCH) {
        let answers = futures::future::join_all((0..BATCH).map(|_| abandon(&client, &url))).await;
        for (status, _) in &answers {
            match status {
                200 => opened += 1,
                503 => refused += 1, // the cap, while the reaper catches up
                other => panic!("unexpected status {other}"),
            }
        }
        sample.extend(answers.into_iter().take(1).filter(|(s, _)| *s == 200).filter_map(|(_, id)| id));
    }
    let opening = started.elapsed();
    assert!(opened > 1024, "connections were reaped while others opened: {opened} opened, {refused} refused");
    let (_, peak) = server.memory_kb();
    let growth_mb = (peak - before) as f64 / 1024.0;
    eprintln!(
        "rust acp server, {CONNECTIONS} abandoned connections in {:.1} s ({opened} opened, {refused} refused): \
         VmHWM {peak} kB, {growth_mb:.1} MB over the {before} kB before",
        opening.as_secs_f64()
    );
    assert!(growth_mb < GROWTH_BOUND_MB, "VmHWM {peak} kB, {before} kB before");
    // Once the idle timeout (and the reaper's period) has passed, with room for a loaded
    // machine, none is left; asking about an id is activity, so each is asked once.
    tokio::time::sleep(IDLE_TIMEOUT * 4 + Duration::from_secs(2)).await;
    assert_eq!(server.connections(), 0);
    for id in &sample {
        let answer = client
            .post(&url)
            .header("content-type", "application/json")
            .header(CONNECTION_ID_HEADER, id)
            .body(NEW_SESSION);
        assert_eq!(within(answer.send()).await.unwrap().status(), 404);
    }
    // And the server still serves.
    let collect = Collect::default();
    let (agent, transport) =
        within(connect::<V1, _>(&url, collect.clone(), AcpOptions::default(), RemoteOptions::new())).await.unwrap();
    within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.unwrap();
    let session = within(agent.open_session("/")).await.unwrap();
    for turn in ["one two three", "four five six seven"] {
        collect.text.lock().unwrap().clear();
        let answer = within(session.prompt(turn)).await.unwrap();
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        assert_eq!(collect.text.lock().unwrap().as_str(), turn);
    }
    within(transport.close()).await;
}
