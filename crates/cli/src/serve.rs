//! `agentproto serve`: the demo A2A agent on an SQLite file, or on a PostgreSQL database
//! (`--db postgres://…`), where several `serve` processes are one service: they share the
//! tasks, and live streams, cancels and push deliveries work across them
//! (`agentproto_a2a::server`'s replica bus).
//!
//! It serves the agent card, the JSON-RPC binding at `/` and the HTTP+JSON binding
//! at `/a2a/rest`, as the card declares them, and follows the a2a-tck's
//! `messageId`-prefix contract, so the official TCK can be pointed at it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agentproto_a2a::demo::{card_with_bindings, DemoAgent};
use agentproto_a2a::errors::ErrorTable;
use agentproto_a2a::push::PushOptions;
use agentproto_a2a::recovery::{RecoveryOptions, Retention};
use agentproto_a2a::server::layers::{Cors, RateLimit, RateLimitKey};
use agentproto_a2a::server::{A2aServer, HttpOptions, MissingVersion};
use agentproto_a2a::store::memory::MemoryOptions;
use agentproto_a2a::stream::HubOptions;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// The SQLite database file (created if missing), or a PostgreSQL URL
    /// (`postgres://…` or `postgresql://…`; the schema is created if missing), which
    /// several `serve` processes may share.
    #[arg(long, default_value = "agentproto.db")]
    db: PathBuf,
    /// Keep everything in memory instead of SQLite.
    #[arg(long, conflicts_with = "db")]
    memory: bool,
    /// The URL the card advertises (default: http:// and the address listened on).
    #[arg(long)]
    public_url: Option<String>,
    /// Also serve the gRPC binding (`lf.a2a.v1.A2AService`, HTTP/2 without TLS) on this
    /// address, declared in the card after JSON-RPC and HTTP+JSON (port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    grpc_listen: Option<SocketAddr>,
    /// Use the A2A 1.0.0 HTTP status table (the TCK still checks parts of it).
    #[arg(long)]
    errors_1_0_0: bool,
    /// Treat requests without an A2A-Version header as 1.0 instead of 0.3.
    #[arg(long)]
    lenient_version: bool,
    /// Let push notifications reach loopback and private addresses (tests, local receivers).
    #[arg(long)]
    push_allow_private: bool,
    /// Where the HTTP+JSON binding lives (`""` for the root; some a2a-tck revisions
    /// ignore the prefix the card gives).
    #[arg(long, default_value = "/a2a/rest")]
    rest_prefix: String,
    /// Answer SendMessage before the task finishes unless the request asks to wait
    /// (A2A 0.3's default; a2a-tck revisions from before 1.0 expect it).
    #[arg(long)]
    return_immediately: bool,
    /// Seconds the delayed TCK scenarios wait.
    #[arg(long, default_value_t = 2.0)]
    delay: f64,
    /// Seconds a plain echo stays WORKING before completing (older a2a-tck revisions poll for it).
    #[arg(long, default_value_t = 0.0)]
    echo_delay: f64,
    /// Seconds a request's head (request line and headers) may take: the first from the
    /// connection's accept, later ones on a kept-alive connection from their first byte.
    #[arg(long, default_value_t = 15.0)]
    header_timeout: f64,
    /// Seconds a request's whole body may take once it is read (408 after that).
    #[arg(long, default_value_t = 60.0)]
    body_timeout: f64,
    /// Seconds a kept-alive connection with no request in progress stays open.
    #[arg(long, default_value_t = 60.0)]
    idle_timeout: f64,
    /// The most connections served at once on each listener (one more is answered 503, or
    /// closed on gRPC); lowered to what the open-files limit allows, which is raised to
    /// its hard limit at start.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Seconds a shutdown (SIGTERM, ctrl-c) waits for requests in progress.
    #[arg(long, default_value_t = 10.0)]
    shutdown_timeout: f64,
    /// MiB of stream events held for all subscribers, queued or encoded and not yet
    /// written out; past it the one holding the most is cut off (`event: lagged`, or its
    /// connection closed if it holds an unwritten frame; it resumes from the log).
    #[arg(long, default_value_t = 64)]
    stream_budget_mib: usize,
    /// How long a running turn's lease lasts without renewal (`500ms`, `30s`, `2m`;
    /// renewed every third of it). A task whose turn was running on a server that died is
    /// marked FAILED about one and a half leases later, by whichever server sweeps first.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    turn_lease: Duration,
    /// How long a terminal task is kept after it ends, with its event log, push
    /// deliveries and idempotency keys (`90m`, `24h`, `7d`; `forever` keeps everything).
    #[arg(long, default_value = "24h", value_parser = parse_retention)]
    retain_terminal: Retain,
    /// How long after a task ends a client may still resume its stream with
    /// Last-Event-ID; --retain-terminal may not be shorter.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    resume_window: Duration,
    /// Limit each client to this many requests per period (`100/s`, `6000/m`, `5/10s`);
    /// over it, requests are answered 429 with Retry-After. Off unless given.
    #[arg(long, value_parser = parse_rate)]
    rate_limit: Option<Rate>,
    /// The most requests a client may send at once within --rate-limit (default: the
    /// rate's count).
    #[arg(long, requires = "rate_limit")]
    rate_limit_burst: Option<u32>,
    /// Who a --rate-limit bucket belongs to: `ip` (the client address) or `principal`
    /// (the authenticated caller; anonymous callers count by address).
    #[arg(long, default_value = "ip", value_parser = parse_rate_key, requires = "rate_limit")]
    rate_limit_by: RateLimitKey,
    /// Let browser pages from this origin call the agent (CORS), e.g.
    /// `https://app.example`; repeat for more, `*` for any.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    cors_origins: Vec<String>,
}

/// `--rate-limit`: a number of requests per period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rate {
    requests: u32,
    per: Duration,
}

/// `N/period`, where the period is a unit (`s`, `m`, `h`, `d`) or a duration (`10s`).
fn parse_rate(text: &str) -> Result<Rate, String> {
    let bad = || format!("{text:?} is not a rate such as 100/s or 6000/m");
    let (count, period) = text.trim().split_once('/').ok_or_else(bad)?;
    let requests: u32 = count.trim().parse().map_err(|_| bad())?;
    let period = period.trim();
    let per = if matches!(period, "s" | "m" | "h" | "d") {
        parse_duration(&format!("1{period}"))
    } else {
        parse_duration(period)
    }
    .map_err(|_| bad())?;
    if requests == 0 || per.is_zero() {
        return Err(format!("{text:?}: the count and the period must not be zero"));
    }
    Ok(Rate { requests, per })
}

fn parse_rate_key(text: &str) -> Result<RateLimitKey, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "ip" => Ok(RateLimitKey::ClientIp),
        "principal" => Ok(RateLimitKey::Principal),
        _ => Err(format!("{text:?}: expected ip or principal")),
    }
}

/// `--retain-terminal`: an age, or none (`forever`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Retain(Option<Duration>);

/// A duration: a non-negative number with a unit (`ms`, `s`, `m`, `h`, `d`), or a bare
/// number of seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.trim().parse().map_err(|_| format!("{text:?} is not a duration such as 30s or 24h"))?;
    let scale = match unit {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3_600.0,
        "d" => 86_400.0,
        other => return Err(format!("unknown unit {other:?} in {text:?} (ms, s, m, h or d)")),
    };
    Duration::try_from_secs_f64(value * scale).map_err(|_| format!("{text:?} is not a duration such as 30s or 24h"))
}

fn parse_retention(text: &str) -> Result<Retain, String> {
    if text.trim().eq_ignore_ascii_case("forever") {
        return Ok(Retain(None));
    }
    parse_duration(text).map(|age| Retain(Some(age)))
}

fn seconds(s: f64) -> Duration {
    Duration::from_secs_f64(if s.is_finite() { s.max(0.0) } else { 0.0 })
}

pub(crate) fn main(args: Args) -> ExitCode {
    unmap_large_frees();
    // Every connection holds a descriptor: the soft limit (often 1024) would otherwise
    // cap the connections below --max-connections (the server lowers its cap to fit).
    if let Err(e) = agentproto_a2a::server::descriptors::raise_open_files_limit() {
        eprintln!("agentproto serve: cannot raise the open-files limit: {e}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("agentproto serve: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agentproto serve: {e}");
            ExitCode::from(2)
        }
    }
}

/// Gives large buffers back to the system when they are freed, so that a burst of large
/// requests does not leave the server's memory at the burst's peak.
///
/// glibc serves an allocation of 128 KiB or more from a mapping of its own, unmapped when
/// freed; but after such a free it raises that threshold (up to 32 MiB), and from then on
/// buffers of a few MiB (a request body, its decoded text, an encoded answer) come from
/// its arenas and stay resident after they are freed. Setting the threshold fixes it at
/// its default and turns that adjustment off. Other allocators: nothing to do.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn unmap_large_frees() {
    // SAFETY: `mallopt` sets one of the allocator's tunables; it is called before the
    // runtime starts any thread, and its only failure (an unknown tunable) is a 0 return.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn unmap_large_frees() {}

async fn run(args: Args) -> Result<(), String> {
    // Warnings of the server (a push delivery the SSRF guard refused, a dead letter) on stderr.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .try_init();
    let listener =
        tokio::net::TcpListener::bind(args.addr).await.map_err(|e| format!("cannot listen on {}: {e}", args.addr))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let base = args.public_url.clone().unwrap_or_else(|| format!("http://{local}"));
    let grpc = match args.grpc_listen {
        Some(addr) => {
            let l = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let at = l.local_addr().map_err(|e| e.to_string())?;
            Some((l, at))
        }
        None => None,
    };
    let grpc_url = grpc.as_ref().map(|(_, at)| at.to_string());
    let agent = DemoAgent {
        delay: Some(Duration::from_secs_f64(args.delay.max(0.0))),
        echo_delay: Duration::from_secs_f64(args.echo_delay.max(0.0)),
    };
    let mut http = HttpOptions {
        rest_prefix: args.rest_prefix.clone(),
        header_timeout: seconds(args.header_timeout),
        body_timeout: seconds(args.body_timeout),
        idle_timeout: seconds(args.idle_timeout),
        max_connections: args.max_connections.max(1),
        shutdown_timeout: seconds(args.shutdown_timeout),
        ..HttpOptions::default()
    };
    if args.lenient_version {
        http.missing_version = MissingVersion::V1_0;
    }
    let private = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"];
    let push = PushOptions {
        allow_loopback: args.push_allow_private,
        allow: if args.push_allow_private {
            private.iter().filter_map(|c| c.parse().ok()).collect()
        } else {
            Vec::new()
        },
        ..PushOptions::default()
    };
    let recovery = RecoveryOptions { lease: args.turn_lease, ..RecoveryOptions::default() };
    let retention =
        Retention { terminal_age: args.retain_terminal.0, resume_window: args.resume_window, ..Retention::default() };
    let hub = HubOptions { budget_bytes: args.stream_budget_mib.saturating_mul(1 << 20), ..HubOptions::default() };
    let builder = A2aServer::builder(agent, card_with_bindings(&base, &args.rest_prefix, grpc_url.as_deref()))
        .http(http)
        .hub(hub)
        .push(push)
        .error_table(if args.errors_1_0_0 { ErrorTable::V1_0_0 } else { ErrorTable::V1_0_1 })
        .recovery(recovery)
        .map_err(|e| format!("--turn-lease: {e}"))?
        .retention(retention)
        .map_err(|e| format!("--retain-terminal: {e}"))?;
    let builder = if args.return_immediately { builder.return_immediately_by_default() } else { builder };
    let builder = match args.rate_limit {
        Some(rate) => builder.rate_limit(RateLimit {
            requests: rate.requests,
            per: rate.per,
            burst: args.rate_limit_burst.unwrap_or(rate.requests).max(1),
            key: args.rate_limit_by,
        }),
        None => builder,
    };
    let builder = if args.cors_origins.is_empty() {
        builder
    } else if args.cors_origins.iter().any(|o| o.trim() == "*") {
        builder.cors(Cors::any_origin())
    } else {
        builder.cors(Cors::origins(args.cors_origins.iter().map(|o| o.trim().to_owned())))
    };
    let (builder, store) = if args.memory {
        (builder.memory(MemoryOptions::default()), "memory".to_owned())
    } else if let Some(url) = postgres_url(&args.db) {
        // The URL may hold a password: it is not printed.
        let builder = builder.postgres(url).await.map_err(|e| format!("cannot use the PostgreSQL database: {e}"))?;
        (builder, "PostgreSQL".to_owned())
    } else {
        let builder = builder.sqlite(&args.db).map_err(|e| format!("cannot open {}: {e}", args.db.display()))?;
        (builder, args.db.display().to_string())
    };
    let mut server = builder.build();
    let grpc_note = match grpc {
        Some((listener, at)) => {
            server = server.grpc(listener);
            format!(", gRPC on {at}")
        }
        None => String::new(),
    };
    let cap = server.max_connections();
    if cap < args.max_connections {
        eprintln!(
            "agentproto serve: at most {cap} connections per listener (not {}): that is what the open-files limit allows",
            args.max_connections
        );
    }
    println!(
        "agentproto serve: listening on http://{local} (card {base}/.well-known/agent-card.json, store {store}{grpc_note}, \
         at most {cap} connections per listener)"
    );
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    server.serve_until_signal(listener).await.map_err(|e| e.to_string())
}

/// `--db` as a PostgreSQL connection URL, when it is one.
fn postgres_url(db: &std::path::Path) -> Option<&str> {
    db.to_str().filter(|db| db.starts_with("postgres://") || db.starts_with("postgresql://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_unit_and_retention_may_be_forever() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1_500)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86_400)));
        for bad in ["", "h", "-1s", "1w", "NaNs", "1e400s", "ten"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_retention("forever"), Ok(Retain(None)));
        assert_eq!(parse_retention("1h"), Ok(Retain(Some(Duration::from_secs(3_600)))));
    }

    #[test]
    fn rates_take_a_count_and_a_period() {
        let rate = |requests, secs| Ok(Rate { requests, per: Duration::from_secs(secs) });
        assert_eq!(parse_rate("100/s"), rate(100, 1));
        assert_eq!(parse_rate("6000/m"), rate(6000, 60));
        assert_eq!(parse_rate("5/10s"), rate(5, 10));
        assert_eq!(parse_rate(" 7 / h "), rate(7, 3_600));
        for bad in ["", "100", "0/s", "1/0s", "x/s", "1/w", "-1/s"] {
            assert!(parse_rate(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_rate_key("IP"), Ok(RateLimitKey::ClientIp));
        assert_eq!(parse_rate_key("principal"), Ok(RateLimitKey::Principal));
        assert!(parse_rate_key("user").is_err());
    }

    #[test]
    fn a_postgres_url_selects_postgres_and_anything_else_is_a_file() {
        for url in ["postgres://u@h/db", "postgresql:///db?host=/tmp/x"] {
            assert_eq!(postgres_url(std::path::Path::new(url)), Some(url));
        }
        for file in ["agentproto.db", "./postgres://x", "/var/lib/postgresql.db"] {
            assert_eq!(postgres_url(std::path::Path::new(file)), None);
        }
    }
}
