/**
 * `TerminalHandle`: the agent side of the `terminal/*` requests (ACP v1), a command the
 * agent runs through its client (the twin of the agent half of the Rust SDK's
 * `terminal/mod.rs` and the Python SDK's `terminal/handle.py`).
 *
 * An agent whose client advertised `terminal: true` asks it to run commands.
 * `TerminalHandle.create(cx, request)` sends `terminal/create` and keeps the id it gets
 * back, so the other four requests need no ids (`output()`, `waitForExit()`, `kill()`,
 * `release()`), and `toolCallContent()` embeds the terminal's live output in a tool call.
 * The agent must release every terminal it creates: call `release()` (a second call does
 * nothing) or declare the handle with `await using`.
 */

import type {
  CreateTerminalRequest,
  KillTerminalResponse,
  TerminalOutputResponse,
  ToolCallContent,
  WaitForTerminalExitResponse,
} from "../generated/acp/v1.js";
import type { AgentContext, ClientConnection } from "../generated/acp/v1.roles.js";
import { Context } from "./context.js";
import type { Endpoint } from "./endpoint.js";

/** A terminal the agent created on the client, by id, with the connection that reaches
 * it. Inside a prompt turn its calls end with `Cancelled` when the turn is cancelled,
 * except `release()`, which is sent even then: the agent must release what it created. */
export class TerminalHandle {
  private isReleased = false;

  /** Wraps a terminal that already exists (`create` is the usual way in). */
  constructor(
    private readonly client: ClientConnection,
    /** The session the terminal belongs to. */
    readonly sessionId: string,
    /** The terminal's id, as the client assigned it. */
    readonly id: string,
  ) {}

  /** Sends `terminal/create` through `peer` (a handler's context or its `cx.peer`) and
   * wraps the new terminal. The client starts the command and answers at once. Rejects
   * with the call's `AcpError` (`CapabilityNotAdvertised` when the client did not
   * advertise `terminal`, `PeerError` with its refusal, ...). */
  static async create(peer: ClientConnection | AgentContext, request: CreateTerminalRequest): Promise<TerminalHandle> {
    const client = peer instanceof Context ? peer.peer : peer;
    const { terminalId } = await client.createTerminal(request);
    return new TerminalHandle(client, request.sessionId, terminalId);
  }

  /** Whether `release()` has been called. */
  get released(): boolean {
    return this.isReleased;
  }

  /** The tool-call content item `{"type":"terminal","terminalId":…}` that shows this
   * terminal's output in a tool call (clients keep showing it after release). */
  toolCallContent(): ToolCallContent {
    return { type: "terminal", terminalId: this.id };
  }

  /** Sends `terminal/output`: the output so far, whether it was truncated, and the exit
   * status once the command has exited. */
  output(): Promise<TerminalOutputResponse> {
    return this.client.terminalOutput({ sessionId: this.sessionId, terminalId: this.id });
  }

  /** Sends `terminal/wait_for_exit`, which the client answers once the command has exited. */
  waitForExit(): Promise<WaitForTerminalExitResponse> {
    return this.client.waitForTerminalExit({ sessionId: this.sessionId, terminalId: this.id });
  }

  /** Sends `terminal/kill`: the command is stopped and the terminal stays valid (its
   * output can still be read; it must still be released). */
  kill(): Promise<KillTerminalResponse> {
    return this.client.killTerminal({ sessionId: this.sessionId, terminalId: this.id });
  }

  /** Sends `terminal/release`: the client kills the command if it still runs and forgets
   * the terminal. Only the first call sends anything (the handle counts as released even
   * if that call fails), and it is sent even when the prompt turn was cancelled. */
  async release(): Promise<void> {
    if (this.isReleased) return;
    this.isReleased = true;
    // Not tied to the prompt turn: a cancelled turn must still release.
    const Plain = this.client.constructor as new (endpoint: Endpoint) => ClientConnection;
    await new Plain(this.client.endpoint).releaseTerminal({ sessionId: this.sessionId, terminalId: this.id });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}
