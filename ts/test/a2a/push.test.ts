/**
 * Push notifications: the SSRF guard (address classes, URL checks, the guarded resolver),
 * registration refused for a private target, and delivery to a local receiver (loopback
 * allowed through the option) on the memory and SQLite stores: every event of the task in
 * order with the token, a 503 retried, a 404 dead at once, attempts exhausted. Every wait
 * is bounded; waits on the worker go through its `onRecord` hook.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { A2aCallError, A2aClient, type StreamResponse } from "../../src/a2a/index.js";
import { A2aCore, A2aHttpServer, classify, DemoAgent, demoCard, MemoryStore, SqliteStore, SsrfGuard, type Delivery, type PushOptions, type TaskStore } from "../../src/a2a/server/index.js";
import { within } from "../spawned.js";

test("the guard classifies addresses that are not public, through mapped, NAT64 and 6to4 forms", () => {
  const cases: Array<[string, string | null]> = [
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "shared"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["198.51.100.7", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["fd00::1", "private"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:a00:1", "private"],
    ["64:ff9b::7f00:1", "loopback"],
    ["2002:7f00:1::", "loopback"],
    ["8.8.8.8", null],
    ["172.32.0.1", null],
    ["2606:4700::1111", null],
  ];
  for (const [address, expected] of cases) assert.equal(classify(address), expected, address);
});

test("the guard checks push URLs: scheme, IP literals, localhost, the allow list", () => {
  const strict = new SsrfGuard();
  assert.throws(() => strict.checkUrl("ftp://example.com/"), /scheme "ftp" is not allowed/);
  assert.throws(() => strict.checkUrl("not a url"), /not a valid absolute URL/);
  assert.throws(() => strict.checkUrl("http://127.0.0.1:9/hook"), /loopback/);
  assert.throws(() => strict.checkUrl("http://[::ffff:169.254.169.254]/"), /link-local/);
  assert.throws(() => strict.checkUrl("http://localhost:8080/"), /localhost is loopback/);
  assert.equal(strict.checkUrl("https://example.com/hook").hostname, "example.com");
  assert.equal(strict.checkUrl("http://8.8.8.8/").hostname, "8.8.8.8");
  const loopback = new SsrfGuard({ allowLoopback: true });
  assert.equal(loopback.checkUrl("http://127.0.0.1:9/hook").port, "9");
  assert.throws(() => loopback.checkUrl("http://10.0.0.1/"), /private/);
  const allowed = new SsrfGuard({ allow: ["10.0.0.0/8", "fd00::/8"] });
  assert.equal(allowed.refuses("10.9.9.9"), null);
  assert.equal(allowed.refuses("fd12::1"), null);
  assert.match(allowed.refuses("192.168.0.1") ?? "", /private/);
  assert.throws(() => new SsrfGuard({ allow: ["10.0.0.0/40"] }), /prefix/);
});

test("the guarded resolver refuses a name that resolves to loopback", async () => {
  const lookup = (guard: SsrfGuard): Promise<string> =>
    new Promise((resolve, reject) => guard.guardedLookup("localhost", {}, (err, address) => (err === null ? resolve(address as string) : reject(err))));
  await assert.rejects(within(lookup(new SsrfGuard()), "the lookup"), /loopback/);
  assert.match(await within(lookup(new SsrfGuard({ allowLoopback: true })), "the lookup"), /^(127\.|::1)/);
});

test("a push config to a private address is refused at registration (InvalidParams)", async () => {
  const server = new A2aHttpServer((url) => new A2aCore(new DemoAgent(), { card: demoCard(url) }));
  await server.listen(0);
  try {
    const client = new A2aClient({ url: `${server.url}/`, binding: "jsonrpc", timeoutMs: 10_000 });
    const sent = await client.sendMessage({ message: { messageId: "tck-input-required-1", role: "ROLE_USER", parts: [{ text: "wait" }] } });
    const id = sent.task?.id as string;
    await assert.rejects(client.createPushConfig({ taskId: id, url: "http://169.254.169.254/latest/meta-data" }), (e: unknown) => e instanceof A2aCallError && /link-local/.test(e.message));
    await assert.rejects(client.createPushConfig({ taskId: id, url: "http://127.0.0.1:1/hook" }), (e: unknown) => e instanceof A2aCallError && /loopback/.test(e.message));
  } finally {
    await server.close();
  }
});

/** A local receiver. Its answer depends on the path: `/hook` 200; `/flaky` 503 the first
 * time it sees a body, then 200; `/gone` 404; `/broken` 500. */
class Receiver {
  readonly received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
  private readonly server: Server;
  private readonly seen = new Set<string>();

  constructor() {
    this.server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      req.on("end", () => {
        const path = req.url ?? "/";
        this.received.push({ path, headers: req.headers, body });
        const first = !this.seen.has(body);
        this.seen.add(body);
        const status = path === "/gone" ? 404 : path === "/broken" ? 500 : path === "/flaky" && first ? 503 : 200;
        res.writeHead(status, status === 503 ? { "retry-after": "0" } : {}).end(status === 200 ? "" : "not now");
      });
    });
  }

  /** The receiver's base URL (`http://127.0.0.1:PORT`). */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address() as { port: number };
    return `http://127.0.0.1:${address.port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Outcomes the worker recorded, awaited one kind at a time. */
class Outcomes {
  readonly seen: Array<{ delivery: Delivery; outcome: string; error: string | null }> = [];
  private waiters: Array<() => void> = [];

  readonly hook: NonNullable<PushOptions["onRecord"]> = (delivery, outcome, error) => {
    this.seen.push({ delivery, outcome, error });
    for (const w of this.waiters.splice(0)) w();
  };

  async until(outcome: string, n: number): Promise<void> {
    while (this.seen.filter((s) => s.outcome === outcome).length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

const DIR = mkdtempSync(join(tmpdir(), "agentproto-a2a-push-"));
after(() => rmSync(DIR, { recursive: true, force: true }));
let files = 0;
const STORES: ReadonlyArray<[string, () => Promise<TaskStore>]> = [
  ["memory", async () => new MemoryStore()],
  ["sqlite", async () => SqliteStore.open(join(DIR, `push-${++files}.db`))],
];

async function withPush(store: TaskStore, options: PushOptions, body: (client: A2aClient) => Promise<void>): Promise<void> {
  const server = new A2aHttpServer((url) => new A2aCore(new DemoAgent(), { card: demoCard(url), store, push: { allowLoopback: true, initialBackoffMs: 5, ...options } }));
  await server.listen(0);
  try {
    await body(new A2aClient({ url: `${server.url}/`, binding: "jsonrpc", timeoutMs: 10_000 }));
  } finally {
    await server.close();
    await store.close();
  }
}

function send(client: A2aClient, url: string, text = "pushed") {
  return client.sendMessage({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] }, configuration: { taskPushNotificationConfig: { url, token: "tok-1" } } });
}

for (const [name, make] of STORES) {
  test(`${name} store: every event of a task with an inline push config reaches the receiver, in order, with the token`, async () => {
    const receiver = new Receiver();
    const base = await receiver.listen();
    const outcomes = new Outcomes();
    try {
      await withPush(await make(), { onRecord: outcomes.hook }, async (client) => {
        const sent = await send(client, `${base}/hook`);
        const id = sent.task?.id as string;
        await within(outcomes.until("done", 4), "four deliveries");
        const events = receiver.received.map((r) => JSON.parse(r.body) as StreamResponse);
        assert.ok(events[0]?.task !== undefined && events[0].task.id === id, "the task first");
        assert.equal(events[1]?.statusUpdate?.status.state, "TASK_STATE_WORKING");
        assert.equal(events[2]?.artifactUpdate?.artifact.parts[0]?.text, "pushed");
        assert.equal(events[3]?.statusUpdate?.status.state, "TASK_STATE_COMPLETED");
        for (const r of receiver.received) {
          assert.equal(r.headers["content-type"], "application/a2a+json");
          assert.equal(r.headers["a2a-version"], "1.0");
          assert.equal(r.headers["x-a2a-notification-token"], "tok-1");
          assert.equal(r.headers["a2a-notification-token"], "tok-1");
        }
      });
    } finally {
      await receiver.close();
    }
  });

  test(`${name} store: a 503 is retried, a 404 is a dead letter at once, and attempts run out`, async () => {
    const receiver = new Receiver();
    const base = await receiver.listen();
    const outcomes = new Outcomes();
    const store = await make();
    try {
      await withPush(store, { onRecord: outcomes.hook, maxAttempts: 2 }, async (client) => {
        await send(client, `${base}/flaky`);
        await within(outcomes.until("done", 4), "four deliveries, each after one retry");
        assert.equal(outcomes.seen.filter((s) => s.outcome === "retry").length, 4);
        assert.match(outcomes.seen.find((s) => s.outcome === "retry")?.error ?? "", /^HTTP 503/);
        assert.equal(receiver.received.length, 8);

        await send(client, `${base}/gone`);
        await within(outcomes.until("dead", 4), "four dead letters at once");
        assert.equal(receiver.received.filter((r) => r.path === "/gone").length, 4, "no retry after a 404");
        await send(client, `${base}/broken`);
        await within(outcomes.until("dead", 8), "four more dead letters after their attempts");
        assert.equal(receiver.received.filter((r) => r.path === "/broken").length, 8, "two attempts each");
        const dead = await store.deadLetters(100);
        assert.deepEqual(
          dead.map((d) => [d.error.replace(/: not now$/, ""), d.attempts]),
          [...Array<[string, number]>(4).fill(["HTTP 404", 1]), ...Array<[string, number]>(4).fill(["gave up after 2 attempts: HTTP 500", 2])],
        );
        assert.equal(dead[0]?.config?.url, `${base}/gone`);
        assert.ok(dead.every((d) => d.event !== null));
      });
    } finally {
      await receiver.close();
    }
  });
}
