//! agentproto's A2A server (`agentproto-a2a`, by path) for the A2A benchmark: the JSON-RPC
//! binding at `/` on `127.0.0.1:0`, the in-memory store (`MemoryOptions::default()`) unless
//! `--store` names SQLite or PostgreSQL, and the seed's executors. Prints `LISTENING <port>`.
//! With `--grpc`, the port printed is the gRPC binding's (`lf.a2a.v1.A2AService`, HTTP/2
//! without TLS; JSON-RPC stays on another ephemeral port).
//!
//! With the PostgreSQL store, each line `stats` on stdin is answered on stdout with
//! `STATS {json}`: the store's counters (`PostgresStore::stats`: commits, transactions,
//! round trips, statements, other calls), read by `bench/a2a/pg_cost.py` before and after
//! a run. Stdin closed (as the benchmark starts it) ends only that reader.
//!
//! A message whose id starts with `noop` runs the NoopExecutor (Working → Completed);
//! any other runs the EchoExecutor (Working → artifact "echo" with the text
//! "Echo: benchmark" → Completed), as the seed's fixtures do.

use std::io::Write;

use agentproto_a2a::errors::A2aError;
use agentproto_a2a::executor::{AgentExecutor, RequestContext, TaskUpdater};
use agentproto_a2a::server::A2aServer;
use agentproto_a2a::store::memory::MemoryOptions;
use agentproto_a2a::store::postgres::{ListenOptions, PgListener, PostgresOptions, PostgresStore};
use agentproto_a2a::v1::{AgentCard, AgentSkill, Artifact, Part, PartContent};

struct Bench;

impl AgentExecutor for Bench {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        task.working(None).await?;
        if !cx.message.message_id.starts_with("noop") {
            let part = Part::new(PartContent::Text("Echo: benchmark".into()));
            task.artifact(Artifact::new("echo", vec![part])).await?;
        }
        task.complete(None).await
    }
}

fn card() -> AgentCard {
    let skill = AgentSkill::new("echo", "Echo", "Echoes input", vec!["echo".to_owned(), "benchmark".to_owned()]);
    AgentCard::builder("Bench Agent", "Benchmark agent", "1.0.0")
        .jsonrpc_interface("http://127.0.0.1/")
        .streaming()
        .skill(skill)
        .build()
}

/// `--store memory` (the default), `--store sqlite PATH` or `--store postgres CONFIG` (a
/// tokio-postgres connection string; several processes on one database form one service).
async fn server(args: &[String]) -> std::io::Result<A2aServer<Bench>> {
    let builder = A2aServer::builder(Bench, card());
    let failed = |e: agentproto_a2a::store::StoreError| std::io::Error::other(e.to_string());
    let builder = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] | ["--store", "memory"] => builder.memory(MemoryOptions::default()),
        ["--store", "sqlite", path] => builder.sqlite(path).map_err(failed)?,
        ["--store", "postgres", config] => {
            // What `Builder::postgres` does, keeping a handle on the store for its counters.
            let store = PostgresStore::connect(config, PostgresOptions::default()).await.map_err(failed)?;
            let mut listener = PgListener::new(config, ListenOptions::default()).map_err(failed)?;
            listener.connect().await.map_err(failed)?;
            answer_stats(store.clone());
            builder.postgres_store(store, listener)
        }
        other => {
            return Err(std::io::Error::other(format!(
                "usage: [--store memory|sqlite PATH|postgres CONFIG], got {other:?}"
            )))
        }
    };
    Ok(builder.build())
}

/// Answers each `stats` line on stdin with the store's counters, until stdin closes.
fn answer_stats(store: PostgresStore) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { return };
            if line.trim() != "stats" {
                continue;
            }
            let s = store.stats();
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                r#"STATS {{"commits":{},"transactions":{},"round_trips":{},"statements":{},"other_calls":{}}}"#,
                s.commits, s.transactions, s.round_trips, s.statements, s.other_calls
            );
            let _ = out.flush();
        }
    });
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let grpc = args.iter().position(|a| a == "--grpc").map(|at| args.remove(at)).is_some();
    let mut server = server(&args).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut port = listener.local_addr()?.port();
    if grpc {
        let grpc_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        port = grpc_listener.local_addr()?.port();
        server = server.grpc(grpc_listener);
    }
    let mut out = std::io::stdout();
    writeln!(out, "LISTENING {port}")?;
    out.flush()?;
    server.serve(listener).await
}
