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

/** Reads a request body within the size limit and timeout. */
function readBody(req: IncomingMessage, max: number, timeoutMs: number): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > max) return Promise.reject(tooLarge(max));
  // With a Content-Length, the body is copied into one buffer of that size as it comes
  // (each chunk is let go at once), not kept in chunks and joined at the end (two copies).
  // Allocated at the first chunk (a client that sends nothing costs nothing).
  const length = declared === undefined ? Number.NaN : Number(declared);
  const sized = Number.isSafeInteger(length) && length > 0;
  let whole: Buffer | null = null;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => finish(new A2aError("RequestTimeout", `the request body did not arrive within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      if (sized && whole === null && chunks.length === 0) whole = Buffer.allocUnsafe(length);
      if (whole !== null && size + chunk.length <= whole.length) chunk.copy(whole, size);
      else chunks.push(chunk);
      size += chunk.length;
      if (size > max) return finish(tooLarge(max));
    };
    const onEnd = (): void => finish(null);
    const onAbort = (): void => finish(new A2aError("MalformedBody", "the connection ended before the request body did"));
    const onError = (e: Error): void => finish(new A2aError("MalformedBody", `the request body could not be read: ${e.message}`));
    function finish(error: A2aError | null): void {
      clearTimeout(timer);
      req.off("data", onData).off("end", onEnd).off("aborted", onAbort).off("error", onError);
      if (error === null) resolve(whole === null ? Buffer.concat(chunks, size) : chunks.length === 0 ? whole.subarray(0, size) : Buffer.concat([whole, ...chunks], size));
      else {
        req.on("error", () => undefined);
        req.pause();
        reject(error);
      }
    }
    req.on("data", onData).on("end", onEnd).on("aborted", onAbort).on("error", onError);
  });
}

function tooLarge(max: number): A2aError {
  return new A2aError("PayloadTooLarge", `the request body is larger than ${max} bytes`);
}

/** Sends a whole answer. A refusal before the body was read closes the connection. */
function answer(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}, close = false): void {
  if (res.headersSent || res.destroyed) return;
  // Bytes, not the string: node would copy a string again when the socket cannot take it at once.
  const bytes = Buffer.from(body);
  const h: Record<string, string | number> = { "content-type": JSON_TYPE, "content-length": bytes.length, ...headers };
  if (close) h["connection"] = "close";
  res.writeHead(status, h);
  res.end(bytes);
}

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
  const plain = { "content-type": "text/plain; charset=utf-8" };
  const transfer = foreignCoding(req.headers["transfer-encoding"], "chunked");
  if (transfer !== null) {
    answer(res, 501, `transfer coding "${transfer}" is not supported; only chunked is\n`, plain, true);
    return true;
  }
  const content = foreignCoding(req.headers["content-encoding"], "identity");
  if (content !== null) {
    answer(res, 415, `content coding "${content}" is not supported; send the body without one\n`, { ...plain, "accept-encoding": "identity" });
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
  const bodyTimeout = options.bodyTimeoutMs ?? 60_000;
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

  function serveCard(req: IncomingMessage, res: ServerResponse): void {
    const inm = req.headers["if-none-match"];
    const ims = req.headers["if-modified-since"];
    const fresh = inm !== undefined ? inm.split(",").some((t) => t.trim() === card.etag || t.trim() === "*") : ims !== undefined && Date.parse(ims) >= Date.parse(card.lastModified);
    const headers = { etag: card.etag, "last-modified": card.lastModified, "cache-control": `public, max-age=${cardMaxAge}` };
    if (fresh) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    answer(res, 200, card.body, headers);
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

  async function run(cx: CallContext, request: A2aRequest): Promise<Answer> {
    try {
      return await core.handle(cx, request);
    } catch (e) {
      if (e instanceof A2aError) throw e;
      throw new A2aError("Internal", e instanceof Error ? e.message : String(e));
    }
  }

  async function jsonRpc(req: IncomingMessage, res: ServerResponse, query: string, principal: Principal | null): Promise<void> {
    let body: Buffer;
    try {
      body = await readBody(req, maxBody, bodyTimeout);
    } catch (e) {
      const error = e as A2aError;
      return answer(res, error.jsonRpcHttpStatus, jsonRpcErrorBody("null", error), {}, true);
    }
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
      result = await run(callContext(req, principal, undefined, call.request), call.request);
    } catch (e) {
      const error = e as A2aError;
      if (call.id === null) return void res.writeHead(204).end();
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

  async function rest(req: IncomingMessage, res: ServerResponse, target: string, principal: Principal | null): Promise<void> {
    const refuse = (error: A2aError, headers: Record<string, string> = {}, close = false): void => answer(res, error.httpStatus(table), restErrorBody(error, table), headers, close);
    let body: Buffer;
    try {
      body = await readBody(req, maxBody, bodyTimeout);
    } catch (e) {
      return refuse(e as A2aError, {}, true);
    }
    const call = decodeRestRequest({ method: req.method ?? "GET", target, headers: req.headers, body }, version);
    if (call.outcome === "refused") return refuse(call.error, call.allow === undefined ? {} : { allow: call.allow });
    const operation = call.request.operation;
    let result: Answer;
    try {
      result = await run(callContext(req, principal, call.pathTenant, call.request), call.request);
    } catch (e) {
      return refuse(e as A2aError);
    }
    if (result.kind === "value") return answer(res, 200, encodeResult(operation, result.value as never), { "content-type": A2A_JSON_TYPE });
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

  async function serve(req: IncomingMessage, res: ServerResponse, next?: () => void): Promise<void> {
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
    let principal: Principal | null = null;
    if (options.authenticate !== undefined) {
      try {
        principal = await options.authenticate(req);
      } catch (e) {
        const error = e instanceof A2aError ? e : new A2aError("Unauthenticated", e instanceof Error ? e.message : String(e));
        if (isJsonRpc) return answer(res, error.jsonRpcHttpStatus, jsonRpcErrorBody("null", error), {}, true);
        return answer(res, error.httpStatus(table), restErrorBody(error, table), {}, true);
      }
    }
    if (isJsonRpc) return jsonRpc(req, res, query, principal);
    return rest(req, res, url.slice(restPrefix.length) || "/", principal);
  }

  return (req, res, next) => {
    res.on("error", () => undefined);
    serve(req, res, next).catch((e: unknown) => {
      const error = new A2aError("Internal", e instanceof Error ? e.message : String(e));
      if (!res.headersSent) answer(res, 500, restErrorBody(error, table));
      else res.destroy();
    });
  };
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
