/**
 * `RemoteAgentServer`: an ACP agent served at one endpoint on `node:http`, over
 * Streamable HTTP and WebSocket, as the ACP transports RFD describes them.
 *
 *     POST   /acp  one client→agent message (`application/json`). `initialize` without an
 *                  `Acp-Connection-Id` creates a connection and is answered 200 with the
 *                  agent's answer and the header; anything else 202, its answer coming on
 *                  a stream. A batch (a JSON array) 501; a body over the limit 413.
 *     GET    /acp  `Accept: text/event-stream`: the connection-scoped stream
 *                  (`Acp-Connection-Id`), or a session's (also `Acp-Session-Id`).
 *     GET    /acp  `Upgrade: websocket`: a new connection, one message per text frame
 *                  both ways (`websocket.ts`); binary frames are ignored.
 *     DELETE /acp  ends the connection (202).
 *
 * A missing `Acp-Connection-Id` is 400, one this server does not hold 404, and so is an
 * `Acp-Session-Id` the connection does not have (another connection's included). A
 * second reader of a stream already open is 409. Every ACP connection gets a fresh agent
 * from the factory, and its own connection runtime over the framing of `framing.ts`: the
 * same validation, ordering, backpressure and cancellation as on stdio; a bad message is
 * answered on the connection stream and the connection goes on. The limits are
 * `ServerLimits`.
 *
 * Node's HTTP server speaks HTTP/1.1, not the HTTP/2 the RFD asks of Streamable HTTP:
 * every open stream holds one TCP connection (the official SDKs' clients and ours work
 * over HTTP/1.1). WebSocket is unaffected.
 */

import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

import { resolveLimits, type ResolvedLimits, type ServerLimits } from "./limits.js";
import { CONNECTION_ID_HEADER, isBatch, scan, SESSION_ID_HEADER } from "./routing.js";
import { ServedConnection, type ConnectFn, type OutStream } from "./served.js";
import { encodeEvents, KEEPALIVE } from "./sse.js";
import { acceptKey, CloseCode, WebSocketEnd } from "./websocket.js";

/** Where the server answers (`null`: any path) and how much it holds. */
export interface RemoteServerOptions {
  /** The endpoint's path. Default `/acp`. */
  path?: string | null;
  limits?: ServerLimits;
}

type Lookup = { status: number; reason: string; connection: null } | { connection: ServedConnection; session: string | undefined };

/** Serves agents made by `connect` (one per ACP connection). Attach it to a `node:http`
 * server (`attach`), or route requests and upgrades to `handleRequest` and `handleUpgrade`. */
export class RemoteAgentServer {
  readonly limits: ResolvedLimits;
  /** The live ACP connections, by `Acp-Connection-Id`. */
  readonly connections = new Map<string, ServedConnection>();
  readonly path: string | null;
  private reaper: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(
    private readonly connect: ConnectFn,
    options: RemoteServerOptions = {},
  ) {
    this.limits = resolveLimits(options.limits);
    this.path = options.path === undefined ? "/acp" : options.path;
  }

  /** Routes `server`'s requests and upgrades here and applies the header timeout. */
  attach(server: Server): void {
    server.headersTimeout = this.limits.headersTimeout;
    server.requestTimeout = 0; // SSE streams are long; bodies are bounded by size, headers by time
    server.on("request", (req: IncomingMessage, res: ServerResponse) => this.handleRequest(req, res));
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head));
  }

  /** Ends every connection and waits until they ended (each within its shutdown grace). */
  async close(): Promise<void> {
    this.closing = true;
    if (this.reaper !== null) clearInterval(this.reaper);
    this.reaper = null;
    const served = [...this.connections.values()];
    for (const connection of served) connection.close();
    await Promise.all(served.map((connection) => connection.done));
  }

  // -- connections ----------------------------------------------------------------------

  private open(websocket: boolean): ServedConnection | null {
    if (this.closing || this.connections.size >= this.limits.maxConnections) return null;
    const connection = new ServedConnection(this.connect, this.limits, websocket, (ended) => this.connections.delete(ended.id));
    this.connections.set(connection.id, connection);
    if (!websocket && this.reaper === null) {
      const timeout = this.limits.idleTimeout;
      this.reaper = setInterval(() => this.reap(), Math.min(Math.max(timeout / 4, 10), 5000));
      this.reaper.unref();
    }
    return connection;
  }

  /** Ends Streamable HTTP connections idle for longer than `idleTimeout`. */
  private reap(): void {
    const now = Date.now();
    for (const connection of this.connections.values()) {
      if (!connection.websocket && connection.idleFor(now) > this.limits.idleTimeout) connection.close();
    }
  }

  private lookup(req: IncomingMessage): Lookup {
    const connectionId = header(req, CONNECTION_ID_HEADER);
    if (connectionId === undefined) return { status: 400, reason: "missing Acp-Connection-Id", connection: null };
    const connection = this.connections.get(connectionId);
    if (connection === undefined || connection.ended) return { status: 404, reason: "unknown Acp-Connection-Id", connection: null };
    const session = header(req, SESSION_ID_HEADER);
    if (session !== undefined && !connection.knowsSession(session)) {
      return { status: 404, reason: "unknown Acp-Session-Id for this connection", connection: null };
    }
    return { connection, session };
  }

  // -- HTTP -----------------------------------------------------------------------------

  /** Answers one HTTP request (a WebSocket upgrade goes to `handleUpgrade`). */
  handleRequest(req: IncomingMessage, res: ServerResponse): void {
    res.on("error", () => {}); // a peer that went away: nothing to tell it
    req.on("error", () => {});
    if (this.path !== null && pathOf(req.url) !== this.path) return reply(res, 404, "not found");
    const work =
      req.method === "POST" ? this.post(req, res) : req.method === "GET" ? this.get(req, res) : req.method === "DELETE" ? this.delete(req, res) : null;
    if (work === null) return reply(res, 405, "method not allowed", { allow: "GET, POST, DELETE" });
    work.catch(() => {
      if (!res.headersSent) reply(res, 500, "internal error");
      else res.destroy();
    });
  }

  private async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const contentType = (header(req, "content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    if (contentType !== "application/json") return reply(res, 415, "Content-Type must be application/json");
    const body = await this.body(req);
    if (body === "too large") return refuseBody(req, res);
    if (body === null) return; // the client went away
    if (isBatch(body)) return reply(res, 501, "batch requests are not supported");
    if (header(req, CONNECTION_ID_HEADER) === undefined) return this.initialize(body, res);
    const found = this.lookup(req);
    if (found.connection === null) return reply(res, found.status, found.reason);
    const { connection, session } = found;
    connection.touch();
    if (session !== undefined) {
      const head = scan(body);
      if (head !== null && head.isRequest && head.id !== undefined) connection.routeAnswer(head.id, session);
    }
    if (!(await connection.feed.put(body))) return reply(res, 404, "the connection ended");
    connection.touch();
    reply(res, 202);
  }

  /** The whole body, `"too large"` past the limit (by its length, or as it arrives), `null` when the client went away. */
  private async body(req: IncomingMessage): Promise<Buffer | "too large" | null> {
    const limit = this.limits.maxBodyBytes;
    const declared = header(req, "content-length");
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) return "too large";
    // Read by events, not by async iteration: leaving an iteration early would destroy
    // the request, and with it the socket the 413 must still go out on.
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (result: Buffer | "too large" | null): void => {
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("close", onClose);
        resolve(result);
      };
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        if (size > limit) {
          req.pause();
          finish("too large");
        } else chunks.push(chunk);
      };
      const onEnd = (): void => finish(Buffer.concat(chunks, size));
      const onClose = (): void => finish(null);
      req.on("data", onData);
      req.on("end", onEnd);
      req.on("close", onClose);
    });
  }

  private async initialize(body: Buffer, res: ServerResponse): Promise<void> {
    const head = scan(body);
    if (head === null || !head.isRequest || head.method !== "initialize" || head.id === undefined) {
      return reply(res, 400, "missing Acp-Connection-Id (only an initialize request may omit it)");
    }
    const connection = this.open(false);
    if (connection === null) return reply(res, 503, "too many connections", { "retry-after": "1" });
    const answer = connection.expectAnswer(head.id);
    await connection.feed.put(body);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), this.limits.initializeTimeout)));
    const line = await Promise.race([answer, timeout]);
    clearTimeout(timer);
    if (line === "timeout") {
      connection.close();
      return reply(res, 504, "the agent did not answer initialize in time");
    }
    if (line === null) return reply(res, 500, "the connection ended before initialize was answered");
    connection.touch();
    res.writeHead(200, { "content-type": "application/json", "content-length": line.length, [CONNECTION_ID_HEADER]: connection.id });
    res.end(line);
  }

  private async get(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const accept = (header(req, "accept") ?? "").toLowerCase();
    if (!accept.includes("text/event-stream") && !accept.includes("*/*")) return reply(res, 406, "Accept must include text/event-stream");
    const found = this.lookup(req);
    if (found.connection === null) return reply(res, found.status, found.reason);
    const { connection, session } = found;
    if (connection.websocket) return reply(res, 409, "this connection is a WebSocket");
    const stream = session === undefined ? connection.main : connection.sessionStream(session);
    if (stream.attached) return reply(res, 409, "this stream is already open");
    stream.attached = true;
    try {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      res.flushHeaders();
      await this.stream(connection, stream, res);
    } finally {
      stream.attached = false;
      connection.touch();
    }
  }

  private async stream(connection: ServedConnection, stream: OutStream, res: ServerResponse): Promise<void> {
    let gone = false;
    const onClose = (): void => {
      gone = true;
      stream.wake();
    };
    res.on("close", onClose);
    try {
      for (;;) {
        await stream.wait(this.limits.keepaliveInterval);
        if (gone) return;
        const lines = stream.take();
        let room: boolean;
        if (lines.length > 0) {
          const pieces = encodeEvents(lines);
          if (pieces.length === 1) room = res.write(pieces[0] as Uint8Array); // one chunk for all of them
          else {
            res.cork();
            for (const piece of pieces) res.write(piece);
            res.uncork();
            room = !res.writableNeedDrain;
          }
        } else if (connection.ended) {
          break;
        } else {
          room = res.write(KEEPALIVE);
        }
        if (!room && !(await drained(res, connection))) {
          res.destroy(); // the connection ended while this peer was not reading
          return;
        }
      }
      res.end();
    } finally {
      res.off("close", onClose);
    }
  }

  private async delete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const found = this.lookup(req);
    if (found.connection === null) return reply(res, found.status, found.reason);
    this.connections.delete(found.connection.id);
    found.connection.close();
    reply(res, 202);
  }

  // -- WebSocket ------------------------------------------------------------------------

  /** Takes over an upgrade request: a WebSocket at the endpoint becomes a new connection. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => {});
    if (this.path !== null && pathOf(req.url) !== this.path) return rawReply(socket, 404, "Not Found");
    if (req.method !== "GET" || (header(req, "upgrade") ?? "").toLowerCase() !== "websocket") return rawReply(socket, 400, "Bad Request");
    const key = header(req, "sec-websocket-key");
    if (key === undefined || Buffer.from(key, "base64").length !== 16) return rawReply(socket, 400, "Bad Request");
    if (header(req, "sec-websocket-version") !== "13") return rawReply(socket, 426, "Upgrade Required", "Sec-WebSocket-Version: 13\r\n");
    const connection = this.open(true);
    if (connection === null) return rawReply(socket, 503, "Service Unavailable", "Retry-After: 1\r\n");
    socket.write(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${acceptKey(key)}\r\nAcp-Connection-Id: ${connection.id}\r\n\r\n`,
    );
    void this.websocket(connection, new WebSocketEnd(socket, "server", this.limits.maxBodyBytes, head));
  }

  private async websocket(connection: ServedConnection, socket: WebSocketEnd): Promise<void> {
    const reading = (async () => {
      for (;;) {
        const messages = await socket.receiveMany();
        if (messages === null) return;
        connection.touch();
        if (!(await connection.feed.putMany(messages))) return;
      }
    })();
    const writing = wsWrite(connection, socket);
    // Either the peer closed (its close was answered; what is left to write has nowhere
    // to go) or the connection ended by itself: its last lines are written, then the close.
    await Promise.race([reading, writing]);
    connection.close();
    await connection.done;
    await writing;
    socket.close(CloseCode.normal);
    await reading;
  }
}

async function wsWrite(connection: ServedConnection, socket: WebSocketEnd): Promise<void> {
  const stream = connection.main;
  stream.attached = true;
  for (;;) {
    await stream.wait(null);
    const lines = stream.take();
    if (lines.length === 0 && connection.ended) return;
    const room = socket.sendTexts(lines); // one write for all of them
    if (socket.closed) return;
    if (!room) {
      const wake = await Promise.race([socket.drained().then(() => "drained" as const), connection.done.then(() => "ended" as const)]);
      if (wake === "ended" && socket.socket.writableNeedDrain) {
        socket.destroy(); // the connection ended while this peer was not reading
        return;
      }
    }
  }
}

/** Resolves `true` once `res` can take more, `false` when the connection ended or the peer left first. */
async function drained(res: ServerResponse, connection: ServedConnection): Promise<boolean> {
  if (!res.writableNeedDrain) return true;
  let onDrain: () => void = () => {};
  let onClose: () => void = () => {};
  const wake = await Promise.race([
    new Promise<"drain">((resolve) => res.once("drain", (onDrain = () => resolve("drain")))),
    new Promise<"closed">((resolve) => res.once("close", (onClose = () => resolve("closed")))),
    connection.done.then(() => "ended" as const),
  ]);
  res.off("drain", onDrain);
  res.off("close", onClose);
  return wake === "drain";
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return "";
  const query = url.indexOf("?");
  return query < 0 ? url : url.slice(0, query);
}

function reply(res: ServerResponse, status: number, body = "", headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  const all: Record<string, string | number> = { ...headers, "content-length": Buffer.byteLength(body) };
  if (body !== "") all["content-type"] = "text/plain; charset=utf-8";
  res.writeHead(status, all);
  res.end(body);
}

/** 413, and the connection closed after it: the rest of the body is never read. */
function refuseBody(req: IncomingMessage, res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.on("finish", () => {
    req.socket.end();
    setTimeout(() => req.socket.destroy(), 1000).unref();
  });
  reply(res, 413, "body too large", { connection: "close" });
}

function rawReply(socket: Duplex, status: number, reason: string, extra = ""): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\n${extra}Content-Length: 0\r\n\r\n`);
}
