/**
 * The A2A client on `fetch` (Node's global one, or a browser's): JSON-RPC and HTTP+JSON,
 * SSE streams resumed with `Last-Event-ID` when the connection drops, retries with
 * backoff for idempotent calls, timeouts, and agent card resolution. Requests are
 * written by the generated encoders; answers are read by the pure answer layer
 * (`answers.ts`, `sse.ts`). No `node:` module: it runs in browsers.
 */

import { DECODERS } from "../generated/a2a/v1.codec.js";
import { OPERATIONS, type AgentCard, type OperationName, type Operations, type StreamResponse } from "../generated/a2a/v1.js";
import { Ctx } from "../codec/runtime.js";
import { DecodeError } from "../codec/errors.js";
import { parse, MAX_NESTING_DEPTH } from "../codec/reader.js";
import { readJsonRpcAnswer, readRestAnswer, readRestStreamEvent, type Answer } from "./answers.js";
import { AnswerFailure, render, type PeerError } from "./errors.js";
import { A2A_JSON } from "./http.js";
import { encodeRequest } from "./operations.js";
import { SseReader } from "./sse.js";

/** The bindings this client speaks. */
export type ClientBinding = "jsonrpc" | "rest";

/** Options of `A2aClient`. */
export interface ClientOptions {
  /** The interface URL (JSON-RPC: the endpoint; HTTP+JSON: the prefix of the routes). */
  readonly url: string;
  readonly binding: ClientBinding;
  /** The `fetch` to use (default: the global one). */
  readonly fetch?: typeof fetch;
  /** Headers sent with every request (credentials, …). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Time limit of a unary call, and of a stream's response head (default 30 s). */
  readonly timeoutMs?: number;
  /** How many times an idempotent call (reads, subscriptions) is retried after a network
   * failure or a 429/502/503/504 answer (default 2). */
  readonly retries?: number;
  /** The first retry's delay, doubled at each further one (default 100 ms). */
  readonly backoffMs?: number;
  /** How many times a dropped stream is resumed (default 3; 0: never). */
  readonly resumes?: number;
}

/** A call that failed locally: no answer came (a network failure, a timeout, an abort). */
export class A2aTransportError extends Error {
  constructor(
    readonly code: "network" | "timeout" | "aborted",
    message: string,
  ) {
    super(message);
    this.name = "A2aTransportError";
  }
}

/** A call that answered with the peer's error, or with an answer that cannot be read. */
export class A2aCallError extends Error {
  constructor(readonly error: PeerError | AnswerFailure) {
    super(render(error));
    this.name = "A2aCallError";
  }
}

/** One event of a stream: its SSE id and name, and the answer its data holds (`null`
 * for a control event, `gap` or `lagged`). */
export interface StreamEvent<T> {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly answer: Answer<T> | null;
  readonly data: string;
}

/** Options of one call. */
export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Extra headers of this call. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Options of one stream. */
export interface StreamOptions extends CallOptions {
  /** Resume after this event id (`Last-Event-ID`). */
  readonly lastEventId?: string;
  /** Resume a dropped stream (default: the client's `resumes`). */
  readonly resumes?: number;
}

/** Operations that change nothing: retried after a transient failure. */
const IDEMPOTENT: ReadonlySet<OperationName> = new Set<OperationName>(["GetTask", "ListTasks", "SubscribeToTask", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "GetExtendedAgentCard", "DeleteTaskPushNotificationConfig"]);

const TRANSIENT = new Set([429, 502, 503, 504]);

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** An HTTP request of the HTTP+JSON binding for an operation: its rule (the
 * `/{tenant}/…` one when the request names a tenant), path variables, and the request as
 * the body (POST) or as query parameters (GET, DELETE). */
export function restRequest<K extends OperationName>(operation: K, params: Operations[K]["params"]): { method: string; path: string; body: string | null } {
  const encoded = encodeRequest({ operation, params } as never);
  const fields = JSON.parse(encoded) as Record<string, unknown>;
  const rules = OPERATIONS[operation].http;
  const withTenant = typeof fields["tenant"] === "string" && fields["tenant"] !== "";
  const rule = rules.find((r) => r.path.includes("{tenant}") === withTenant) ?? (rules[0] as (typeof rules)[number]);
  const used = new Set<string>();
  const path = rule.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const key = lowerCamel(name);
    used.add(key);
    return encodeURIComponent(String(fields[key] ?? ""));
  });
  if (rule.body) return { method: rule.method.toUpperCase(), path, body: encoded };
  const query: string[] = [];
  for (const f of OPERATIONS[operation].query) {
    const v = fields[f.wire];
    if (v === undefined || used.has(f.wire)) continue;
    query.push(`${encodeURIComponent(f.wire)}=${encodeURIComponent(String(v))}`);
  }
  return { method: rule.method.toUpperCase(), path: query.length === 0 ? path : `${path}?${query.join("&")}`, body: null };
}

/** Resolves after `ms`, or rejects when `signal` aborts. */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      reject(new A2aTransportError("aborted", "the call was aborted"));
    };
    if (signal?.aborted) return stop();
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** `signal` and a timeout, as one signal. */
function withTimeout(signal: AbortSignal | undefined, ms: number): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  return signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
}

/** Why `fetch` failed, as a transport error. */
function transportError(e: unknown, signal: AbortSignal | undefined): A2aTransportError {
  if (e instanceof A2aTransportError) return e;
  if (signal?.aborted === true) return new A2aTransportError("aborted", "the call was aborted");
  if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) return new A2aTransportError("timeout", "the call timed out");
  return new A2aTransportError("network", e instanceof Error ? e.message : String(e));
}

/** The id of the task a stream event is about, if it names one. */
function taskIdOf(value: StreamResponse): string | undefined {
  return value.task?.id ?? value.statusUpdate?.taskId ?? value.artifactUpdate?.taskId;
}

/** Whether a stream event ends the stream (a terminal or interrupted state, a message). */
function finalEvent(value: StreamResponse): boolean {
  const state = value.task?.status.state ?? value.statusUpdate?.status.state;
  if (value.message !== undefined) return true;
  return state !== undefined && state !== "TASK_STATE_SUBMITTED" && state !== "TASK_STATE_WORKING";
}

/** An A2A client of one interface. */
export class A2aClient {
  private nextId = 1;
  private readonly fetch: typeof fetch;

  constructor(readonly options: ClientOptions) {
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Calls `operation`; resolves with its answer (a value, the peer's error, or a local
   * failure to read the answer). @throws A2aTransportError when no answer came */
  async call<K extends OperationName>(operation: K, params: Operations[K]["params"], options: CallOptions = {}): Promise<Answer<Operations[K]["result"]>> {
    const retries = IDEMPOTENT.has(operation) ? (this.options.retries ?? 2) : 0;
    for (let attempt = 0; ; attempt++) {
      const signal = withTimeout(options.signal, this.options.timeoutMs ?? 30_000);
      try {
        const { response, id } = await this.send(operation, params as never, "application/json", signal, options.headers, undefined);
        if (attempt < retries && TRANSIENT.has(response.status)) {
          await response.body?.cancel();
          await delay((this.options.backoffMs ?? 100) * 2 ** attempt, options.signal);
          continue;
        }
        const body = new Uint8Array(await response.arrayBuffer());
        if (this.options.binding === "jsonrpc") return readJsonRpcAnswer(operation, body, id);
        return readRestAnswer(operation, response.status, body);
      } catch (e) {
        const error = transportError(e, options.signal);
        if (error.code === "aborted" || attempt >= retries) throw error;
        await delay((this.options.backoffMs ?? 100) * 2 ** attempt, options.signal);
      }
    }
  }

  /** Calls `operation` and returns its value. @throws A2aCallError, A2aTransportError */
  async value<K extends OperationName>(operation: K, params: Operations[K]["params"], options: CallOptions = {}): Promise<Operations[K]["result"]> {
    const answer = await this.call(operation, params, options);
    if (answer.outcome === "decoded") return answer.value;
    throw new A2aCallError(answer.error);
  }

  sendMessage(params: Operations["SendMessage"]["params"], options?: CallOptions) {
    return this.value("SendMessage", params, options);
  }
  getTask(params: Operations["GetTask"]["params"], options?: CallOptions) {
    return this.value("GetTask", params, options);
  }
  listTasks(params: Operations["ListTasks"]["params"], options?: CallOptions) {
    return this.value("ListTasks", params, options);
  }
  cancelTask(params: Operations["CancelTask"]["params"], options?: CallOptions) {
    return this.value("CancelTask", params, options);
  }
  createPushConfig(params: Operations["CreateTaskPushNotificationConfig"]["params"], options?: CallOptions) {
    return this.value("CreateTaskPushNotificationConfig", params, options);
  }
  getPushConfig(params: Operations["GetTaskPushNotificationConfig"]["params"], options?: CallOptions) {
    return this.value("GetTaskPushNotificationConfig", params, options);
  }
  listPushConfigs(params: Operations["ListTaskPushNotificationConfigs"]["params"], options?: CallOptions) {
    return this.value("ListTaskPushNotificationConfigs", params, options);
  }
  deletePushConfig(params: Operations["DeleteTaskPushNotificationConfig"]["params"], options?: CallOptions) {
    return this.value("DeleteTaskPushNotificationConfig", params, options);
  }
  getExtendedAgentCard(params: Operations["GetExtendedAgentCard"]["params"] = {}, options?: CallOptions) {
    return this.value("GetExtendedAgentCard", params, options);
  }

  /**
   * Calls a streaming operation and yields its events. When the connection drops before
   * the stream's final event, the stream is resumed (`SubscribeToTask` with
   * `Last-Event-ID`), at most `resumes` times; the events after the last id seen follow.
   * @throws A2aTransportError when no stream could be opened
   */
  async *stream<K extends "SendStreamingMessage" | "SubscribeToTask">(operation: K, params: Operations[K]["params"], options: StreamOptions = {}): AsyncGenerator<StreamEvent<StreamResponse>> {
    let resumesLeft = options.resumes ?? this.options.resumes ?? 3;
    let lastId = options.lastEventId;
    let taskId: string | undefined = operation === "SubscribeToTask" ? (params as Operations["SubscribeToTask"]["params"]).id : undefined;
    const tenant = params.tenant;
    let current: OperationName = operation;
    let currentParams: unknown = params;
    for (;;) {
      let ended = false;
      let dropped = false;
      try {
        for await (const ev of this.openStream(current, currentParams, lastId, options)) {
          if (ev.id !== undefined) lastId = ev.id;
          if (ev.answer?.outcome === "decoded") {
            const value = ev.answer.value as StreamResponse;
            taskId ??= taskIdOf(value);
            if (finalEvent(value)) ended = true;
          } else if (ev.answer !== null) {
            ended = true;
          }
          yield ev;
        }
      } catch (e) {
        if (!(e instanceof A2aTransportError) || e.code === "aborted") throw e;
        dropped = true;
      }
      // The server ended the stream, or it ended on its final event: nothing to resume.
      if (ended || !dropped) return;
      if (resumesLeft-- <= 0 || taskId === undefined || lastId === undefined) return;
      await delay(this.options.backoffMs ?? 100, options.signal);
      current = "SubscribeToTask";
      currentParams = tenant ? { id: taskId, tenant } : { id: taskId };
    }
  }

  /** One stream connection: its events until the server ends it. */
  private async *openStream(operation: OperationName, params: unknown, lastId: string | undefined, options: StreamOptions): AsyncGenerator<StreamEvent<StreamResponse>> {
    const headSignal = withTimeout(options.signal, this.options.timeoutMs ?? 30_000);
    const bodyAbort = new AbortController();
    const signal = options.signal === undefined ? bodyAbort.signal : AbortSignal.any([options.signal, bodyAbort.signal]);
    let sent;
    try {
      sent = await Promise.race([
        this.send(operation, params as never, "text/event-stream", signal, options.headers, lastId),
        new Promise<never>((_, reject) => headSignal.addEventListener("abort", () => reject(headSignal.reason), { once: true })),
      ]);
    } catch (e) {
      bodyAbort.abort();
      throw transportError(e, options.signal);
    }
    const { response, id } = sent;
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    if (type !== "text/event-stream") {
      // A refusal answered as a plain response.
      const body = new Uint8Array(await response.arrayBuffer());
      const answer = this.options.binding === "jsonrpc" ? readJsonRpcAnswer(operation, body, id) : readRestAnswer(operation, response.status, body);
      yield { id: undefined, event: undefined, answer: answer as Answer<StreamResponse>, data: new TextDecoder().decode(body) };
      return;
    }
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const sse = new SseReader();
    try {
      for (;;) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (e) {
          throw transportError(e, options.signal);
        }
        const text = chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
        for (const ev of sse.push(text)) {
          if (ev.event === "gap" || ev.event === "lagged") {
            yield { id: ev.id, event: ev.event, answer: null, data: ev.data };
            continue;
          }
          const answer = this.options.binding === "jsonrpc" ? readJsonRpcAnswer(operation, ev.data, id) : readRestStreamEvent(operation, ev.event, ev.data, response.status);
          yield { id: ev.id, event: ev.event, answer: answer as Answer<StreamResponse>, data: ev.data };
        }
        if (chunk.done) return;
      }
    } finally {
      bodyAbort.abort();
      reader.releaseLock();
    }
  }

  /** Sends one request of `operation`. */
  private async send(operation: OperationName, params: never, accept: string, signal: AbortSignal, extra: Readonly<Record<string, string>> | undefined, lastEventId: string | undefined): Promise<{ response: Response; id: number }> {
    const id = this.nextId++;
    const headers: Record<string, string> = { "A2A-Version": "1.0", accept, ...this.options.headers, ...extra };
    if (lastEventId !== undefined) headers["Last-Event-ID"] = lastEventId;
    const base = this.options.url.replace(/\/+$/, "");
    let url: string;
    let method: string;
    let body: string | null;
    if (this.options.binding === "jsonrpc") {
      url = this.options.url;
      method = "POST";
      body = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(operation)},"params":${encodeRequest({ operation, params })}}`;
      headers["content-type"] = "application/json";
    } else {
      const r = restRequest(operation, params);
      url = `${base}${r.path}`;
      method = r.method;
      body = r.body;
      if (body !== null) headers["content-type"] = A2A_JSON;
    }
    const response = await this.fetch(url, { method, headers, body, signal });
    return { response, id };
  }
}

/** The agent card at `baseUrl` (`/.well-known/agent-card.json`), validated. @throws
 * A2aTransportError, A2aCallError (a card that does not decode, or an HTTP error) */
export async function resolveCard(baseUrl: string, options: { readonly fetch?: typeof fetch; readonly signal?: AbortSignal; readonly timeoutMs?: number } = {}): Promise<AgentCard> {
  const f = options.fetch ?? globalThis.fetch.bind(globalThis);
  const url = `${baseUrl.replace(/\/+$/, "")}/.well-known/agent-card.json`;
  let response: Response;
  let text: string;
  try {
    response = await f(url, { headers: { accept: "application/json" }, signal: withTimeout(options.signal, options.timeoutMs ?? 30_000) });
    text = await response.text();
  } catch (e) {
    throw transportError(e, options.signal);
  }
  if (response.status !== 200) throw new A2aCallError(new AnswerFailure(`the agent card answered HTTP ${response.status}`));
  try {
    return DECODERS.AgentCard(parse(text, MAX_NESTING_DEPTH), "$", new Ctx(text)) as AgentCard;
  } catch (e) {
    if (e instanceof DecodeError) throw new A2aCallError(new AnswerFailure("the agent card does not decode", e));
    throw new A2aCallError(new AnswerFailure(`the agent card is not JSON (${e instanceof Error ? e.message : String(e)})`));
  }
}

/** A client of the card's first interface of a binding this client speaks (in the
 * card's order of preference, or `prefer` first). */
export function clientFromCard(card: AgentCard, options: Omit<ClientOptions, "url" | "binding"> & { readonly prefer?: ClientBinding } = {}): A2aClient {
  const wanted = (b: string): ClientBinding | null => (b === "JSONRPC" ? "jsonrpc" : b === "HTTP+JSON" ? "rest" : null);
  const usable = card.supportedInterfaces.filter((i) => wanted(i.protocolBinding) !== null && i.protocolVersion.startsWith("1."));
  const chosen = usable.find((i) => wanted(i.protocolBinding) === options.prefer) ?? usable[0];
  if (chosen === undefined) throw new A2aCallError(new AnswerFailure("the agent card declares no JSON-RPC or HTTP+JSON interface of A2A 1.x"));
  return new A2aClient({ ...options, url: chosen.url, binding: wanted(chosen.protocolBinding) as ClientBinding });
}
