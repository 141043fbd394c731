/** `Terminals` running real commands: output, exit statuses, limits, process groups,
 * refusals, and the five requests answered over a real connection. */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { FsRoots } from "../../src/acp/fs.js";
import { Terminals, type TerminalsOptions } from "../../src/acp/terminals.js";
import * as v1 from "../../src/acp/v1.js";
import { duplex } from "../../src/jsonrpc/memory.js";
import { RequestError } from "../../src/jsonrpc/local-error.js";
import { within } from "../jsonrpc/harness.js";

const SESSION = "s1";
const opened: Terminals[] = [];

/** A `Terminals` closed after the tests whatever happens. */
function terminals(options?: TerminalsOptions): Terminals {
  const t = new Terminals(options);
  opened.push(t);
  return t;
}

after(async () => {
  for (const t of opened) await t.close();
});

function create(t: Terminals, command: string, args: string[] = [], extra: Partial<v1.CreateTerminalRequest> = {}): Promise<string> {
  return t.create({ sessionId: SESSION, command, args, ...extra }).then((r) => r.terminalId);
}

const ids = (terminalId: string, sessionId = SESSION): { sessionId: string; terminalId: string } => ({ sessionId, terminalId });

/** Whether a process exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Waits, at most 5 s, until `pid` has gone; kills it when it has not (nothing outlives the test). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone after all
  }
  return false;
}

/** Reads the terminal's output until it holds a full line, at most 5 s. */
async function firstLine(t: Terminals, terminalId: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const { output } = await t.output(ids(terminalId));
    const end = output.indexOf("\n");
    if (end >= 0) return output.slice(0, end);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("no line of output within 5 s");
}

/** Expects a `RequestError` with `code` (and, when given, `data.path`). */
async function refused(promise: Promise<unknown>, code: number, path?: string): Promise<RequestError> {
  const err = await promise.then(
    () => assert.fail("expected a refusal"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof RequestError, `not a RequestError: ${String(err)}`);
  assert.equal(err.error.code, code, err.message);
  if (path !== undefined) assert.equal((err.error.data?.parse() as { path?: string }).path, path);
  return err;
}

test("stdout and stderr are collected and the exit code is reported", async () => {
  const t = terminals();
  const id = await create(t, "sh", ["-c", "printf out; printf err >&2; exit 3"]);
  assert.deepEqual(await within(t.waitForExit(ids(id)), "the exit"), { exitCode: 3, signal: null });
  const output = await t.output(ids(id));
  assert.equal(output.truncated, false);
  assert.deepEqual(output.exitStatus, { exitCode: 3, signal: null });
  // The two pipes are read as they come: either may be first.
  assert.ok(["outerr", "errout"].includes(output.output), output.output);
});

test("env entries are added to the environment and cwd is the working directory", async () => {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "agentproto-terminals-")));
  try {
    const t = terminals();
    const id = await create(t, "sh", ["-c", 'printf "%s|%s|%s" "$GREETING" "$PWD" "${HOME:+home}"'], {
      cwd: dir,
      env: [{ name: "GREETING", value: "hi there" }],
    });
    await within(t.waitForExit(ids(id)), "the exit");
    assert.equal((await t.output(ids(id))).output, `hi there|${dir}|${process.env["HOME"] === undefined ? "" : "home"}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("kill ends the command with SIGKILL; a pending wait gets that status and the terminal stays readable", async () => {
  const t = terminals();
  const id = await create(t, "sleep", ["30"]);
  const waiting = t.waitForExit(ids(id));
  assert.equal((await t.output(ids(id))).exitStatus, undefined);
  await within(t.kill(ids(id)), "the kill");
  assert.deepEqual(await within(waiting, "the wait"), { exitCode: null, signal: "SIGKILL" });
  assert.deepEqual((await t.output(ids(id))).exitStatus, { exitCode: null, signal: "SIGKILL" });
  await t.release(ids(id));
});

test("what a command leaves running in the background is killed when it exits", async () => {
  const t = terminals();
  // The background `sleep` holds the output pipe: the exit is recorded only once it is gone.
  const id = await create(t, "sh", ["-c", "sleep 30 & echo $!"]);
  assert.deepEqual(await within(t.waitForExit(ids(id)), "the exit, long before 30 s"), { exitCode: 0, signal: null });
  const pid = Number((await t.output(ids(id))).output.trim());
  assert.ok(pid > 0);
  assert.ok(await gone(pid), `background process ${pid} still runs`);
});

test("kill ends the whole group, not only the command", async () => {
  const t = terminals();
  // The background `sleep` holds no pipe: only the group kill can end it.
  const id = await create(t, "sh", ["-c", "sleep 30 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 30"]);
  const pid = Number(await within(firstLine(t, id), "the pid"));
  assert.ok(alive(pid));
  await within(t.kill(ids(id)), "the kill");
  assert.ok(await gone(pid), `background process ${pid} survived terminal/kill`);
});

test("terminal ids are never reused, even after a release", async () => {
  const t = terminals();
  const a = await create(t, "true");
  const b = await create(t, "true");
  await t.release(ids(a));
  const c = await create(t, "true");
  assert.equal(new Set([a, b, c]).size, 3);
});

test("release kills the whole group and forgets the terminal", async () => {
  const t = terminals();
  const id = await create(t, "sh", ["-c", "sleep 30 & echo $!; wait"]);
  const pid = Number(await within(firstLine(t, id), "the pid"));
  await t.release(ids(id));
  assert.ok(await gone(pid), `process ${pid} still runs after release`);
  await refused(t.output(ids(id)), -32002);
  await refused(t.release(ids(id)), -32002);
});

test("the output limit keeps the last bytes, cut at a character boundary", async () => {
  const t = terminals();
  const script = "process.stdout.write('x' + 'é'.repeat(10))";
  const id = await create(t, process.execPath, ["-e", script], { outputByteLimit: 5 });
  await within(t.waitForExit(ids(id)), "the exit");
  const output = await t.output(ids(id));
  assert.deepEqual([output.output, output.truncated], ["éé", true]);
});

test("the output limit is capped by maxOutputLimit and defaults to defaultOutputLimit", async () => {
  const t = terminals({ defaultOutputLimit: 3, maxOutputLimit: 4 });
  const byDefault = await create(t, "printf", ["abcdef"]);
  const capped = await create(t, "printf", ["abcdef"], { outputByteLimit: 1000 });
  await within(Promise.all([t.waitForExit(ids(byDefault)), t.waitForExit(ids(capped))]), "the exits");
  assert.equal((await t.output(ids(byDefault))).output, "def");
  assert.equal((await t.output(ids(capped))).output, "cdef");
});

test("a terminal belongs to its session; unknown ids are -32002 with the terminal id", async () => {
  const t = terminals();
  const id = await create(t, "true");
  const err = await refused(t.output(ids(id, "another")), -32002);
  assert.deepEqual(err.error.data?.parse(), { terminalId: id });
  await refused(t.waitForExit(ids("term-99")), -32002);
  await refused(t.kill(ids("term-99")), -32002);
});

test("what no process can be started with is refused -32602 at its path", async () => {
  const t = terminals();
  await refused(create(t, ""), -32602, "$.params.command");
  await refused(create(t, "echo", ["ok", "a\0b"]), -32602, "$.params.args[1]");
  await refused(create(t, "echo", [], { env: [{ name: "A=B", value: "x" }] }), -32602, "$.params.env[0].name");
  await refused(create(t, "echo", [], { env: [{ name: "A", value: "x\0" }] }), -32602, "$.params.env[0].value");
  await refused(create(t, "echo", [], { cwd: "relative/dir" }), -32602, "$.params.cwd");
});

test("a command that cannot be started is -32603 naming it", async () => {
  const t = terminals();
  const err = await refused(create(t, "/nonexistent/agentproto-no-such-program"), -32603);
  assert.match(err.error.message, /cannot start `\/nonexistent\/agentproto-no-such-program`/);
});

test("with roots, cwd must be a directory inside them; without cwd the first root is used", async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), "agentproto-terminals-root-")));
  try {
    const t = terminals({ roots: await FsRoots.of([root]) });
    await refused(create(t, "pwd", [], { cwd: "/" }), -32602, "$.params.cwd");
    await refused(create(t, "pwd", [], { cwd: join(root, "missing") }), -32602, "$.params.cwd");
    await refused(create(t, "pwd", [], { cwd: join(root, "..", "x") }), -32602, "$.params.cwd");
    const id = await create(t, "pwd");
    await within(t.waitForExit(ids(id)), "the exit");
    assert.equal((await t.output(ids(id))).output.trim(), root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test("close kills every running command and refuses later terminals", async () => {
  const t = terminals();
  const id = await create(t, "sh", ["-c", "echo $$; exec sleep 30"]);
  const pid = Number(await within(firstLine(t, id), "the pid"));
  await within(t.close(), "close");
  assert.ok(await gone(pid), `process ${pid} still runs after close`);
  await refused(create(t, "true"), -32603);
  await t.close(); // twice is harmless
});

test("an agent runs a command on the client over a real connection", async () => {
  const t = terminals();
  const client: v1.Client = {
    ...t.handlers(),
    requestPermission: () => ({ outcome: { outcome: "cancelled" } }),
    sessionUpdate: () => {},
  };
  let result: v1.TerminalOutputResponse | null = null;
  const agent: v1.Agent = {
    initialize: () => ({ protocolVersion: 1 }),
    newSession: () => ({ sessionId: SESSION }),
    async prompt(cx, params) {
      const { terminalId } = await cx.peer.createTerminal({ sessionId: params.sessionId, command: "sh", args: ["-c", "echo hello"] });
      await cx.peer.waitForTerminalExit({ sessionId: params.sessionId, terminalId });
      result = await cx.peer.terminalOutput({ sessionId: params.sessionId, terminalId });
      await cx.peer.releaseTerminal({ sessionId: params.sessionId, terminalId });
      return { stopReason: "end_turn" };
    },
    authenticate: () => ({}),
    cancel: () => {},
  };
  const [a, c] = duplex();
  const served = v1.connectAgent(agent, a.input, a.output);
  const connected = v1.connectClient(client, c.input, c.output);
  const runs = [served.connection.run(), connected.connection.run()];
  await within(connected.agent.initialize({ protocolVersion: 1, clientCapabilities: { terminal: true } }), "initialize");
  const { sessionId } = await connected.agent.newSession({ cwd: "/", mcpServers: [] });
  const answer = await within(connected.agent.prompt({ sessionId, prompt: [{ type: "text", text: "run" }] }), "the turn");
  assert.equal(answer.stopReason, "end_turn");
  assert.deepEqual(result, { output: "hello\n", truncated: false, exitStatus: { exitCode: 0, signal: null } });
  await c.output.close();
  await within(Promise.all(runs), "both connections end");
});
