//! Pipelined requests get one answer per byte sequence: a request written right
//! after `initialize`, before its answer, waits for `initialize` to finish and is
//! then served (or refused when `initialize` failed); one written before any
//! `initialize` is refused at once. A request naming a session that a pipelined
//! `session/new` read before it is still creating waits for it too, and so does a
//! `session/cancel` notification naming it; prompts pipelined on one session run
//! one after the other. On the client
//! side, a typed call made while `initialize` is in flight waits for its answer
//! instead of failing locally.
//!
//! Every wait is bounded and nothing sleeps: the runs repeat on a two-worker
//! runtime, with an `initialize` handler that yields, to give the old race every
//! chance to show.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::v1::*;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

const RUNS: usize = 1_000;

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), future).await.expect("timed out")
}

/// An agent whose `initialize` yields to the scheduler a few times (or waits for
/// the test to open a gate) and may fail; `session/new` always creates `s1`.
#[derive(Default)]
struct Pipelined {
    yields: usize,
    fail_initialize: bool,
    gate: Mutex<Option<oneshot::Receiver<()>>>,
    notes: Arc<Mutex<Vec<String>>>,
}

impl Agent for Pipelined {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        for _ in 0..self.yields {
            tokio::task::yield_now().await;
        }
        let gate = self.gate.lock().unwrap().take();
        if let Some(gate) = gate {
            let _ = gate.await;
        }
        if self.fail_initialize {
            return Err(ErrorObject::internal_error("initialize failed on purpose"));
        }
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        tokio::task::yield_now().await;
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, _: AgentContext, _: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    async fn ext_notification(&self, _: AgentContext, notification: agentproto_acp::ExtMessage) {
        self.notes.lock().unwrap().push(notification.method);
    }

    async fn cancel(&self, _: AgentContext, notification: CancelNotification) {
        self.notes.lock().unwrap().push(format!("cancel {}", notification.session_id));
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;
const NEW_SESSION: &str = r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;
const PROMPT: &str = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;

/// Writes `lines` to a fresh agent in one write and returns the first `count`
/// answers, keyed by id (JSON-RPC answers concurrent requests in any order; the
/// answer to each id is what must not vary).
async fn answers(agent: Pipelined, lines: &[&str], count: usize) -> BTreeMap<i64, Value> {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    let (connection, _) = connect_agent(agent, read, write, AcpOptions::default());
    let running = tokio::spawn(connection.run());
    let (read, mut write) = tokio::io::split(ours);
    let mut input = lines.join("\n");
    input.push('\n');
    write.write_all(input.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(read).lines();
    let mut answers = BTreeMap::new();
    for _ in 0..count {
        let line = within(lines.next_line()).await.unwrap().expect("an answer");
        let answer: Value = serde_json::from_str(&line).unwrap();
        answers.insert(answer["id"].as_i64().expect("a numeric id"), answer);
    }
    // End of input ends the connection; wait for it so no run outlives its test.
    write.shutdown().await.unwrap();
    within(running).await.unwrap().unwrap();
    answers
}

/// Runs the same bytes `RUNS` times and fails listing every distinct outcome with
/// how often it came, unless all runs agree; returns the one outcome.
async fn same_answer_every_time(agent: impl Fn() -> Pipelined, lines: &[&str], count: usize) -> BTreeMap<i64, Value> {
    let mut outcomes: BTreeMap<String, (usize, BTreeMap<i64, Value>)> = BTreeMap::new();
    for _ in 0..RUNS {
        let outcome = answers(agent(), lines, count).await;
        let key = serde_json::to_string(&outcome).unwrap();
        outcomes.entry(key).or_insert((0, outcome)).0 += 1;
    }
    if outcomes.len() > 1 {
        let listed: Vec<String> = outcomes.iter().map(|(key, (n, _))| format!("{n} runs: {key}")).collect();
        panic!("{} different outcomes for the same bytes:\n{}", outcomes.len(), listed.join("\n"));
    }
    outcomes.into_values().next().unwrap().1
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {answer}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_new_pipelined_after_initialize_is_always_served() {
    let outcome =
        same_answer_every_time(|| Pipelined { yields: 3, ..Default::default() }, &[INITIALIZE, NEW_SESSION], 2).await;
    assert_eq!(outcome[&1]["result"]["protocolVersion"], 1, "{outcome:?}");
    assert_eq!(outcome[&2]["result"]["sessionId"], "s1", "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_read_before_initialize_is_always_refused() {
    // Its handler may well run after `initialize` has finished; what counts is
    // that it was read first.
    let early = r#"{"jsonrpc":"2.0","id":0,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;
    let outcome = same_answer_every_time(Pipelined::default, &[early, INITIALIZE], 2).await;
    assert_eq!(error_code(&outcome[&0]), -32600, "{outcome:?}");
    assert_eq!(outcome[&1]["result"]["protocolVersion"], 1, "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_pipelined_after_session_new_is_always_served() {
    let outcome =
        same_answer_every_time(|| Pipelined { yields: 3, ..Default::default() }, &[INITIALIZE, NEW_SESSION, PROMPT], 3)
            .await;
    assert_eq!(outcome[&1]["result"]["protocolVersion"], 1, "{outcome:?}");
    assert_eq!(outcome[&2]["result"]["sessionId"], "s1", "{outcome:?}");
    assert_eq!(outcome[&3]["result"]["stopReason"], "end_turn", "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_cancel_pipelined_while_its_session_opens_waits_for_it() {
    // The cancel names the session the pipelined `session/new` is still creating: it
    // waits for that answer in read order and reaches the agent, never dropped as a
    // cancel for an unknown session.
    let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#;
    let mut dropped = 0;
    for _ in 0..RUNS {
        let notes = Arc::new(Mutex::new(Vec::new()));
        let agent = Pipelined { yields: 3, notes: notes.clone(), ..Default::default() };
        let outcome = answers(agent, &[INITIALIZE, NEW_SESSION, cancel], 2).await;
        assert_eq!(outcome[&2]["result"]["sessionId"], "s1", "{outcome:?}");
        // The waiting cancel reaches the agent from a task of its own once the session
        // is open; the connection's run returns only after that task ended.
        if *notes.lock().unwrap() != ["cancel s1"] {
            dropped += 1;
        }
    }
    assert_eq!(dropped, 0, "the cancel was dropped in {dropped} of {RUNS} runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_pipelined_on_one_session_take_turns_in_read_order() {
    // A client should wait for a turn to end before the next prompt; one that does not
    // still gets the same answers every time: the second prompt waits for the first.
    let second = r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;
    let outcome = same_answer_every_time(
        || Pipelined { yields: 3, ..Default::default() },
        &[INITIALIZE, NEW_SESSION, PROMPT, second],
        4,
    )
    .await;
    assert_eq!(outcome[&3]["result"]["stopReason"], "end_turn", "{outcome:?}");
    assert_eq!(outcome[&4]["result"]["stopReason"], "end_turn", "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_pipelined_after_a_failed_initialize_are_always_refused() {
    let outcome = same_answer_every_time(
        || Pipelined { yields: 3, fail_initialize: true, ..Default::default() },
        &[INITIALIZE, NEW_SESSION, PROMPT],
        3,
    )
    .await;
    assert_eq!(error_code(&outcome[&1]), -32603, "{outcome:?}");
    assert_eq!(error_code(&outcome[&2]), -32600, "{outcome:?}");
    assert_eq!(error_code(&outcome[&3]), -32600, "{outcome:?}");
}

async fn next_answer<R: tokio::io::AsyncBufRead + Unpin>(lines: &mut tokio::io::Lines<R>) -> Value {
    serde_json::from_str(&within(lines.next_line()).await.unwrap().expect("an answer")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_before_initialize_is_refused_at_once_and_one_after_it_waits() {
    let (open, gate) = oneshot::channel();
    let notes = Arc::new(Mutex::new(Vec::new()));
    let agent = Pipelined { gate: Mutex::new(Some(gate)), notes: notes.clone(), ..Default::default() };
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    tokio::spawn(connect_agent(agent, read, write, AcpOptions::default()).0.run());
    let (read, mut write) = tokio::io::split(ours);
    let early = r#"{"jsonrpc":"2.0","id":0,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;
    let note = r#"{"jsonrpc":"2.0","method":"_note","params":{}}"#;
    let after_note = r#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;
    let input = [early, init, NEW_SESSION, note, after_note].join("\n") + "\n";
    write.write_all(input.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(read).lines();
    // `initialize` cannot finish until the gate opens, so this answer did not wait for it.
    let first = next_answer(&mut lines).await;
    assert_eq!((first["id"].as_i64(), error_code(&first)), (Some(0), -32600), "{first}");
    open.send(()).unwrap();
    let mut rest = BTreeMap::new();
    for _ in 0..3 {
        let answer = next_answer(&mut lines).await;
        rest.insert(answer["id"].as_i64().unwrap(), answer);
    }
    assert_eq!(rest[&1]["result"]["protocolVersion"], 1, "{rest:?}");
    assert_eq!(rest[&2]["result"]["sessionId"], "s1", "{rest:?}");
    assert_eq!(rest[&4]["result"]["sessionId"], "s1", "{rest:?}");
    // The notification read after `initialize` was handled, not dropped as early:
    // request 4, read after it, started only once it had been handled.
    assert_eq!(*notes.lock().unwrap(), ["_note"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_initialize_pipelined_waits_for_the_first_and_is_refused() {
    let second = r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}"#;
    let outcome =
        same_answer_every_time(|| Pipelined { yields: 3, ..Default::default() }, &[INITIALIZE, second], 2).await;
    assert_eq!(outcome[&1]["result"]["protocolVersion"], 1, "{outcome:?}");
    assert_eq!(error_code(&outcome[&2]), -32600, "{outcome:?}");
}

/// More pipelined requests than request slots, all waiting for an `initialize`
/// that holds a slot itself: it still finishes, and every one is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_waiting_for_initialize_do_not_starve_it_of_request_slots() {
    let (open, gate) = oneshot::channel();
    let agent = Pipelined { gate: Mutex::new(Some(gate)), ..Default::default() };
    let options = AcpOptions::default()
        .connection(agentproto_jsonrpc::ConnectionOptions::default().max_concurrent_requests(2).backlog(1));
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    tokio::spawn(connect_agent(agent, read, write, options).0.run());
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = vec![INITIALIZE.to_owned()];
    lines.extend((2..40).map(|id| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/tmp","mcpServers":[]}}}}"#)
    }));
    write.write_all((lines.join("\n") + "\n").as_bytes()).await.unwrap();
    // Let the reader fill every slot before `initialize` may finish.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    open.send(()).unwrap();
    let mut lines = BufReader::new(read).lines();
    let mut served = 0;
    for _ in 1..40 {
        let answer = next_answer(&mut lines).await;
        if answer["id"] != 1 {
            assert_eq!(answer["result"]["sessionId"], "s1", "{answer}");
            served += 1;
        }
    }
    assert_eq!(served, 38);
}

/// A client that never gets a request in these tests.
struct Quiet;

impl Client for Quiet {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        Err(ErrorObject::internal_error("not in this test"))
    }

    async fn session_update(&self, _: ClientContext, _: SessionNotification) {}
}

fn pair(agent: Pipelined) -> AgentConnection<V1> {
    let (a, b) = tokio::io::duplex(64 * 1024);
    let (agent_read, agent_write) = tokio::io::split(a);
    let (client_read, client_write) = tokio::io::split(b);
    tokio::spawn(connect_agent(agent, agent_read, agent_write, AcpOptions::default()).0.run());
    let (client_connection, to_agent) = connect_client(Quiet, client_read, client_write, AcpOptions::default());
    tokio::spawn(client_connection.run());
    to_agent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_call_made_while_initialize_is_in_flight_waits_for_its_answer() {
    for _ in 0..100 {
        let agent = pair(Pipelined { yields: 3, ..Default::default() });
        // `join!` polls `initialize` first: it is sent (in flight) when `session/new`
        // checks the state.
        let (init, session) = within(async {
            tokio::join!(
                agent.initialize(InitializeRequest::new(PROTOCOL_VERSION)),
                agent.new_session(NewSessionRequest::new("/tmp", Vec::new())),
            )
        })
        .await;
        init.unwrap();
        assert_eq!(session.unwrap().session_id.to_string(), "s1");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_call_waiting_on_a_failed_initialize_fails_locally() {
    let agent = pair(Pipelined { fail_initialize: true, ..Default::default() });
    let (init, session, cancel) = within(async {
        tokio::join!(
            agent.initialize(InitializeRequest::new(PROTOCOL_VERSION)),
            agent.new_session(NewSessionRequest::new("/tmp", Vec::new())),
            agent.cancel(CancelNotification::new("s1")),
        )
    })
    .await;
    assert!(matches!(init, Err(AcpError::Rpc { .. })), "{init:?}");
    assert!(matches!(session, Err(AcpError::NotInitialized { .. })), "{session:?}");
    assert!(matches!(cancel, Err(AcpError::NotInitialized { .. })), "{cancel:?}");
}

/// An agent whose `session/new` asks the client something and waits for the answer.
struct AsksWhileOpening {
    notes: Arc<Mutex<Vec<String>>>,
}

impl Agent for AsksWhileOpening {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(&self, cx: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        cx.peer().ext_method("_ask", None).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, _: AgentContext, _: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    async fn cancel(&self, _: AgentContext, notification: CancelNotification) {
        self.notes.lock().unwrap().push(format!("cancel {}", notification.session_id));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_waiting_for_its_session_does_not_hold_up_the_answers_the_opener_waits_for() {
    // `session/new` waits for the client's answer to its `_ask`; the answer is read
    // after the pipelined `session/cancel`, and answers are delivered after the
    // notifications read before them. Were the cancel to wait on the serial
    // notification worker for `session/new`, nothing would move again.
    let notes = Arc::new(Mutex::new(Vec::new()));
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    let (connection, _) = connect_agent(AsksWhileOpening { notes: notes.clone() }, read, write, AcpOptions::default());
    let running = tokio::spawn(connection.run());
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = BufReader::new(read).lines();
    let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#;
    write.write_all(format!("{INITIALIZE}\n{NEW_SESSION}\n{cancel}\n").as_bytes()).await.unwrap();
    let mut answered_new = None;
    while answered_new.is_none() {
        let message = next_answer(&mut lines).await;
        if message["method"] == "_ask" {
            let answer = serde_json::json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
            write.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        } else if message["id"] == 2 {
            answered_new = Some(message);
        }
    }
    assert_eq!(answered_new.unwrap()["result"]["sessionId"], "s1");
    write.shutdown().await.unwrap();
    within(running).await.unwrap().unwrap();
    assert_eq!(*notes.lock().unwrap(), ["cancel s1"], "the cancel reached the agent once its session existed");
}
