"""Flow vectors (vectors/acp/v1/flows/): message sequences that check the protocol-state
rules of the ACP roles through a real connection. Format: vectors/README.md, "Flows".
The vocabulary is `flow_steps.py`; the flows themselves are `flows_agent.py` and
`flows_client.py`."""

from __future__ import annotations

from vectorlib import *  # noqa: F403
from flow_steps import FLOWS
from flows_agent import build_agent_flows
from flows_client import build_client_flows

__all__ = ["FLOWS", "build_flows"]

REQUIREMENTS.update({
    "acp.state.initialize-first": {"source": "spec: notes/acp.md sections 4.1 and 5 (initialize is always the first message); sdk: -32600 as TS agents do",
        "text": "Until `initialize` has completed, every other request is answered -32600 and every notification is dropped, on both sides; nothing reaches the application. (What the agent reads after `initialize`, before answering it, waits instead: acp.state.pipelining.)"},
    "acp.state.pipelining": {"source": "spec: JSON-RPC 2.0 (a client need not wait for an answer before its next request); sdk: crates/acp endpoint module docs (Pipelined messages)",
        "text": "The agent answers pipelined requests by read order, not by which handler runs first: one read after `initialize` waits for it and is served if it succeeded (-32600 if it failed), one naming a session waits for a `session/new` read before it. A client application's call made while its `initialize` is unanswered waits for the answer instead of failing."},
    "acp.state.initialize-once": {"source": "spec: notes/acp.md section 4.1 (initialize: first message); sdk: a repeated initialize is an invalid request",
        "text": "`initialize` succeeds once per connection: after a successful one, another is answered -32600 and the negotiated state is kept; one that failed (an error answer, a panicking handler) does not count and may be retried."},
    "acp.state.local-initialize-first": {"source": "sdk: crates/acp role documentation (calls before initialize fail locally)",
        "text": "A client application's calls and notifications before `initialize` completed fail locally with NotInitialized and put nothing on the wire (unless its `initialize` is in flight: acp.state.pipelining)."},
    "acp.state.version-negotiation": {"source": "spec: notes/acp.md section 1 (Negotiation)",
        "text": "The agent answers the requested protocolVersion when it speaks it and otherwise its own (1 for a v1 agent); a client that does not speak the answered version fails `initialize` (UnsupportedVersion) and stays uninitialized."},
    "acp.state.content-gate": {"source": "spec: schema $defs/PromptCapabilities (text and resource_link are baseline, other content must be opted in to) and $defs/McpCapabilities; rules/acp.toml [[v1.values]]",
        "text": "A prompt block or MCP server kind the agent did not advertise, or one no schema lists, is answered -32602 with the path of the offending item; baseline kinds are always accepted."},
    "acp.state.capability-gate": {"source": "spec: notes/acp.md section 4.1 (Gate column) and section 5; spec: notes/acp.md section 3 (-32602 for an unadvertised elicitation mode)",
        "text": "A request for a gated method the receiving side did not advertise (absent, false or null) is answered -32601 with data.capability, an unadvertised elicitation mode -32602 at $.params.mode; an advertised one (true or an object) is dispatched."},
    "acp.state.session-gate": {"source": "spec: schema ClientRequest session/set_mode (\"The mode must be one of the modes advertised in `availableModes` during session creation or loading\") and NewSessionResponse.modes (\"Initial mode state if supported by the Agent\"); rules/acp.toml [v1.session_gates]",
        "text": "`session/set_mode` for a session whose latest opening answer (new, load, resume, fork) carried no `modes` is answered -32602 at $.params.sessionId, and a client application's call for it fails locally with NotAnnounced and sends nothing; with `modes` it is served."},
    "acp.state.outgoing-capability-gate": {"source": "spec: notes/acp.md section 5 (peers only use what the other side advertised); sdk: AcpError::CapabilityNotAdvertised",
        "text": "A call to a gated method the peer did not advertise fails locally with CapabilityNotAdvertised and nothing is sent."},
    "acp.state.unknown-session": {"source": "spec: notes/acp.md section 3 (-32002 with data.sessionId) and section 10 trap 6",
        "text": "A request naming a session the receiver does not know (never created or loaded here, or closed) is answered -32002 with data.sessionId; `session/cancel` for one is ignored."},
    "acp.state.update-unknown-session": {"source": "spec: notes/acp.md section 10 trap 9 (updates before the session/new response)",
        "text": "A `session/update` naming a session the client does not know is still delivered to the application."},
    "acp.state.one-prompt-per-session": {"source": "spec: notes/acp.md section 6 (one prompt turn at a time; the client waits for a turn to end before the next prompt); sdk: pipelined requests are decided by read order (issue 17), so a prompt read while a turn runs waits for it rather than being refused by timing",
        "text": "A session runs at most one prompt turn at a time: another `session/prompt` for it, read while a turn runs, waits for that turn to end and then runs (a `session/cancel` read after both cancels both); other sessions are unaffected."},
    "acp.state.cancel-prompt": {"source": "spec: notes/acp.md section 6 (Cancellation: the agent MUST answer the prompt with stopReason cancelled, never an error)",
        "text": "After `session/cancel` the running prompt turn is answered with stopReason `cancelled` whatever the handler returns; a handler error outside cancellation is passed on and ends the turn."},
    "acp.state.cancel-outgoing-requests": {"source": "spec: notes/acp.md section 6 (on session/cancel the agent sends $/cancel_request for its outstanding requests)",
        "text": "The agent's calls to the client inside a turn resolve with the client's answers; on `session/cancel` the agent cancels its outstanding ones with `$/cancel_request`, ends them as cancelled and ignores late answers."},
    "acp.state.cancel-permission": {"source": "spec: notes/acp.md section 6 (the client MUST answer every pending session/request_permission with the cancelled outcome)",
        "text": "When the client sends `session/cancel`, every pending permission request of that session is answered {\"outcome\":{\"outcome\":\"cancelled\"}}; otherwise the application's answer is sent."},
    "acp.state.cancel-request": {"source": "spec: notes/acp.md section 6 ($/cancel_request: the receiver MUST still answer, partial result or -32800)",
        "text": "`$/cancel_request` naming a pending request makes the receiver answer it -32800 (and frees what it held, such as the prompt turn); one naming no pending request is ignored."},
    "acp.state.extensions": {"source": "spec: notes/acp.md section 8 (extension methods)",
        "text": "After `initialize`, an unhandled extension request is answered -32601, an unhandled extension notification is ignored, and a handled one reaches the application under its full name with its params unchanged."},
    "acp.state.invalid-params": {"source": "spec: JSON-RPC 2.0 section 5.1; sdk: -32602 data carries path, expected, found",
        "text": "Through a live connection, a request whose params fail validation is answered -32602 with data.path and leaves the session state unchanged."},
})


def build_flows():
    build_agent_flows()
    build_client_flows()
