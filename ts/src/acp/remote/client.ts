/**
 * The client side of ACP over the network: `connectRemote` reaches an agent served at
 * `http://HOST:PORT/acp` over Streamable HTTP (POST + SSE, on the platform's `fetch`) or
 * WebSocket (`ws-client.ts`).
 *
 * The connection runtime is the one stdio uses (through the surface's `connectClient`);
 * the transports only frame its lines:
 *
 * - WebSocket: one text message per line, both ways.
 * - Streamable HTTP: every line is POSTed, one after the other (so the agent receives
 *   them in the order they were written). The first must be `initialize`: its answer
 *   comes in the POST's response with the `Acp-Connection-Id`, after which the
 *   connection-scoped SSE stream is opened, and a session's stream as soon as a session
 *   id appears (an answer's `result.sessionId`, or a message sent for a session). Each
 *   stream keeps its own order; the RFD routes a session's updates and the answers to
 *   that session's requests on one stream, so an update never overtakes the answer it
 *   precedes. An answer to an agent's request carries the session of the stream the
 *   request came on. A message the server refuses (413, 501, …) fails the call it
 *   carried with -32600, as an oversize line does on stdio; a lost connection (404, the
 *   connection stream ending) ends the client connection.
 *
 * Cookies the server sets are kept and sent back on every request and stream of the
 * connection (`CookieJar`).
 */

import type { Connection } from "../../jsonrpc/connection.js";
import { ErrorCode } from "../../jsonrpc/error.js";
import { idKey } from "../../jsonrpc/id.js";
import { encodeResponse } from "../../jsonrpc/message.js";
import type { ByteSink, ByteSource } from "../../jsonrpc/transport.js";
import type { SurfaceView } from "../surface.js";
import { CookieJar } from "./cookies.js";
import { LineSink, MessageFeed } from "./framing.js";
import { CONNECTION_ID_HEADER, scan, sessionHeader, SESSION_ID_HEADER } from "./routing.js";
import { SseParser } from "./sse.js";
import { RemoteRefused, WebSocketTransport } from "./ws-client.js";

const QUEUED_BYTES = 4 * 1024 * 1024;
const CLOSE_TIMEOUT = 5000;

/** How to reach a remote agent. */
export interface RemoteOptions {
  /** WebSocket instead of Streamable HTTP. */
  websocket?: boolean;
  /** Headers sent on every request (e.g. `authorization`). */
  headers?: Record<string, string>;
  /** The largest message accepted from the server. Default 64 MiB. */
  maxMessageSize?: number;
}

interface Transport {
  readonly feed: MessageFeed;
  readonly sink: LineSink;
  readonly cookies: CookieJar;
  readonly connectionId: string | null;
  close(): Promise<void>;
}

/** A connection to a remote agent: its handle (`agent`) and the transport under it.
 * `close()` ends it: the input ends, then the server is told (DELETE, or the close). */
export class RemoteAgent<A> {
  /** Settles once the connection ended (rejects with its `TransportError`, if any). */
  readonly done: Promise<void>;

  constructor(
    readonly agent: A,
    readonly connection: Connection,
    private readonly transport: Transport,
  ) {
    this.done = connection.run().finally(() => transport.close());
    this.done.catch(() => {});
  }

  /** The server's `Acp-Connection-Id` (over HTTP, known once `initialize` was answered). */
  get connectionId(): string | null {
    return this.transport.connectionId;
  }

  /** The cookies the server set. */
  get cookies(): ReadonlyMap<string, string> {
    return this.transport.cookies.cookies;
  }

  async close(): Promise<void> {
    this.transport.feed.close();
    await within(CLOSE_TIMEOUT * 2, this.done.catch(() => {}));
    await this.transport.close();
  }
}

/** Connects to the agent at `url` (`http://HOST:PORT/acp`). `connect` attaches the
 * client to the transport's byte streams, e.g. `(i, o) => v1.connectClient(client, i,
 * o, options)`; `surface` says which methods are session-scoped. The WebSocket handshake
 * happens here (a refusal rejects with `RemoteRefused`); over Streamable HTTP nothing is
 * sent before the first call. */
export async function connectRemote<A>(
  url: string | URL,
  connect: (input: ByteSource, output: ByteSink) => { connection: Connection; agent: A },
  surface: SurfaceView,
  options: RemoteOptions = {},
): Promise<RemoteAgent<A>> {
  const endpoint = new URL(url);
  if (!["http:", "https:", "ws:", "wss:"].includes(endpoint.protocol)) throw new TypeError(`not an http(s) or ws(s) URL: ${String(url)}`);
  const headers = options.headers ?? {};
  const maxMessage = options.maxMessageSize ?? 64 * 1024 * 1024;
  let transport: Transport;
  if (options.websocket === true) {
    const socket = new WebSocketTransport(endpoint, headers, maxMessage, QUEUED_BYTES);
    await socket.open();
    transport = socket;
  } else {
    if (endpoint.protocol === "ws:" || endpoint.protocol === "wss:") endpoint.protocol = endpoint.protocol === "ws:" ? "http:" : "https:";
    transport = new HttpTransport(endpoint, headers, surface, maxMessage);
  }
  const { connection, agent } = connect(transport.feed, transport.sink);
  return new RemoteAgent(agent, connection, transport);
}

/** One ACP connection over Streamable HTTP. */
class HttpTransport implements Transport {
  readonly feed = new MessageFeed(QUEUED_BYTES);
  readonly sink: LineSink;
  readonly cookies = new CookieJar();
  connectionId: string | null = null;
  private lines: Uint8Array[] = [];
  private queued = 0;
  private wakePoster: (() => void) | null = null;
  private readonly poster: Promise<void>;
  private readonly streams = new Map<string | null, { ready: Promise<void>; done: Promise<void> }>();
  /** The session of each agent request read on a session stream: its answer goes there too. */
  private readonly answerRoutes = new Map<string, string>();
  private readonly abort = new AbortController();
  private closed = false;

  constructor(
    private readonly url: URL,
    private readonly headers: Record<string, string>,
    private readonly surface: SurfaceView,
    private readonly maxMessage: number,
  ) {
    this.sink = new LineSink(
      {
        deliver: (line) => {
          this.lines.push(line);
          this.queued += line.length;
          this.wake();
        },
        pending: () => this.queued,
        closed: () => this.wake(),
      },
      QUEUED_BYTES,
      null,
    );
    this.poster = this.postAll();
  }

  private wake(): void {
    const wake = this.wakePoster;
    this.wakePoster = null;
    wake?.();
  }

  // -- client → agent: POSTs ------------------------------------------------------------

  private async postAll(): Promise<void> {
    try {
      for (;;) {
        const line = this.lines.shift();
        if (line === undefined) {
          if (this.sink.closed) return;
          await new Promise<void>((resolve) => (this.wakePoster = resolve));
          continue;
        }
        try {
          await this.send(line);
        } finally {
          this.queued -= line.length;
          this.sink.room();
        }
      }
    } catch {
      this.feed.close(); // a transport failure ends the connection
    }
  }

  private requestHeaders(): Record<string, string> {
    const headers: Record<string, string> = { ...this.headers };
    const cookie = this.cookies.header();
    if (cookie !== undefined) headers["cookie"] = cookie;
    if (this.connectionId !== null) headers[CONNECTION_ID_HEADER] = this.connectionId;
    return headers;
  }

  private async send(line: Uint8Array): Promise<void> {
    const headers: Record<string, string> = { ...this.requestHeaders(), "content-type": "application/json" };
    const head = scan(line);
    if (this.connectionId !== null && head !== null) {
      let session: string | undefined;
      if (head.isResponse) {
        const key = head.id === undefined ? undefined : idKey(head.id);
        session = key === undefined ? undefined : this.answerRoutes.get(key);
        if (key !== undefined) this.answerRoutes.delete(key);
      } else session = sessionHeader(this.surface, head);
      if (session !== undefined) {
        headers[SESSION_ID_HEADER] = session;
        await this.openStream(session);
      }
    }
    const response = await this.fetch("POST", headers, line);
    const body = await readBody(response, this.maxMessage);
    const status = response.status;
    if (status === 200 && this.connectionId === null) {
      const connectionId = response.headers.get(CONNECTION_ID_HEADER);
      if (connectionId === null) throw new RemoteRefused("the initialize answer has no Acp-Connection-Id");
      this.connectionId = connectionId;
      void this.openStream(null);
      await this.feed.put(body);
      this.openedBy(body);
    } else if (status === 200 && body.length > 0) {
      await this.feed.put(body);
    } else if (status === 202 || status === 200) {
      return;
    } else if (status === 404 || this.connectionId === null) {
      throw new RemoteRefused(`the server refused the connection with ${status}`, status);
    } else if (head !== null && head.isRequest && head.id !== undefined) {
      const message = `invalid request: the server refused the message with HTTP ${status}`;
      await this.feed.put(Buffer.from(encodeResponse(head.id, null, { code: ErrorCode.INVALID_REQUEST, message })));
    }
  }

  private async fetch(method: string, headers: Record<string, string>, body?: Uint8Array, signal: AbortSignal = this.abort.signal): Promise<Response> {
    const response = await fetch(this.url, { method, headers, body: body ?? null, signal });
    this.cookies.store(response.headers.getSetCookie());
    return response;
  }

  /** An answer that created or opened a session: its stream is opened. */
  private openedBy(line: Uint8Array): void {
    const session = scan(line)?.resultSession;
    if (session !== undefined) void this.openStream(session);
  }

  // -- agent → client: SSE streams ------------------------------------------------------

  /** Opens the stream of `session` (`null`: the connection's) unless it is open; resolves
   * once the server answered the GET. */
  private openStream(session: string | null): Promise<void> {
    const open = this.streams.get(session);
    if (open !== undefined) return open.ready;
    if (this.closed) return Promise.resolve();
    let ready: () => void = () => {};
    const entry = { ready: new Promise<void>((resolve) => (ready = resolve)), done: Promise.resolve() };
    this.streams.set(session, entry);
    entry.done = this.readStream(session, ready);
    return entry.ready;
  }

  private async readStream(session: string | null, ready: () => void): Promise<void> {
    try {
      const headers: Record<string, string> = { ...this.requestHeaders(), accept: "text/event-stream" };
      if (session !== null) headers[SESSION_ID_HEADER] = session;
      const response = await this.fetch("GET", headers);
      ready();
      if (response.status !== 200 || response.body === null) {
        await response.body?.cancel();
        return;
      }
      const parser = new SseParser(this.maxMessage);
      const reader = response.body.getReader();
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        const events = parser.feed(chunk.value);
        if (events.length === 0) continue;
        for (const data of events) {
          const message = scan(data);
          if (message === null) continue;
          if (session === null) {
            const opened = message.resultSession;
            if (opened !== undefined) void this.openStream(opened);
          } else if (message.isRequest && message.id !== undefined) this.answerRoutes.set(idKey(message.id), session);
        }
        if (!(await this.feed.putMany(events))) return; // all the chunk's events at once
      }
    } catch {
      // The stream failed: handled below like its end.
    } finally {
      ready();
      if (session === null) this.feed.close(); // the connection stream is gone: so is the connection
      else this.streams.delete(session);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    void this.sink.close();
    await within(CLOSE_TIMEOUT, this.poster);
    if (this.connectionId !== null) {
      const deleting = this.fetch("DELETE", this.requestHeaders(), undefined, AbortSignal.timeout(CLOSE_TIMEOUT)).then((r) => r.body?.cancel());
      await deleting.catch(() => {});
    }
    this.abort.abort();
    await within(CLOSE_TIMEOUT, Promise.all([...this.streams.values()].map((s) => s.done)));
    this.feed.close();
  }
}

/** The whole body of `response` (at most `limit` bytes). */
async function readBody(response: Response, limit: number): Promise<Buffer> {
  if (response.body === null) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    size += chunk.value.length;
    if (size > limit) {
      await reader.cancel();
      throw new RemoteRefused(`the response body exceeds ${limit} bytes`);
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks, size);
}

/** Waits for `work`, at most `ms`. */
async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
