/**
 * The HTTP face of the A2A server on `node:http`: the agent card (with ETag and
 * Cache-Control), the JSON-RPC binding and the HTTP+JSON binding (with `/{tenant}/…`
 * routes), both with SSE streams, an auth hook, and the limits: body size (413, from
 * `Content-Length` before anything is read, and while reading), a body timeout (408),
 * header, request and idle timeouts, and a connection cap answered 503 + Retry-After.
 *
 * Requests are decoded by the pure binding layer (`../jsonrpc.ts`, `../rest.ts`) and run
 * by the binding-neutral `A2aCore`. `a2aListener` is a `requestListener`, so the server
 * also mounts under Express, Fastify or any `node:http` app; `A2aHttpServer` adds the
 * connection limits and timeouts.
 */

import { createHash } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";

import { A2aError, type ErrorTable } from "../errors.js";
import type { VersionOptions } from "../http.js";
import { v03Request, v03Result } from "../compat/v03-binding.js";
import { decodeJsonRpcRequest, jsonRpcErrorBody, jsonRpcResultAround, jsonRpcResultBody, jsonRpcV03ErrorBody, type JsonRpcV03Call } from "../jsonrpc.js";
import { encodeResult } from "../operations.js";
import { decodeRestRequest, restErrorBody } from "../rest.js";
import type { A2aRequest, OperationName } from "../../generated/a2a/v1.js";
import type { A2aCore, Answer, CallContext } from "./core.js";
import type { Principal } from "./executor.js";
import { DEFAULT_STREAM_BUDGET_BYTES, StreamBudget } from "./budget.js";
import { eventFrame, frame, sharedEncoding, writeSse, type Frame } from "./sse.js";
import type { StreamOut } from "./stream.js";

/** Decides who is calling: a principal, `null` for an anonymous caller, or a thrown
 * `A2aError` (`Unauthenticated`, `PermissionDenied`) to refuse the request. */
export type AuthHook = (request: IncomingMessage) => Principal | null | Promise<Principal | null>;

/** Options of the HTTP layer. */
export interface HttpOptions extends VersionOptions {
  /** Where the JSON-RPC binding is served (default `/`). */
  readonly jsonRpcPath?: string;
  /** The prefix of the HTTP+JSON routes (default `/a2a/rest`; `""`: the root). */
  readonly restPrefix?: string;
  /** Which A2A revision's HTTP statuses errors use (default 1.0.1). */
  readonly errorTable?: ErrorTable;
  /** Largest request body in bytes (default 4 MiB): 413 beyond it. */
  readonly maxBodyBytes?: number;
  /** The whole body must arrive within this (default 60 s): 408 otherwise. */
  readonly bodyTimeoutMs?: number;
  /** How often an idle SSE stream gets a keep-alive comment (default 15 s). */
  readonly keepAliveMs?: number;
  /** The stream budget: the bytes of SSE frames held for subscribers, all streams
   * together, from encoding until the connection has written them out (default 64 MiB,
   * as `agentproto serve --stream-budget-mib`). Past it the stream holding the most is
   * cut off: `event: lagged`, or its connection closed when it holds an unread frame. */
  readonly streamBudgetBytes?: number;
  /** `Cache-Control: max-age` of the agent card, in seconds (default 300). */
  readonly cardMaxAge?: number;
  readonly authenticate?: AuthHook;
}

/** Options of `A2aHttpServer`: the HTTP layer's and the connection limits. */
export interface ServerOptions extends HttpOptions {
  /** A request's head must arrive within this (default 15 s). */
  readonly headerTimeoutMs?: number;
  /** A whole request (head and body) must arrive within this (default 75 s). */
  readonly requestTimeoutMs?: number;
  /** A kept-alive connection without a request is closed after this (default 60 s). */
  readonly idleTimeoutMs?: number;
  /** The most connections served at once (default 1024); one more is answered 503. */
  readonly maxConnections?: number;
}

/** The `requestListener` of the A2A server. With `next` (Express-style), a request
 * that is not A2A's is passed on instead of answered 404. */
export type A2aListener = (req: IncomingMessage, res: ServerResponse, next?: () => void) => void;

const JSON_TYPE = "application/json";
/** HTTP+JSON success answers (A2A 1.0.1 says SHOULD, as the Rust server does); JSON-RPC and errors stay `application/json`. */
const A2A_JSON_TYPE = "application/a2a+json";

/** What a body read hands back: the body, or the error to answer. */
type BodyDone = (error: A2aError | null, body: Buffer) => void;

/** Where a request being read keeps its read (the listeners below are shared by every
 * request: no closure is made per request). */
const READING = Symbol("a2a body read");

type Reading = IncomingMessage & { [READING]?: BodyRead | null };

/**
 * The body timeouts of one listener: the reads in the order they started (so in the order
 * of their deadlines, the timeout being the same for all) and one timer for the earliest.
 * The timer is left armed when the reads end, and re-armed when it fires early, so a
 * server answering one request after another sets about one timer per timeout, not one
 * per request.
 */
class Deadlines {
  private head: BodyRead | null = null;
  private tail: BodyRead | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private firing = false;

  constructor(readonly ms: number) {}

  add(read: BodyRead): void {
    read.deadline = performance.now() + this.ms;
    read.prev = this.tail;
    read.next = null;
    if (this.tail === null) this.head = read;
    else this.tail.next = read;
    this.tail = read;
    if (this.timer === null && !this.firing) this.arm(this.ms);
  }

  remove(read: BodyRead): void {
    if (read.prev === null) {
      if (this.head !== read) return; // not in the list
      this.head = read.next;
    } else read.prev.next = read.next;
    if (read.next === null) this.tail = read.prev;
    else read.next.prev = read.prev;
    read.prev = read.next = null;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(ms)));
    this.timer.unref();
  }

  private readonly fire = (): void => {
    // While the expired reads are answered, a read added does not arm a timer: it is
    // armed below, for the earliest deadline left.
    this.firing = true;
    const now = performance.now();
    let read = this.head;
    try {
      while (read !== null && read.deadline <= now) {
        this.remove(read);
        read.expire();
        read = this.head;
      }
    } finally {
      this.firing = false;
      this.timer = null;
      if (this.head !== null) this.arm(this.head.deadline - now);
    }
  };
}

/** One request body being read within the size limit and the timeout. With a
 * Content-Length, the body is copied into one buffer of that size as it comes (each chunk
 * is let go at once), not kept in chunks and joined at the end (two copies); the buffer is
 * allocated at the first chunk (a client that sends nothing costs nothing). */
class BodyRead {
  prev: BodyRead | null = null;
  next: BodyRead | null = null;
  deadline = 0;
  private whole: Buffer | null = null;
  private chunks: Buffer[] | null = null;
  private size = 0;

  constructor(
    private readonly req: Reading,
    private readonly max: number,
    /** The declared length (NaN: none). */
    private readonly length: number,
    private readonly deadlines: Deadlines,
    private readonly done: BodyDone,
  ) {}

  data(chunk: Buffer): void {
    if (this.whole === null && this.chunks === null && this.length > 0) {
      // The whole body in one chunk (a small request, most often): it is the body.
      if (chunk.length === this.length) {
        this.whole = chunk;
        this.size = chunk.length;
        if (this.size > this.max) this.finish(tooLarge(this.max));
        return;
      }
      this.whole = Buffer.allocUnsafe(this.length);
    }
    if (this.whole !== null && this.size + chunk.length <= this.whole.length) chunk.copy(this.whole, this.size);
    else (this.chunks ??= []).push(chunk);
    this.size += chunk.length;
    if (this.size > this.max) this.finish(tooLarge(this.max));
  }

  expire(): void {
    this.finish(new A2aError("RequestTimeout", `the request body did not arrive within ${this.deadlines.ms} ms`));
  }

  finish(error: A2aError | null): void {
    const req = this.req;
    if (req[READING] !== this) return;
    req[READING] = null;
    this.deadlines.remove(this);
    req.off("data", onBodyData).off("end", onBodyEnd).off("aborted", onBodyAborted).off("error", onBodyError);
    if (error !== null) {
      req.on("error", ignore);
      req.pause();
      return this.done(error, EMPTY);
    }
    const { whole, chunks, size } = this;
    let body: Buffer;
    if (chunks === null) body = whole === null ? EMPTY : size === whole.length ? whole : whole.subarray(0, size);
    else body = whole === null ? Buffer.concat(chunks, size) : Buffer.concat([whole, ...chunks], size);
    this.done(null, body);
  }
}

const EMPTY = Buffer.alloc(0);

function ignore(): void {}

function onBodyData(this: Reading, chunk: Buffer): void {
  this[READING]?.data(chunk);
}

function onBodyEnd(this: Reading): void {
  this[READING]?.finish(null);
}

function onBodyAborted(this: Reading): void {
  this[READING]?.finish(new A2aError("MalformedBody", "the connection ended before the request body did"));
}

function onBodyError(this: Reading, e: Error): void {
  this[READING]?.finish(new A2aError("MalformedBody", `the request body could not be read: ${e.message}`));
}

/** Reads a request body within the size limit and `deadlines`' timeout; `done` is called
 * once, with the body or the error to answer. */
function readBody(req: IncomingMessage, max: number, deadlines: Deadlines, done: BodyDone): void {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > max) return done(tooLarge(max), EMPTY);
  const length = declared === undefined ? Number.NaN : Number(declared);
  const read = new BodyRead(req, max, Number.isSafeInteger(length) ? length : Number.NaN, deadlines, done);
  (req as Reading)[READING] = read;
  deadlines.add(read);
  req.on("data", onBodyData).on("end", onBodyEnd).on("aborted", onBodyAborted).on("error", onBodyError);
}

function tooLarge(max: number): A2aError {
  return new A2aError("PayloadTooLarge", `the request body is larger than ${max} bytes`);
}

/** Past this size an answer's body is written as bytes, not as text: node copies a text it
 * cannot write at once, and sends a text with the head in one write. */
const TEXT_BODY_LIMIT = 16 * 1024;

/** Sends a whole answer, of `type`: its head, in one array, and its body in one write with
 * the head when small. `extra`: more header fields (not the type nor the length), name and
 * value one after the other. A refusal before the body was read closes the connection. */
function answer(res: ServerResponse, status: number, body: string, type = JSON_TYPE, extra: readonly string[] = NO_HEADERS, close = false): void {
  if (res.headersSent || res.destroyed) return;
  const bytes = body.length <= TEXT_BODY_LIMIT ? null : Buffer.from(body);
  const h = ["content-type", type, "content-length", String(bytes === null ? Buffer.byteLength(body) : bytes.length)];
  for (const field of extra) h.push(field);
  if (close) h.push("connection", "close");
  res.writeHead(status, h);
  if (bytes === null) res.end(body);
  else res.end(bytes);
}

const NO_HEADERS: readonly string[] = [];

/** The first coding a `Transfer-Encoding` or `Content-Encoding` field lists (codings compared
 * without case or parameters) that is not `allowed`, else null. */
function foreignCoding(value: string | undefined, allowed: string): string | null {
  if (value === undefined || value === allowed) return null;
  for (const coding of value.split(",")) {
    const token = (coding.split(";")[0] ?? "").trim();
    if (token !== "" && token.toLowerCase() !== allowed) return token;
  }
  return null;
}

/** A request in a coding this server does not decode is refused, not read as plain JSON:
 * 501 for a transfer coding other than `chunked` (RFC 9112 §6.1, the connection closed),
 * 415 with `Accept-Encoding: identity` for a content coding (RFC 9110 §15.5.16). */
function refusedCoding(req: IncomingMessage, res: ServerResponse): boolean {
  const plain = "text/plain; charset=utf-8";
  const transfer = foreignCoding(req.headers["transfer-encoding"], "chunked");
  if (transfer !== null) {
    answer(res, 501, `transfer coding "${transfer}" is not supported; only chunked is\n`, plain, NO_HEADERS, true);
    return true;
  }
  const content = foreignCoding(req.headers["content-encoding"], "identity");
  if (content !== null) {
    answer(res, 415, `content coding "${content}" is not supported; send the body without one\n`, plain, ["accept-encoding", "identity"]);
    return true;
  }
  return false;
}

/** The card's bytes and validators. */
interface CardCache {
  readonly body: string;
  readonly etag: string;
  readonly lastModified: string;
}

/** Builds the A2A `requestListener` for `core`. */
export function a2aListener(core: A2aCore, options: HttpOptions = {}): A2aListener {
  const jsonRpcPath = options.jsonRpcPath ?? "/";
  const restPrefix = (options.restPrefix ?? "/a2a/rest").replace(/\/+$/, "");
  const table = options.errorTable ?? "1.0.1";
  const maxBody = options.maxBodyBytes ?? 4 << 20;
  const deadlines = new Deadlines(options.bodyTimeoutMs ?? 60_000);
  const keepAlive = options.keepAliveMs ?? 15_000;
  const budget = new StreamBudget(options.streamBudgetBytes ?? DEFAULT_STREAM_BUDGET_BYTES);
  const version: VersionOptions = { ...(options.missingVersion === undefined ? {} : { missingVersion: options.missingVersion }), v03: options.v03 ?? true };
  const cardBody = encodeResult("GetExtendedAgentCard", core.card);
  const card: CardCache = {
    body: cardBody,
    etag: `"${createHash("sha256").update(cardBody).digest("hex").slice(0, 24)}"`,
    lastModified: new Date(Math.floor(Date.now() / 1000) * 1000).toUTCString(),
  };
  const cardMaxAge = options.cardMaxAge ?? 300;
  const cardHeaders: readonly string[] = ["etag", card.etag, "last-modified", card.lastModified, "cache-control", `public, max-age=${cardMaxAge}`];

  function serveCard(req: IncomingMessage, res: ServerResponse): void {
    const inm = req.headers["if-none-match"];
    const ims = req.headers["if-modified-since"];
    const fresh = inm !== undefined ? inm.split(",").some((t) => t.trim() === card.etag || t.trim() === "*") : ims !== undefined && Date.parse(ims) >= Date.parse(card.lastModified);
    if (fresh) {
      res.writeHead(304, cardHeaders as string[]);
      res.end();
      return;
    }
    answer(res, 200, card.body, JSON_TYPE, cardHeaders);
  }

  /** The call context: the tenant from the path, the request or the credential. */
  function callContext(req: IncomingMessage, principal: Principal | null, pathTenant: string | undefined, request: A2aRequest): CallContext {
    const requestTenant = (request.params as { tenant?: string }).tenant ?? "";
    let asked = pathTenant;
    if (requestTenant !== "") {
      if (asked !== undefined && asked !== requestTenant) {
        throw new A2aError("InvalidParams", `the request names two tenants, ${JSON.stringify(asked)} and ${JSON.stringify(requestTenant)}`).with("path", "$.params.tenant");
      }
      asked = requestTenant;
    }
    const bound = principal?.tenant;
    if (asked !== undefined && bound !== undefined && asked !== bound) throw new A2aError("PermissionDenied", `these credentials do not give access to tenant ${JSON.stringify(asked)}`);
    const lastId = req.headers["last-event-id"];
    let lastEventId: number | null = null;
    if (typeof lastId === "string" && lastId.trim() !== "") {
      if (!/^\d{1,15}$/.test(lastId.trim())) throw new A2aError("InvalidRequest", `Last-Event-ID ${JSON.stringify(lastId)} is not an event id of this server`);
      lastEventId = Number(lastId.trim());
    }
    return { tenant: asked ?? bound ?? "", principal, lastEventId };
  }

  /** Runs a request on the core: its answer, or the `A2aError` to refuse it with. */
  async function run(cx: CallContext, request: A2aRequest): Promise<Answer> {
    try {
      return await core.handle(cx, request);
    } catch (e) {
      throw asError(e);
    }
  }

  /** A JSON-RPC request whose body has been read (or could not be: `error`). */
  async function jsonRpc(req: IncomingMessage, res: ServerResponse, query: string, principal: Principal | null, error: A2aError | null, body: Buffer): Promise<void> {
    if (error !== null) return answer(res, error.jsonRpcHttpStatus, jsonRpcErrorBody("null", error), JSON_TYPE, NO_HEADERS, true);
    const call = decodeJsonRpcRequest({ headers: req.headers, query, body }, version);
    if (call.outcome === "refused") {
      if (call.notification) return void res.writeHead(204).end();
      return answer(res, call.error.jsonRpcHttpStatus, jsonRpcErrorBody(call.id, call.error));
    }
    if (call.outcome === "v03") return jsonRpcV03(req, res, call, principal);
    const id = call.id ?? "null";
    const operation = call.request.operation;
    let result: Answer;
    try {
      result = await core.handle(callContext(req, principal, undefined, call.request), call.request);
    } catch (e) {
      if (call.id === null) return void res.writeHead(204).end();
      const error = asError(e);
      return answer(res, error.jsonRpcHttpStatus, jsonRpcErrorBody(id, error));
    }
    if (call.id === null) return void res.writeHead(204).end();
    if (result.kind === "value") return answer(res, 200, jsonRpcResultBody(id, encodeResult(operation, result.value as never)));
    const [before, after] = jsonRpcResultAround(id);
    const render = (item: StreamOut): Frame | null => {
      switch (item.kind) {
        case "event":
          return eventFrame(item.seq, before, sharedEncoding(item.event, operation, () => encodeResult(operation as OperationName, item.event as never)), after);
        case "gap":
          return frame(null, "gap", JSON.stringify({ after: item.after, resumedAt: item.resumedAt }));
        case "error":
          return frame(null, null, jsonRpcErrorBody(id, item.error));
      }
    };
    await writeSse(res, result.open, render, (item) => answer(res, item.error.jsonRpcHttpStatus, jsonRpcErrorBody(id, item.error)), keepAlive, budget);
  }

  /** A 0.3 call: its params converted to 1.0, run by the core, and its answer (each
   * event of a stream) converted back; errors in the 0.3 form. */
  async function jsonRpcV03(req: IncomingMessage, res: ServerResponse, call: JsonRpcV03Call, principal: Principal | null): Promise<void> {
    const id = call.id ?? "null";
    const refuse = (error: A2aError): void => (call.id === null ? void res.writeHead(204).end() : answer(res, error.jsonRpcHttpStatus, jsonRpcV03ErrorBody(id, error)));
    let result: Answer;
    try {
      const request = v03Request(call.method, call.params);
      result = await run(callContext(req, principal, undefined, request), request);
      if (call.id === null) return void res.writeHead(204).end();
      if (result.kind === "value") return answer(res, 200, jsonRpcResultBody(id, v03Result(call.method, call.method.operation, result.value as never)));
    } catch (e) {
      return refuse(e instanceof A2aError ? e : new A2aError("Internal", e instanceof Error ? e.message : String(e)));
    }
    const [before, after] = jsonRpcResultAround(id);
    const render = (item: StreamOut): Frame | null => {
      switch (item.kind) {
        case "event":
          try {
            const body = sharedEncoding(item.event, `v0.3 ${call.method.name}`, () => v03Result(call.method, call.method.operation, item.event as never));
            return eventFrame(item.seq, before, body, after);
          } catch (e) {
            return frame(item.seq, null, jsonRpcV03ErrorBody(id, e as A2aError));
          }
        case "gap":
          // Gaps are agentproto's resumption extension, which 0.3 clients do not know.
          return null;
        case "error":
          return frame(null, null, jsonRpcV03ErrorBody(id, item.error));
      }
    };
    await writeSse(res, result.open, render, (item) => refuse(item.error), keepAlive, budget);
  }

  /** An HTTP+JSON request whose body has been read (or could not be: `error`). */
  async function rest(req: IncomingMessage, res: ServerResponse, target: string, principal: Principal | null, error: A2aError | null, body: Buffer): Promise<void> {
    const refuse = (error: A2aError, headers: readonly string[] = NO_HEADERS, close = false): void => answer(res, error.httpStatus(table), restErrorBody(error, table), JSON_TYPE, headers, close);
    if (error !== null) return refuse(error, NO_HEADERS, true);
    const call = decodeRestRequest({ method: req.method ?? "GET", target, headers: req.headers, body }, version);
    if (call.outcome === "refused") return refuse(call.error, call.allow === undefined ? NO_HEADERS : ["allow", call.allow]);
    const operation = call.request.operation;
    let result: Answer;
    try {
      result = await run(callContext(req, principal, call.pathTenant, call.request), call.request);
    } catch (e) {
      return refuse(e as A2aError);
    }
    if (result.kind === "value") return answer(res, 200, encodeResult(operation, result.value as never), A2A_JSON_TYPE);
    const render = (item: StreamOut): Frame | null => {
      switch (item.kind) {
        case "event":
          return eventFrame(item.seq, "", sharedEncoding(item.event, operation, () => encodeResult(operation as OperationName, item.event as never)), "");
        case "gap":
          return frame(null, "gap", JSON.stringify({ after: item.after, resumedAt: item.resumedAt }));
        case "error":
          return frame(null, "error", restErrorBody(item.error, table));
      }
    };
    await writeSse(res, result.open, render, (item) => refuse(item.error), keepAlive, budget);
  }

  /** Answers an error no binding answered: 500 when nothing was sent yet, else the
   * connection closed. */
  function failed(res: ServerResponse, e: unknown): void {
    const error = new A2aError("Internal", e instanceof Error ? e.message : String(e));
    if (!res.headersSent) answer(res, 500, restErrorBody(error, table));
    else res.destroy();
  }

  /** Reads the body, then runs the binding's request. */
  function dispatch(req: IncomingMessage, res: ServerResponse, isJsonRpc: boolean, url: string, query: string, principal: Principal | null): void {
    readBody(req, maxBody, deadlines, (error, body) => {
      const handled = isJsonRpc ? jsonRpc(req, res, query, principal, error, body) : rest(req, res, url.slice(restPrefix.length) || "/", principal, error, body);
      handled.catch((e: unknown) => failed(res, e));
    });
  }

  async function authenticated(req: IncomingMessage, res: ServerResponse, authenticate: AuthHook, isJsonRpc: boolean, url: string, query: string): Promise<void> {
    let principal: Principal | null;
    try {
      principal = await authenticate(req);
    } catch (e) {
      const error = e instanceof A2aError ? e : new A2aError("Unauthenticated", e instanceof Error ? e.message : String(e));
      if (isJsonRpc) return answer(res, error.jsonRpcHttpStatus, jsonRpcErrorBody("null", error), JSON_TYPE, NO_HEADERS, true);
      return answer(res, error.httpStatus(table), restErrorBody(error, table), JSON_TYPE, NO_HEADERS, true);
    }
    dispatch(req, res, isJsonRpc, url, query, principal);
  }

  function serve(req: IncomingMessage, res: ServerResponse, next?: () => void): void {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? "" : url.slice(q + 1);
    const method = req.method ?? "GET";
    if (refusedCoding(req, res)) return;
    if ((path === "/.well-known/agent-card.json" || path === "/.well-known/agent.json") && (method === "GET" || method === "HEAD")) return serveCard(req, res);
    const isJsonRpc = path === jsonRpcPath && method === "POST";
    const isRest = !isJsonRpc && (restPrefix === "" || path === restPrefix || path.startsWith(`${restPrefix}/`));
    if (!isJsonRpc && !isRest) {
      if (next !== undefined) return next();
      return answer(res, 404, restErrorBody(new A2aError("MethodNotFound", `no A2A endpoint at ${path}`), table));
    }
    const authenticate = options.authenticate;
    if (authenticate !== undefined) {
      authenticated(req, res, authenticate, isJsonRpc, url, query).catch((e: unknown) => failed(res, e));
      return;
    }
    dispatch(req, res, isJsonRpc, url, query, null);
  }

  return (req, res, next) => {
    res.on("error", ignore);
    try {
      serve(req, res, next);
    } catch (e) {
      failed(res, e);
    }
  };
}

/** A failure as the `A2aError` to answer: an internal error unless it is one. */
function asError(e: unknown): A2aError {
  return e instanceof A2aError ? e : new A2aError("Internal", e instanceof Error ? e.message : String(e));
}

/** An A2A server listening on TCP: `a2aListener` on `node:http`, behind a connection cap,
 * with header, request and idle timeouts. */
export class A2aHttpServer {
  readonly http: Server;
  private readonly net: NetServer;
  private readonly sockets = new Set<Socket>();
  private readonly refused = new Set<Socket>();
  /** Connections whose first request head has not come yet, with the timer closing them. */
  private readonly silent = new Map<Socket, NodeJS.Timeout>();
  private serving: A2aCore | null = null;
  private listener: A2aListener | null = null;

  /** `core`, or a function that builds it from the server's URL once it listens (so
   * that a card can name a port chosen by the system). */
  constructor(
    private readonly make: A2aCore | ((url: string) => A2aCore),
    private readonly options: ServerOptions = {},
  ) {
    const headerTimeout = options.headerTimeoutMs ?? 15_000;
    if (typeof make !== "function") this.use(make);
    this.http = createHttpServer(
      {
        headersTimeout: headerTimeout,
        requestTimeout: options.requestTimeoutMs ?? headerTimeout + (options.bodyTimeoutMs ?? 60_000),
        keepAliveTimeout: options.idleTimeoutMs ?? 60_000,
        connectionsCheckingInterval: Math.min(1000, headerTimeout),
      },
      (req, res) => {
        this.headCame(req.socket);
        (this.listener as A2aListener)(req, res);
      },
    );
    const max = options.maxConnections ?? 1024;
    this.net = createNetServer((socket) => {
      socket.on("error", () => undefined);
      if (this.sockets.size >= max) {
        // Read and drop what the client sends, so that its close ends this socket too.
        this.refused.add(socket);
        socket.once("close", () => this.refused.delete(socket));
        socket.resume();
        socket.end("HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
      }
      this.sockets.add(socket);
      // node:http times a head only from its first byte: a connection that never sends one
      // would be held until its client leaves. Closed unless a request head comes in time
      // (later heads: node's headersTimeout, idle time between requests: keepAliveTimeout).
      this.silent.set(socket, setTimeout(() => socket.destroy(), headerTimeout));
      socket.once("close", () => {
        this.sockets.delete(socket);
        this.headCame(socket);
      });
      // Answers and stream events go out at once, not held back for a delayed ACK.
      socket.setNoDelay(true);
      this.http.emit("connection", socket);
    });
  }

  private headCame(socket: Socket): void {
    const timer = this.silent.get(socket);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.silent.delete(socket);
    }
  }

  private use(core: A2aCore): void {
    this.serving = core;
    this.listener = a2aListener(core, this.options);
  }

  /** The core this server runs (after `listen` when it was given a function). */
  get core(): A2aCore {
    if (this.serving === null) throw new Error("the server is not listening yet");
    return this.serving;
  }

  /** Starts listening; resolves with the address (port 0: a free port). */
  listen(port: number, host = "127.0.0.1"): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.net.once("error", reject);
      this.net.listen(port, host, () => {
        this.net.off("error", reject);
        if (typeof this.make === "function") this.use(this.make(this.url));
        resolve(this.net.address() as AddressInfo);
      });
    });
  }

  /** The URL of the server (after `listen`). */
  get url(): string {
    const a = this.net.address() as AddressInfo;
    return `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /** Stops listening, aborts the running turns, stops the push worker and closes every
   * connection. */
  async close(): Promise<void> {
    const core = this.serving?.close();
    await new Promise<void>((resolve) => {
      this.net.close(() => resolve());
      for (const s of [...this.sockets, ...this.refused]) s.destroy();
      this.http.closeAllConnections();
    });
    await core;
  }
}
