/**
 * The client's WebSocket transport: the opening handshake on a `node:http(s)` upgrade
 * request (Node 20 has no global `WebSocket`), then one text message per line both ways
 * on `WebSocketEnd`.
 */

import * as http from "node:http";
import * as https from "node:https";
import type { Duplex } from "node:stream";

import { CookieJar } from "./cookies.js";
import { LineSink, MessageFeed } from "./framing.js";
import { CONNECTION_ID_HEADER } from "./routing.js";
import { acceptKey, CloseCode, newKey, WebSocketEnd } from "./websocket.js";

/** The server answered something this client cannot use (a status, a bad handshake). */
export class RemoteRefused extends Error {
  override readonly name: string = "RemoteRefused";
  /** A local error's kind. */
  readonly code = "refused";

  constructor(
    message: string,
    /** The HTTP status, when the server answered with one. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** How long a handshake may take before it is given up. */
const HANDSHAKE_TIMEOUT = 30_000;

/** Opens a WebSocket to `url` (http, https, ws or wss). Rejects with `RemoteRefused`
 * unless the server switched protocols with the right accept key, or with the socket's
 * error when it cannot connect. */
export function handshake(url: URL, headers: Record<string, string>, cookies: CookieJar, maxMessage: number): Promise<{ socket: WebSocketEnd; response: http.IncomingMessage }> {
  const tls = url.protocol === "https:" || url.protocol === "wss:";
  const key = newKey();
  const cookie = cookies.header();
  const request = (tls ? https : http).request({
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port === "" ? (tls ? 443 : 80) : Number(url.port),
    path: url.pathname + url.search,
    method: "GET",
    headers: {
      ...headers,
      ...(cookie === undefined ? {} : { cookie }),
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-key": key,
      "sec-websocket-version": "13",
    },
    timeout: HANDSHAKE_TIMEOUT,
  });
  return new Promise((resolve, reject) => {
    request.on("upgrade", (response: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      cookies.store(setCookies(response));
      if (response.headers["sec-websocket-accept"] !== acceptKey(key)) {
        socket.destroy();
        reject(new RemoteRefused("the server's Sec-WebSocket-Accept does not match the key"));
        return;
      }
      resolve({ socket: new WebSocketEnd(socket, "client", maxMessage, head), response });
    });
    request.on("response", (response: http.IncomingMessage) => {
      cookies.store(setCookies(response));
      response.resume();
      reject(new RemoteRefused(`the WebSocket upgrade was refused with ${response.statusCode}`, response.statusCode ?? null));
    });
    request.on("timeout", () => request.destroy(new RemoteRefused("the WebSocket handshake timed out")));
    request.on("error", reject);
    request.end();
  });
}

function setCookies(response: http.IncomingMessage): string[] {
  return response.headers["set-cookie"] ?? [];
}

/** One ACP connection over a WebSocket, as a feed and a sink for the connection runtime. */
export class WebSocketTransport {
  readonly feed: MessageFeed;
  readonly sink: LineSink;
  readonly cookies = new CookieJar();
  connectionId: string | null = null;
  private socket: WebSocketEnd | null = null;
  private reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: URL,
    private readonly headers: Record<string, string>,
    private readonly maxMessage: number,
    queuedBytes: number,
  ) {
    this.feed = new MessageFeed(queuedBytes);
    this.sink = new LineSink(
      {
        deliver: (line) => this.socket?.sendText(line),
        deliverAll: (lines) => this.socket?.sendTexts(lines),
        pending: () => this.socket?.socket.writableLength ?? 0,
      },
      queuedBytes,
      null,
    );
  }

  async open(): Promise<void> {
    const { socket, response } = await handshake(this.url, this.headers, this.cookies, this.maxMessage);
    this.socket = socket;
    const id = response.headers[CONNECTION_ID_HEADER];
    this.connectionId = typeof id === "string" ? id : null;
    socket.socket.on("drain", () => this.sink.room());
    socket.socket.on("close", () => void this.sink.close());
    this.reading = this.read(socket);
  }

  private async read(socket: WebSocketEnd): Promise<void> {
    try {
      for (;;) {
        const messages = await socket.receiveMany();
        if (messages === null || !(await this.feed.putMany(messages))) return;
      }
    } finally {
      this.feed.close();
    }
  }

  /** Closes the socket (the close handshake, bounded) and ends the feed. */
  async close(): Promise<void> {
    void this.sink.close();
    this.socket?.close(CloseCode.normal);
    await this.reading;
    this.feed.close();
  }
}
