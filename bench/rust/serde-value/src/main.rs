//! Raw-parse baseline, NOT validating: `serde_json::from_slice::<Value>` into an
//! untyped tree (serde_json's default features, as in seed 000), and answers built
//! as a `Value` tree and written into a reused buffer. It only checks that the line
//! is a JSON object.

use bench_harness::{Adapter, Kind};
use serde_json::{json, Value};

struct SerdeValue;

impl Adapter for SerdeValue {
    fn decode(&mut self, _: Kind, line: &[u8]) -> bool {
        matches!(serde_json::from_slice::<Value>(line), Ok(Value::Object(_)))
    }

    fn encode_session_result(&mut self, id: i64, session_id: &str, out: &mut Vec<u8>) {
        let answer = json!({"jsonrpc": "2.0", "result": {"sessionId": session_id}, "id": id});
        serde_json::to_writer(out, &answer).expect("encodes");
    }

    fn encode_initialize_result(&mut self, id: i64, out: &mut Vec<u8>) {
        let answer = json!({"jsonrpc": "2.0", "result": {"protocolVersion": 1}, "id": id});
        serde_json::to_writer(out, &answer).expect("encodes");
    }
}

fn main() -> std::process::ExitCode {
    bench_harness::main(SerdeValue)
}
