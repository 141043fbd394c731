//! End-to-end benchmark agent on the official Rust SDK (`agent-client-protocol`
//! 5.2.0), served on stdio. A prompt whose text is `"<count> <tokens>"` is answered
//! by `count` `agent_message_chunk` updates of `"word "` × `tokens`, then `end_turn`,
//! sent from the prompt handler (`bench_official::streamer`).

use agent_client_protocol::{ConnectTo, Error, Stdio};

#[tokio::main]
async fn main() -> Result<(), Error> {
    bench_official::streamer("bench-official-e2e-agent").connect_to(Stdio::new()).await
}
