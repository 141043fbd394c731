// The cases every fixture server answers the same way (the Rust one in
// `crates/sync/src/bin/agentproto-sync-fixture.rs`, ours in
// `src/sync/fixture.ts`): run by ts-pair.test.ts and rust-fixture.test.ts.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";

import {
  CallbackError,
  ChannelClosedError,
  ChildExitedError,
  JsonParamsError,
  JsonResultError,
  ProtocolError,
  ServerError,
} from "../../src/sync/errors.js";
import { encode, FrameReader, MessageType } from "../../src/sync/frame.js";
import { running, signalGroup } from "../../src/sync/process.js";
import { bytes, MemorySource, text } from "./memory.js";
import { DEADLINE_MS, Watchdog, withClient, within } from "./support.js";
import { SyncClient } from "../../src/sync/client.js";

function serverError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ServerError, `expected a server error, got ${String(error)}`);
    return error.text;
  }
  assert.fail("the request succeeded");
}

function childExited(run: () => unknown): ChildExitedError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ChildExitedError, `expected the child to have exited, got ${String(error)}`);
    return error;
  }
  assert.fail("the request succeeded");
}

const pattern = (length: number, modulo: number): Uint8Array => Uint8Array.from({ length }, (_, index) => index % modulo);

/** Registers the cases against the fixture `command args`. */
export function fixtureCases(label: string, server: () => [string, string[]]): void {
  const run = (body: (client: SyncClient) => void | Promise<void>, limits?: { maxName: number; maxPayload: number }) => {
    const [command, args] = server();
    return withClient(command, args, body, limits === undefined ? {} : { limits });
  };

  test(`${label}: echo round-trips every bin size class`, () =>
    run((client) => {
      for (const length of [0, 1, 255, 256, 65_535, 65_536, 1 << 20]) {
        const payload = pattern(length, 253);
        assert.deepEqual(client.request("echo", payload), payload, `length ${length}`);
      }
      assert.equal(client.requestText("echo", "text é"), "text é");
    }));

  test(`${label}: results are views of one reused buffer, valid until the next request`, () =>
    run((client) => {
      const first = client.request("echo", "first");
      const kept = first.slice();
      const second = client.request("echo", "other");
      assert.equal(first.buffer, second.buffer);
      assert.equal(text(kept), "first");
      assert.equal(text(second), "other");
    }));

  test(`${label}: large results arrive whole`, () =>
    run((client) => {
      const result = client.request("repeat", "3000000");
      assert.equal(result.length, 3_000_000);
      assert.ok(result.every((byte, index) => byte === index % 251));
    }));

  test(`${label}: JSON requests encode params and decode results`, () =>
    run((client) => {
      assert.deepEqual(client.requestJson("echo", { a: [1, "é", null] }), { a: [1, "é", null] });
      // `repeat` answers bytes 0, 1, 2: not JSON.
      assert.throws(() => client.requestJson("repeat", 3), JsonResultError);
      assert.equal(client.request("echo", "").length, 0);
      assert.throws(() => client.requestJson("echo", { big: 1n }), JsonParamsError);
      assert.throws(() => client.requestJson("echo", undefined), JsonParamsError);
      assert.equal(client.requestText("echo", "the channel is intact"), "the channel is intact");
    }));

  test(`${label}: a request from inside a callback is refused, and the refusal goes back as a call error`, () =>
    run((client) => {
      client.registerCallback("reenter", () => client.request("echo", "inner"));
      assert.equal(
        serverError(() => client.request("callback", "reenter\0x")),
        "client error: callback `reenter` panicked: request `echo` sent while another request is in flight",
      );
      assert.equal(client.requestText("echo", "outer"), "outer");
    }));

  test(`${label}: callbacks are answered mid-request, in order`, () =>
    run((client) => {
      let calls = 0;
      client.registerCallback("upper", (payload) => `${text(payload).toUpperCase()}#${++calls}`);
      client.registerCallback("length", (payload) => String(payload.length));
      client.registerCallback("nothing", () => undefined);
      assert.equal(client.requestText("callback", "upper\0abc\0length\0hello\0upper\0x\0nothing\0y"), "ABC#1\x005\0X#2\0");
      // The registry outlives the request.
      assert.equal(client.requestText("callback", "upper\0again"), "AGAIN#3");
      // A callback answer as large as a bin32.
      client.registerCallback("big", (payload) => pattern(Number(text(payload)), 7));
      assert.deepEqual(client.request("callback", "big\x00100000"), pattern(100_000, 7));
    }));

  test(`${label}: callback failures reach the server as call errors`, () =>
    run((client) => {
      client.registerCallback("refuse", () => {
        throw new CallbackError("not today");
      });
      client.registerCallback("explode", () => {
        throw new Error("callback blew up");
      });
      assert.equal(serverError(() => client.request("callback", "refuse\0x")), "client error: not today");
      assert.equal(serverError(() => client.request("callback", "missing\0x")), "client error: unknown callback `missing`");
      assert.equal(serverError(() => client.request("callback", "explode\0x")), "client error: callback `explode` panicked: callback blew up");
      client.registerCallback("number", () => 42 as unknown as string);
      assert.equal(
        serverError(() => client.request("callback", "number\0x")),
        "client error: callback `number` panicked: it returned number, not bytes or a string",
      );
      assert.equal(client.requestText("echo", "fine"), "fine");
    }));

  test(`${label}: handler errors, panics and unknown methods become server errors`, () =>
    run((client) => {
      assert.equal(serverError(() => client.request("fail", "no such file")), "no such file");
      assert.equal(serverError(() => client.request("panic")), "handler `panic` panicked: the fixture was asked to panic");
      assert.equal(serverError(() => client.request("nope")), "unknown method `nope`");
      assert.equal(client.requestText("echo", "still serving"), "still serving");
    }));

  test(`${label}: a server exiting mid-request is ChildExitedError with its status`, () =>
    run((client) => {
      const error = childExited(() => client.request("exit"));
      assert.deepEqual(error.status, { code: 3, signal: null });
      assert.ok(!running(client.pid));
      assert.ok(!client.isOpen);
      // Later requests fail the same way, at once.
      assert.deepEqual(childExited(() => client.request("echo", "x")).status, { code: 3, signal: null });
    }));

  test(`${label}: a server killed from another thread is a clean error`, () =>
    run((client) => {
      client.killer().kill();
      assert.deepEqual(childExited(() => client.request("echo", "x")).status, { code: null, signal: "SIGKILL" });
    }));

  test(`${label}: a response over the client's limit is a protocol error and ends the channel`, () =>
    run(
      (client) => {
        assert.equal(client.request("repeat", "1000").length, 1000);
        assert.throws(() => client.request("repeat", "1001"), (error: unknown) => error instanceof ProtocolError && error.detail.reason === "frame");
        childExited(() => client.request("echo"));
      },
      { maxName: 64, maxPayload: 1000 },
    ));

  test(`${label}: close ends the group, reports the kill, and Node reaps the child`, async () => {
    const [command, args] = server();
    const client = SyncClient.spawn(command, args);
    const watchdog = new Watchdog(client);
    try {
      assert.equal(client.requestText("echo", "x"), "x");
      // Its stdin closes first: a server quick to see the end of its input
      // exits by itself (0) before the kill lands; otherwise the kill ends it.
      const status = client.close();
      assert.ok(
        (status?.code === 0 && status.signal === null) || (status?.code === null && status.signal === "SIGKILL"),
        `close reported ${JSON.stringify(status)}`,
      );
      assert.ok(!running(client.pid), "dead after close");
      assert.ok(client.killer().reaped, "a killer does nothing once the child is dead");
      assert.throws(() => client.request("echo"), ChannelClosedError);
      assert.deepEqual(client.close(), status, "a second close reports the same");
      assert.deepEqual(await within(client.exited, "Node reaps the child"), status, "what Node sees when it reaps the child");
    } finally {
      client.close();
      await watchdog.finish();
    }
  });

  test(`${label}: the server exits cleanly at the end of its input`, async () => {
    // Raw pipes rather than the client, to close stdin and watch the server go.
    const [command, args] = server();
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], detached: true });
    const pid = child.pid ?? assert.fail("spawn");
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), DEADLINE_MS);
    try {
      child.stdin.end(encode(MessageType.Request, bytes("echo"), bytes("bye")));
      const [code, signal] = await new Promise<[number | null, string | null]>((done) =>
        child.once("close", (exitCode: number | null, exitSignal: string | null) => done([exitCode, exitSignal])),
      );
      assert.deepEqual([code, signal], [0, null], "the fixture exits with 0 at the end of its input");
      const reader = new FrameReader(new MemorySource(Buffer.concat(chunks)));
      const answer = reader.read() ?? assert.fail("no answer");
      assert.deepEqual([answer.kind, text(answer.name), text(answer.payload)], [MessageType.Response, "echo", "bye"]);
      assert.equal(reader.read(), null, "nothing after the answer");
    } finally {
      clearTimeout(timer);
      signalGroup(pid, "SIGKILL");
    }
  });
}
