//! Lines over the size limit: only their head is judged, their answers are
//! expected, and a trace of them replays to the same findings.

mod common;

use agentproto_inspect::trace::{self, Origin, Record};
use agentproto_inspect::{Direction, Engine, Finding};
use common::INIT;

const MAX: usize = 200;

fn engine() -> Engine {
    let mut engine = Engine::acp().max_message_bytes(MAX);
    for (direction, line) in INIT {
        assert!(engine.observe(direction, line.as_bytes()).findings.is_empty());
    }
    engine
}

fn codes(findings: &[Finding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.rule.code).collect()
}

/// A request whose `id` comes after `filler` bytes of params.
fn big_request(id: u64, filler: usize) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"_big","params":{{"blob":"{}"}},"id":{id}}}"#, "x".repeat(filler))
}

fn run(engine: &mut Engine, lines: &[(Direction, &str)]) -> Vec<&'static str> {
    let mut findings = Vec::new();
    for (direction, line) in lines {
        findings.extend(engine.observe(*direction, line.as_bytes()).findings);
    }
    findings.extend(engine.finish());
    codes(&findings)
}

#[test]
fn an_answer_to_a_request_whose_id_was_past_the_head_is_accepted_once() {
    // The id is beyond the head the framing keeps, so nobody can read it but
    // the peer with a larger limit; its answer is expected, a second is not.
    let request = big_request(41, trace::HEAD_BYTES + 100);
    let answer = r#"{"jsonrpc":"2.0","id":41,"result":{}}"#;
    let stray = r#"{"jsonrpc":"2.0","id":42,"result":{}}"#;
    let got = run(
        &mut engine(),
        &[(Direction::ToAgent, &request), (Direction::ToClient, answer), (Direction::ToClient, stray)],
    );
    assert_eq!(got, ["ACP.TRANSPORT.MAX_MESSAGE_BYTES_EXCEEDED", "ACP.PROTOCOL.UNKNOWN_RESPONSE_ID"]);
}

#[test]
fn a_request_over_the_limit_whose_id_was_read_and_is_never_answered_is_reported() {
    let got = run(&mut engine(), &[(Direction::ToAgent, &big_request(5, MAX))]);
    assert_eq!(got, ["ACP.TRANSPORT.MAX_MESSAGE_BYTES_EXCEEDED", "ACP.PROTOCOL.REQUEST_NEVER_ANSWERED"]);
}

#[test]
fn a_result_over_the_limit_settles_its_call() {
    let prompt = r#"{"jsonrpc":"2.0","id":"p","method":"_slow","params":{}}"#;
    let big_result = format!(r#"{{"jsonrpc":"2.0","id":"p","result":{{"text":"{}"}}}}"#, "y".repeat(MAX));
    let got = run(&mut engine(), &[(Direction::ToAgent, prompt), (Direction::ToClient, &big_result)]);
    assert_eq!(got, ["ACP.TRANSPORT.MAX_MESSAGE_BYTES_EXCEEDED"]);
}

#[test]
fn an_oversize_trace_record_replays_to_the_live_findings() {
    // Live: the proxy hands the engine the length and the head.
    let request = big_request(7, 3 * trace::HEAD_BYTES);
    let answer = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"too large"}}"#;
    let mut live = engine();
    let mut live_findings =
        live.oversize(Direction::ToAgent, request.len() as u64, trace::head(request.as_bytes())).findings;
    live_findings.extend(live.observe(Direction::ToClient, answer.as_bytes()).findings);
    live_findings.extend(live.finish());

    // The trace as the proxy writes it, read back and replayed.
    let mut text = Vec::new();
    for (direction, line) in INIT {
        text.extend(Record::now(direction, Origin::Peer, line.as_bytes()).to_line());
    }
    let mut record = Record::now(Direction::ToAgent, Origin::Peer, trace::head(request.as_bytes()));
    record.oversize = Some(request.len() as u64);
    text.extend(record.to_line());
    text.extend(Record::now(Direction::ToClient, Origin::Peer, answer.as_bytes()).to_line());
    let read = trace::read(&text[..]).unwrap();
    let replayed = Engine::acp().max_message_bytes(MAX).replay(&read.records);

    assert_eq!(codes(&live_findings), ["ACP.TRANSPORT.MAX_MESSAGE_BYTES_EXCEEDED"]);
    assert_eq!(replayed, live_findings);
    // A line longer than the replay's limit is judged by the same head.
    let whole = Engine::acp().max_message_bytes(MAX).replay(&[
        Record::now(INIT[0].0, Origin::Peer, INIT[0].1.as_bytes()),
        Record::now(INIT[1].0, Origin::Peer, INIT[1].1.as_bytes()),
        Record::now(Direction::ToAgent, Origin::Peer, request.as_bytes()),
        Record::now(Direction::ToClient, Origin::Peer, answer.as_bytes()),
    ]);
    assert_eq!(whole, live_findings);
}
