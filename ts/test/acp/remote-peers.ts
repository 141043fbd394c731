/** What the remote transport tests share: our echo agent served on 127.0.0.1 (the socket
 * is bound before the test goes on: no waiting for a server to come up), two prompt
 * turns through any client, and raw HTTP exchanges, SSE streams and WebSockets for the
 * status-code and framing tests. Every wait is bounded (`within`). */

import * as http from "node:http";

import { agentServer, listen, type Listening, type RemoteAgentServer, type ServerLimits } from "../../src/acp/remote/index.js";
import { SseParser } from "../../src/acp/remote/sse.js";
import { CookieJar } from "../../src/acp/remote/cookies.js";
import { handshake } from "../../src/acp/remote/ws-client.js";
import type { WebSocketEnd } from "../../src/acp/remote/websocket.js";
import * as v1 from "../../src/acp/v1.js";
import { EchoAgent } from "../../src/examples/echo-agent.js";
import { Collect, within } from "../spawned.js";

export { Collect, within };

export const INITIALIZE = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}';
export const NEW_SESSION = '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}';
export const JSON_TYPE = { "content-type": "application/json" };
export const PROMPTS = ["one two three four five six seven eight", "now a tool please"];

/** Serves `server` on 127.0.0.1 (any free port) and runs `body` with its URL; stops it on every way out. */
export async function serving<T>(server: RemoteAgentServer, body: (url: string) => Promise<T>): Promise<T> {
  const listening: Listening = await listen(server, "127.0.0.1", 0);
  try {
    return await body(listening.url);
  } finally {
    await within(listening.close(), "the server to stop", 15_000);
  }
}

/** Our echo agent (no delay), one per connection. */
export function echoServer(limits: ServerLimits = {}, made?: EchoAgent[]): RemoteAgentServer {
  return agentServer(
    () => {
      const agent = new EchoAgent(0);
      made?.push(agent);
      return agent;
    },
    { limits, acp: { onError: null } },
  );
}

/** initialize, session/new, then the two prompts; per prompt: the stop reason, the text
 * the client had received when the prompt's answer came back, and how many chunks. */
export async function twoTurns(agent: v1.AgentConnection, client: Collect): Promise<[string, string, number][]> {
  await within(agent.initialize({ protocolVersion: v1.PROTOCOL_VERSION }), "initialize");
  const { sessionId } = await within(agent.newSession({ cwd: "/", mcpServers: [] }), "session/new");
  const turns: [string, string, number][] = [];
  for (const text of PROMPTS) {
    client.chunks.length = 0;
    const answer = await within(agent.prompt({ sessionId, prompt: [{ type: "text", text }] }), "a prompt");
    // Read at once: every update sent before the answer must have been handled by now.
    turns.push([answer.stopReason, client.chunks.join(""), client.chunks.length]);
  }
  return turns;
}

/** What `twoTurns` returns against our echo agent. */
export const ECHOED: [string, string, number][] = [
  ["end_turn", PROMPTS[0] as string, 8],
  ["end_turn", PROMPTS[1] as string, 4],
];

export function prompt(id: number, session: string, text: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId: session, prompt: [{ type: "text", text }] } });
}

export interface Exchanged {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One raw HTTP request on a fresh connection: the status, headers and whole body. */
export function exchange(url: string, method: string, headers: Record<string, string>, body?: string | Buffer): Promise<Exchanged> {
  const request = http.request(url, { method, headers, agent: false });
  const answered = new Promise<Exchanged>((resolve, reject) => {
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    request.on("error", reject);
  });
  request.end(body);
  return within(answered, `${method} ${url}`);
}

/** Initializes a connection with a raw POST; its `Acp-Connection-Id`. */
export async function initialize(url: string): Promise<string> {
  const answer = await exchange(url, "POST", JSON_TYPE, INITIALIZE);
  if (answer.status !== 200) throw new Error(`initialize: ${answer.status} ${answer.body}`);
  const id = answer.headers["acp-connection-id"];
  if (typeof id !== "string") throw new Error("initialize: no Acp-Connection-Id");
  return id;
}

/** POSTs one message on `connection` (and `session`); the status. */
export async function post(url: string, connection: string, body: string, session?: string): Promise<number> {
  const headers: Record<string, string> = { ...JSON_TYPE, "acp-connection-id": connection };
  if (session !== undefined) headers["acp-session-id"] = session;
  return (await exchange(url, "POST", headers, body)).status;
}

/** An open SSE GET, read event by event or chunk by chunk. */
export class RawStream {
  private readonly parser = new SseParser(1 << 20);
  private readonly events: Buffer[] = [];
  private readonly chunks: Buffer[] = [];
  private waiter: (() => void) | null = null;
  private ended = false;

  constructor(
    readonly response: http.IncomingMessage,
    private readonly request: http.ClientRequest,
  ) {
    response.on("data", (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.events.push(...this.parser.feed(chunk));
      this.wake();
    });
    response.on("end", () => {
      this.ended = true;
      this.wake();
    });
    response.on("error", () => {});
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  private async until(ready: () => boolean, what: string): Promise<void> {
    while (!ready()) {
      if (this.ended) throw new Error(`the stream ended before ${what}`);
      await within(new Promise<void>((resolve) => (this.waiter = resolve)), what);
    }
  }

  /** The next event's data, parsed. */
  async next(): Promise<Record<string, unknown>> {
    await this.until(() => this.events.length > 0, "the next event");
    return JSON.parse((this.events.shift() as Buffer).toString("utf8")) as Record<string, unknown>;
  }

  /** The next raw chunk of the body. */
  async chunk(): Promise<string> {
    await this.until(() => this.chunks.length > 0, "the next chunk");
    this.events.length = 0;
    return (this.chunks.shift() as Buffer).toString("utf8");
  }

  close(): void {
    this.request.destroy();
  }
}

export function openStream(url: string, headers: Record<string, string>): Promise<RawStream> {
  const request = http.request(url, { method: "GET", headers: { accept: "text/event-stream", ...headers }, agent: false });
  const opened = new Promise<RawStream>((resolve, reject) => {
    request.on("response", (response) => resolve(new RawStream(response, request)));
    request.on("error", reject);
  });
  request.end();
  return within(opened, "the stream to open");
}

/** A raw WebSocket to `url` (our client end). */
export async function rawSocket(url: string, maxMessage = 1 << 20): Promise<{ socket: WebSocketEnd; response: http.IncomingMessage }> {
  return within(handshake(new URL(url), {}, new CookieJar(), maxMessage), "the WebSocket handshake");
}

/** The next text message of `socket`, parsed (`null`: it closed). */
export async function nextMessage(socket: WebSocketEnd): Promise<Record<string, unknown> | null> {
  const message = await within(socket.receive(), "the next WebSocket message");
  return message === null ? null : (JSON.parse(message.toString("utf8")) as Record<string, unknown>);
}
