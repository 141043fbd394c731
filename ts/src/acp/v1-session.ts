/**
 * The client-side session object for ACP v1: `Sessions` is a `Client` that routes each
 * session's `session/update` notifications to the `Session` that `open` returned, and
 * hands every other request (permission requests, file system, terminals) to the
 * handlers it was given.
 *
 * ```ts
 * const sessions = new v1.Sessions({ requestPermission: async (cx, p) => ... });
 * const { agent } = await v1.spawnAgent(command, sessions.client);
 * await agent.initialize({ protocolVersion: 1 });
 * const session = await sessions.open(agent, { cwd: process.cwd() });
 * const reply = session.prompt("hello");
 * for await (const update of session.updates()) show(update); // this turn's updates
 * const { stopReason } = await reply;
 * ```
 *
 * Each session keeps its updates in arrival order until they are read (`updates()`,
 * `readText()`), and the end of each turn started with `prompt`; read them, or `close()`
 * the session to stop keeping them. One reader at a time.
 */

import type * as T from "../generated/acp/v1.js";
import type { AgentConnection, Client, ClientContext } from "../generated/acp/v1.roles.js";
import { promptBlocks, type ContentInput } from "./v1-builders.js";

/** The handlers of a `Sessions` client: a `Client` whose `sessionUpdate` is optional
 * (when given, it sees every update too). */
export type SessionHandlers = Omit<Client, "sessionUpdate"> & Partial<Pick<Client, "sessionUpdate">>;

/** What `open` sends besides `cwd`: `mcpServers` defaults to none. */
export type OpenParams = Omit<T.NewSessionRequest, "mcpServers"> & Partial<Pick<T.NewSessionRequest, "mcpServers">>;

type Item = { readonly update: T.SessionUpdate } | { readonly end: true };

/** One session as the client sees it: prompt it, read its updates. */
export class Session {
  private readonly items: Item[] = [];
  private waiter: (() => void) | null = null;
  private closed = false;

  constructor(
    /** The client's handle to the agent. */
    readonly agent: AgentConnection,
    /** The agent's answer to `session/new`. */
    readonly response: T.NewSessionResponse,
    private readonly detach: (session: Session) => void,
  ) {}

  get sessionId(): string {
    return this.response.sessionId;
  }

  /** Runs a prompt turn: text, a content block or blocks. Resolves with the agent's
   * answer once every update of the turn has been queued; a failed turn still ends
   * the turn for `updates()` and `readText()`. */
  async prompt(input: ContentInput | readonly T.ContentBlock[], extra: Omit<T.PromptRequest, "sessionId" | "prompt"> = {}): Promise<T.PromptResponse> {
    try {
      return await this.agent.prompt({ ...extra, sessionId: this.sessionId, prompt: promptBlocks(input) });
    } finally {
      this.push({ end: true });
    }
  }

  /** Asks the agent to end the running turn (`session/cancel`); the turn's `prompt`
   * then resolves with `stopReason: "cancelled"`. */
  cancel(): Promise<void> {
    return this.agent.cancel({ sessionId: this.sessionId });
  }

  /** The updates of the current turn, in arrival order, up to its end (or to `close()`),
   * with those that arrived since the last turn ended first. */
  async *updates(): AsyncGenerator<T.SessionUpdate, void, undefined> {
    for (;;) {
      const item = await this.next();
      if (item === null || "end" in item) return;
      yield item.update;
    }
  }

  /** The text of the agent's message chunks of the current turn, once it has ended;
   * other updates of the turn are read and dropped. */
  async readText(): Promise<string> {
    let out = "";
    for await (const update of this.updates()) {
      if ("sessionUpdate" in update && update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") out += update.content.text;
    }
    return out;
  }

  /** Stops routing this session's updates here (the agent's session is not closed);
   * a pending `updates()` ends. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.items.length = 0;
    this.detach(this);
    this.wake();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /** Queues an update or a turn end (the router's). */
  push(item: Item): void {
    if (this.closed) return;
    this.items.push(item);
    this.wake();
  }

  private wake(): void {
    const wake = this.waiter;
    this.waiter = null;
    wake?.();
  }

  private async next(): Promise<Item | null> {
    while (this.items.length === 0) {
      if (this.closed) return null;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
    return this.items.shift() as Item;
  }
}

/** A `Client` (`sessions.client`) that routes updates to the sessions opened through it. */
export class Sessions {
  /** The `Client` to connect: `connectClient`, `spawnAgent` or `connectPair`. */
  readonly client: Client;
  private readonly sessions = new Map<string, Session>();
  /** Updates for sessions not known yet, kept while a `session/new` is unanswered (agents may send them first). */
  private early = new Map<string, T.SessionUpdate[]>();
  private opening = 0;

  constructor(private readonly handlers: SessionHandlers) {
    const route = (cx: ClientContext, params: T.SessionNotification): Promise<void> | void => {
      this.route(params);
      return handlers.sessionUpdate?.call(handlers, cx, params);
    };
    // Every other handler is the given object's own, called on it.
    this.client = new Proxy(handlers as Client, {
      get(target, key, receiver) {
        if (key === "sessionUpdate") return route;
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
      has(target, key) {
        return key === "sessionUpdate" || Reflect.has(target, key);
      },
    });
  }

  /** Creates a session (`session/new`) and returns it; updates the agent sent for it
   * before its answer are its first. */
  async open(agent: AgentConnection, params: OpenParams): Promise<Session> {
    this.opening++;
    let response: T.NewSessionResponse;
    try {
      response = await agent.newSession({ ...params, mcpServers: params.mcpServers ?? [] });
    } catch (err) {
      this.doneOpening();
      throw err;
    }
    const session = new Session(agent, response, (s) => {
      if (this.sessions.get(s.sessionId) === s) this.sessions.delete(s.sessionId);
    });
    this.sessions.get(session.sessionId)?.close();
    this.sessions.set(session.sessionId, session);
    for (const update of this.early.get(session.sessionId) ?? []) session.push({ update });
    this.early.delete(session.sessionId);
    this.doneOpening();
    return session;
  }

  /** The open session `sessionId`, if any. */
  get(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  private route(params: T.SessionNotification): void {
    const session = this.sessions.get(params.sessionId);
    if (session !== undefined) session.push({ update: params.update });
    else if (this.opening > 0) {
      const list = this.early.get(params.sessionId) ?? [];
      list.push(params.update);
      this.early.set(params.sessionId, list);
    }
  }

  private doneOpening(): void {
    if (--this.opening === 0) this.early = new Map();
  }
}
