/** Raw HTTP on `node:net` for the A2A runners: a request's exact bytes to a server, and a
 * server that answers any request with a case's exact bytes. Every wait is bounded. */

import { connect, createServer, type Socket } from "node:net";

/** Bounds every wait of these helpers. */
const LIMIT_MS = 10_000;

/** An HTTP answer as read off the socket. */
export interface Exchange {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly body: Buffer;
}

/** Reads from `socket` until it closes (bounded). */
function readAll(socket: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no answer within the time limit"));
    }, LIMIT_MS);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

/** Sends one request as bytes (`Host`, `Content-Length` when there is a body and
 * `Connection: close` added) and reads the answer. */
export async function exchange(port: number, method: string, target: string, headers: ReadonlyArray<[string, string]>, body: Buffer | null): Promise<Exchange> {
  const socket = connect(port, "127.0.0.1");
  const head = [`${method} ${target} HTTP/1.1`, "Host: 127.0.0.1", ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (body !== null) head.push(`Content-Length: ${body.length}`);
  head.push("Connection: close", "", "");
  const done = readAll(socket);
  socket.write(Buffer.concat([Buffer.from(head.join("\r\n"), "latin1"), body ?? Buffer.alloc(0)]));
  const raw = await done;
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) throw new Error(`not an HTTP answer: ${JSON.stringify(raw.toString("latin1"))}`);
  const lines = raw.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number((lines[0] ?? "").split(" ")[1]);
  const map = new Map<string, string>();
  for (const l of lines.slice(1)) {
    const colon = l.indexOf(":");
    if (colon > 0) map.set(l.slice(0, colon).trim().toLowerCase(), l.slice(colon + 1).trim());
  }
  let rest = raw.subarray(end + 4);
  if (map.get("transfer-encoding") === "chunked") rest = unchunk(rest);
  return { status, headers: map, body: rest };
}

function unchunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf("\r\n", at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString("latin1"), 16);
    if (!(size > 0)) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** A server answering every request with `status`, `headers` and `body`; in a JSON-RPC
 * body `"$request-id"` and `"$request-id-as-string"` become the request's id. `stream`:
 * the body goes as one SSE event and the stream ends. */
export async function answeringServer(status: number, headers: ReadonlyArray<[string, string]>, body: Buffer | null, jsonRpc: boolean, stream: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let received = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = received.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? "0");
      if (received.length < end + 4 + length) return;
      const request = received.subarray(end + 4, end + 4 + length).toString("utf8");
      let text = body === null ? null : body.toString("utf8");
      if (jsonRpc && text !== null) {
        let id = "null";
        try {
          const parsed = JSON.parse(request) as { id?: unknown };
          id = JSON.stringify(parsed.id ?? null);
        } catch {
          // not JSON: the id stays null
        }
        const asString = JSON.stringify(typeof JSON.parse(id) === "string" ? JSON.parse(id) : id);
        text = text.replaceAll('"$request-id-as-string"', asString).replaceAll('"$request-id"', id);
      }
      let payload = text === null ? (body ?? Buffer.alloc(0)) : Buffer.from(text, "utf8");
      if (stream) payload = Buffer.concat([Buffer.from("data: "), payload, Buffer.from("\n\n")]);
      const lines = [`HTTP/1.1 ${status} Answer`, ...headers.map(([k, v]) => `${k}: ${v}`), `Content-Length: ${payload.length}`, "Connection: close", "", ""];
      socket.end(Buffer.concat([Buffer.from(lines.join("\r\n"), "latin1"), payload]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
