//! The `initialize` variants, each on a fresh agent.

use agentproto_jsonrpc::ErrorCode;
use serde_json::{json, Value};

use super::{describe, initialize_params, initialize_result, settle_strays, start, Ctx};

/// One `initialize` variant on a fresh agent, judged under `id`.
pub(super) async fn version_part(
    ctx: &mut Ctx<'_>,
    id: &str,
    label: &str,
    params: Value,
    ok: fn(u16) -> bool,
    wanted: &str,
) {
    let Some(mut d) = start(ctx, label, &[id]) else { return };
    d.ctx.step(label, "initialize");
    let timeout = d.timeout();
    match d.call("initialize", &params).await {
        Err(lost) => d.ctx.ledger.fail(id, format!("the connection ended: {}", lost.0)),
        Ok(None) => d.ctx.ledger.fail(id, format!("no answer within {timeout:?}")),
        Ok(Some(Err(error))) => {
            let should = if wanted.is_empty() { String::new() } else { format!("; it should answer {wanted}") };
            d.ctx.ledger.fail(id, format!("initialize was refused with {}{should}", describe(&error)));
        }
        Ok(Some(Ok(raw))) => match initialize_result(&raw) {
            Ok((response, _)) => {
                let version = response.protocol_version;
                d.ctx
                    .ledger
                    .check(id, ok(version), || format!("answered protocolVersion {version}; expected {wanted}"));
            }
            Err(text) => d.ctx.ledger.fail(id, text),
        },
    }
    settle_strays(&mut d, label);
    d.close(label).await;
}

/// ACP-INIT-006: a protocolVersion that is not an integer, as clients sent
/// before version numbers were integers. Refusing it (-32602) and treating it
/// as an old version (answering a supported one) are both fine.
pub(super) async fn bad_version_part(ctx: &mut Ctx<'_>) {
    const ID: &str = "ACP-INIT-006";
    let label = "protocolVersion \"2024-11-05\"";
    let Some(mut d) = start(ctx, label, &[ID]) else { return };
    d.ctx.step(label, "initialize");
    let timeout = d.timeout();
    match d.call("initialize", &initialize_params(json!("2024-11-05"), d.ctx.options.client_fs)).await {
        Err(lost) => d.ctx.ledger.fail(ID, format!("the connection ended: {}", lost.0)),
        Ok(None) => d.ctx.ledger.fail(ID, format!("no answer within {timeout:?}")),
        Ok(Some(Err(error))) => d.ctx.ledger.check(ID, error.code == ErrorCode::INVALID_PARAMS, || {
            format!("refused with {} instead of -32602", describe(&error))
        }),
        Ok(Some(Ok(raw))) => match initialize_result(&raw) {
            Ok((response, _)) => {
                let version = response.protocol_version;
                d.ctx.ledger.check(ID, version >= 1, || format!("answered protocolVersion {version}"));
            }
            Err(text) => d.ctx.ledger.fail(ID, text),
        },
    }
    settle_strays(&mut d, label);
    d.close(label).await;
}
