/**
 * One ACP connection served remotely: its agent, its connection runtime, and the
 * streams its output is routed to.
 *
 * Everything the agent writes goes through the connection's `LineSink` into one of the
 * `OutStream`s: over WebSocket there is one, the socket; over Streamable HTTP the
 * connection-scoped stream and one per session. A response goes where the request it
 * answers came from (the session named by the POST's `Acp-Session-Id`, else the
 * connection stream); a request or notification of the agent goes to the stream of the
 * session its `params.sessionId` names, else the connection stream. One stream carries
 * its messages in the order the connection wrote them, so a `session/update` never
 * overtakes the answer that follows it. Lines queued for a stream nobody has opened yet
 * wait there, within the connection's byte bound.
 */

import { randomUUID } from "node:crypto";

import type { Connection } from "../../jsonrpc/connection.js";
import { idKey, type RequestId } from "../../jsonrpc/id.js";
import type { ByteSink, ByteSource } from "../../jsonrpc/transport.js";
import { LineSink, MessageFeed, type LineDestination } from "./framing.js";
import type { ResolvedLimits } from "./limits.js";
import { scan } from "./routing.js";

/** Connects a fresh agent to a pair of byte streams: the connection to run and the
 * agent's handle to the client (which says which sessions the connection has). */
export type ConnectFn = (input: ByteSource, output: ByteSink) => { connection: Connection; client: { knowsSession(sessionId: string): boolean } };

/** The lines waiting for one stream (an SSE response or the WebSocket). */
export class OutStream {
  private lines: Uint8Array[] = [];
  /** Whether a reader holds the stream (a second one is refused). */
  attached = false;
  private waiter: (() => void) | null = null;

  constructor(private readonly owner: ServedConnection) {}

  push(line: Uint8Array): void {
    this.lines.push(line);
    this.wake();
  }

  wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  /** Everything queued, in order (the connection's bound is released). */
  take(): Uint8Array[] {
    const lines = this.lines;
    if (lines.length === 0) return lines;
    this.lines = [];
    let size = 0;
    for (const line of lines) size += line.length;
    this.owner.sent(size);
    return lines;
  }

  /** Resolves when lines are queued, the connection ended, or after `timeout` ms (`null`: no limit). */
  wait(timeout: number | null): Promise<void> {
    if (this.lines.length > 0 || this.owner.ended) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = timeout === null ? null : setTimeout(done, timeout);
      this.waiter = done;
      function done(): void {
        if (timer !== null) clearTimeout(timer);
        resolve();
      }
    });
  }
}

/** One ACP connection on the server, from its `initialize` (or WebSocket upgrade) to its end. */
export class ServedConnection implements LineDestination {
  readonly id = randomUUID();
  readonly feed: MessageFeed;
  readonly sink: LineSink;
  readonly connection: Connection;
  /** The connection-scoped stream (the socket, over WebSocket). */
  readonly main = new OutStream(this);
  readonly sessions = new Map<string, OutStream>();
  /** Resolves once the connection has ended (its runtime stopped, its streams woken). */
  readonly done: Promise<void>;
  ended = false;
  lastActivity = Date.now();
  private readonly handle: { knowsSession(sessionId: string): boolean };
  private queued = 0;
  private readonly routes = new Map<string, string>();
  private initialize: { key: string; answer: (line: Uint8Array | null) => void } | null = null;

  constructor(
    connect: ConnectFn,
    limits: ResolvedLimits,
    readonly websocket: boolean,
    private readonly onEnd: (connection: ServedConnection) => void,
  ) {
    this.feed = new MessageFeed(limits.maxQueuedBytes);
    this.sink = new LineSink(this, limits.maxQueuedBytes, limits.stallTimeout);
    const { connection, client } = connect(this.feed, this.sink);
    this.connection = connection;
    this.handle = client;
    // A failed transport ends this connection only.
    this.done = connection.run().then(
      () => this.end(),
      () => this.end(),
    );
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.feed.close();
    void this.sink.close();
    this.initialize?.answer(null);
    this.initialize = null;
    this.wakeStreams();
    this.onEnd(this);
  }

  private wakeStreams(): void {
    this.main.wake();
    for (const stream of this.sessions.values()) stream.wake();
  }

  /** Ends the connection: its input ends (handlers get the connection's grace), then its
   * streams end once what was written is sent. */
  close(): void {
    this.feed.close();
  }

  // -- what the agent writes ------------------------------------------------------------

  pending(): number {
    return this.queued;
  }

  closed(): void {
    this.wakeStreams();
  }

  /** A stream handed `size` bytes to its socket. */
  sent(size: number): void {
    this.queued -= size;
    this.sink.room();
  }

  deliver(line: Uint8Array): void {
    let stream = this.main;
    if (!this.websocket || this.initialize !== null) {
      const route = scan(line);
      if (route !== null && route.isResponse) {
        const key = route.id === undefined ? null : idKey(route.id);
        const waiting = this.initialize;
        if (waiting !== null && key === waiting.key) {
          this.initialize = null;
          waiting.answer(line);
          return;
        }
        const session = key === null ? undefined : this.routes.get(key);
        if (key !== null) this.routes.delete(key);
        if (session !== undefined && !this.websocket) stream = this.sessionStream(session);
      } else if (route !== null && !this.websocket) {
        const session = route.paramsSession;
        if (session !== undefined) stream = this.sessionStream(session);
      }
    }
    this.queued += line.length;
    stream.push(line);
  }

  sessionStream(session: string): OutStream {
    let stream = this.sessions.get(session);
    if (stream === undefined) {
      stream = new OutStream(this);
      this.sessions.set(session, stream);
    }
    return stream;
  }

  // -- what the client sends ------------------------------------------------------------

  /** Whether `session` is one of this connection's: its agent opened it, or sent something about it. */
  knowsSession(session: string): boolean {
    return this.sessions.has(session) || this.handle.knowsSession(session);
  }

  /** The answer to `requestId` goes to the stream of `session`. */
  routeAnswer(requestId: RequestId, session: string): void {
    this.routes.set(idKey(requestId), session);
  }

  /** The answer to `requestId`, handed to the caller instead of a stream (`null`: the
   * connection ended first). */
  expectAnswer(requestId: RequestId): Promise<Uint8Array | null> {
    return new Promise((resolve) => {
      this.initialize = { key: idKey(requestId), answer: resolve };
    });
  }

  touch(): void {
    this.lastActivity = Date.now();
  }

  /** Milliseconds without a request or an open stream (0 while a stream is open). */
  idleFor(now: number): number {
    if (this.main.attached) return 0;
    for (const stream of this.sessions.values()) if (stream.attached) return 0;
    return now - this.lastActivity;
  }
}
