// What the process-based sync tests share: the peers' paths (failing clearly
// when one is missing), a deadline on every child, bounded runs of other
// programs, the official walk and the same walk over our reader.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

import { type SourceFile } from "../../src/sync/ast.js";
import { type ClientOptions, SyncClient } from "../../src/sync/client.js";
import { signalGroup } from "../../src/sync/process.js";
import { type ServerApi } from "../../src/sync/tsc.js";
import { type WatchdogData } from "./watchdog-worker.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root (this file is `ts/dist/test/sync/support.js` once built). */
export const REPO_ROOT = resolve(here, "../../../..");
/** How long one test may talk to a child before the child is killed. */
export const DEADLINE_MS = 60_000;

/** `interop/tsc-api`, where `walk.mjs` lives and `npm ci` installs the pinned `typescript@7.0.2`. */
export const INTEROP_DIR = join(REPO_ROOT, "interop/tsc-api");

/** The npm folder of one pinned server: `interop/tsc-api` (7.0.2) or `interop/tsc-api/7.1` (7.1.0-beta). */
export function installDir(server: ServerApi): string {
  return server === "7.1.0-beta" ? join(INTEROP_DIR, "7.1") : INTEROP_DIR;
}

/** The platform package's `lib` directory of one server: the `tsc` binary and the `lib.*.d.ts` files. */
export function tscLibDir(server: ServerApi): string {
  return join(installDir(server), "node_modules/@typescript/typescript-linux-x64/lib");
}

/** A pinned `tsc` binary; a missing one fails the test (never a silent skip). */
export function tscBinary(server: ServerApi = "7.0.2"): string {
  const binary = join(tscLibDir(server), "tsc");
  assert.ok(
    existsSync(binary),
    `the pinned TypeScript ${server} API server is missing at ${binary}: run \`npm ci --prefix ${relative(REPO_ROOT, installDir(server))} --no-audit --no-fund\``,
  );
  return binary;
}

/** Our TypeScript fixture server, built next to this file by `tsc`. */
export const TS_FIXTURE = resolve(here, "../../src/sync/fixture.js");

/** The Rust fixture server; a missing one fails the test. */
export function rustFixture(): string {
  const binary = join(REPO_ROOT, "target/debug/agentproto-sync-fixture");
  assert.ok(existsSync(binary), `the Rust fixture is missing at ${binary}: run \`cargo build -p agentproto-sync --bins\``);
  return binary;
}

/** `promise`, or a failure naming `what` if it has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, what: string, ms = DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Kills a client's server if the test has not finished with it within a
 * deadline, from a worker thread (the test's own thread may be blocked in a
 * request), so that a hung request fails instead of hanging the run.
 */
export class Watchdog {
  private readonly flags = new SharedArrayBuffer(8);
  private readonly worker: Worker;

  constructor(client: SyncClient, deadlineMs = DEADLINE_MS) {
    const data: WatchdogData = { killer: client.killer().share(), deadlineMs, flags: this.flags };
    this.worker = new Worker(new URL("./watchdog-worker.js", import.meta.url), { workerData: data });
  }

  /** Stops watching; fails if the deadline had passed (the child was killed). */
  async finish(): Promise<void> {
    const flags = new Int32Array(this.flags);
    Atomics.store(flags, 0, 1);
    Atomics.notify(flags, 0);
    await within(new Promise((resolve) => this.worker.once("exit", resolve)), "the watchdog thread ends");
    assert.equal(Atomics.load(flags, 1), 0, `the child was killed after ${DEADLINE_MS} ms: a request hung`);
  }
}

/**
 * Runs `body` with a client of `command`, under a watchdog; the client is
 * closed and the watchdog stopped whatever happens.
 */
export async function withClient(
  command: string,
  args: readonly string[],
  body: (client: SyncClient) => void | Promise<void>,
  options: ClientOptions = {},
): Promise<void> {
  const client = SyncClient.spawn(command, args, options);
  const watchdog = new Watchdog(client);
  try {
    await body(client);
  } finally {
    client.close();
    await watchdog.finish();
  }
}

/** Runs a program to completion in its own process group, killing the group after `deadlineMs`; returns its stdout. */
export async function runBounded(command: string, args: readonly string[], deadlineMs: number): Promise<string> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"], detached: true });
  const pid = child.pid ?? assert.fail(`could not start ${command}`);
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    signalGroup(pid, "SIGKILL");
  }, deadlineMs);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) =>
      child.once("close", (exitCode: number | null, exitSignal: NodeJS.Signals | null) => done([exitCode, exitSignal])),
    );
    assert.ok(!timedOut, `${command} ${args.join(" ")} did not finish within ${deadlineMs} ms`);
    assert.equal(code, 0, `${command} ${args.join(" ")} failed (${code ?? signal})`);
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    clearTimeout(timer);
    signalGroup(pid, "SIGKILL");
  }
}

/** What the official walk reports for a file: nodes visited below the root, FNV-1a of their (kind, pos, end). */
export interface Walk {
  readonly nodes: number;
  readonly digest: string;
}

/** Runs `interop/tsc-api/walk.mjs` (the official JS client of `server`'s package, on the same binary) over `files`. */
export async function officialWalk(server: ServerApi, cwd: string, project: string, files: readonly string[]): Promise<Walk[]> {
  tscBinary(server);
  const walk = [join(INTEROP_DIR, "walk.mjs"), "--install", installDir(server), "--cwd", cwd, "--project", project, ...files];
  const output = await runBounded(process.execPath, walk, 120_000);
  const walks = output
    .trim()
    .split("\n")
    .map((line) => {
      const value = JSON.parse(line) as { nodes: number; digest: string };
      return { nodes: value.nodes, digest: value.digest };
    });
  assert.equal(walks.length, files.length, `walk.mjs output: ${output}`);
  return walks;
}

const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffff_ffff_ffff_ffffn;

/** The same walk over our reader (`descendants`, the stackless preorder). */
export function ourWalk(file: SourceFile): Walk {
  let digest = 0xcbf29ce484222325n;
  let nodes = 0;
  for (const node of file.root.descendants()) {
    nodes++;
    for (const value of [node.kind, node.pos >>> 0, node.end >>> 0]) {
      for (let shift = 0; shift < 32; shift += 8) {
        digest = ((digest ^ BigInt((value >>> shift) & 0xff)) * FNV_PRIME) & MASK_64;
      }
    }
  }
  return { nodes, digest: digest.toString(16).padStart(16, "0") };
}

export const POINT_TS =
  "export interface Point { x: number; y: number }\n" +
  "/** Adds two points. */\n" +
  "export function add(a: Point, b: Point): Point {\n    return { x: a.x + b.x, y: a.y + b.y };\n}\n";

export const MAIN_TS =
  'import { add, type Point } from "./point";\n' +
  "const origin: Point = { x: 0, y: 0 };\n" +
  "export const moved = add(origin, { x: `${1}`.length, y: 2 });\n";

/** A temporary project of real files: `tsconfig.json`, `src/point.ts`, `src/main.ts`; `remove()` deletes it. */
export class Project {
  readonly root: string;

  constructor() {
    this.root = realpathSync(mkdtempSync(join(tmpdir(), "agentproto-sync-ts-")));
    mkdirSync(join(this.root, "src"));
    writeFileSync(
      this.tsconfig,
      JSON.stringify({ compilerOptions: { strict: true, noLib: true, target: "es2022", module: "esnext" }, files: ["src/point.ts", "src/main.ts"] }),
    );
    writeFileSync(this.file("point.ts"), POINT_TS);
    writeFileSync(this.file("main.ts"), MAIN_TS);
  }

  get tsconfig(): string {
    return join(this.root, "tsconfig.json");
  }

  file(name: string): string {
    return join(this.root, "src", name);
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}
