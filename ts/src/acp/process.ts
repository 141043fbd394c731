/**
 * Spawning an agent: the client side of ACP over a child process's stdin and stdout.
 *
 * The agent runs in a process group of its own (`detached: true`), and every way of
 * ending it ends the whole group: an agent command is often a launcher (`npx`, a shell
 * script) whose child is the real agent, and that child must not outlive the session.
 * `AgentProcess.close()` ends the session the way ACP asks (close stdin, wait
 * `exitGrace` milliseconds, then SIGKILL the group); a group still alive when this
 * process exits (normally, or after an uncaught exception) is killed from its `exit`
 * handler. A client killed by a signal it does not handle runs no handler: install one
 * that calls `close()` or `kill()` if that matters. The agent's stderr is inherited;
 * lines it prints on stdout that are not JSON are skipped and reported.
 */

import { spawn as spawnChild, type ChildProcess } from "node:child_process";

import { waitAtMost } from "../jsonrpc/cancellation.js";
import type { Connection } from "../jsonrpc/connection.js";
import { fromNodeReadable, toNodeWritable } from "../jsonrpc/transport.js";
import type { AgentConnectionBase } from "./client.js";
import type { Endpoint, RoleSurface } from "./endpoint.js";
import type { AcpOptions } from "./options.js";
import { connectClient } from "./roles.js";

/** Options of `spawnAgent`: the ACP options plus where and how to start the command. */
export interface SpawnOptions extends AcpOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

const live = new Set<number>();
let exitHookInstalled = false;

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pgid of live) killGroup(pgid);
  });
}

/** A spawned agent process and the connection serving it. */
export class AgentProcess {
  private readonly exited: Promise<void>;
  private closing: Promise<number | null> | null = null;

  constructor(
    readonly child: ChildProcess,
    /** The connection (its `run()` ends when the agent's stdout ends). */
    readonly connection: Connection,
    /** What `connection.run()` returned, failures already observed. */
    readonly running: Promise<void>,
    private readonly grace: number,
  ) {
    this.exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
    this.exited.then(() => live.delete(this.pid));
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** The agent's exit status (`null` while running, or when a signal ended it). */
  get exitCode(): number | null {
    return this.child.exitCode;
  }

  /** SIGKILLs the agent's whole process group at once (no grace). */
  kill(): void {
    killGroup(this.pid);
  }

  /** Closes the agent's stdin, waits up to `exitGrace` for it to exit, then kills what
   * is left of its process group. Resolves with the agent's exit code (`null` when a
   * signal ended it). Calling it again returns the same promise. */
  close(): Promise<number | null> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<number | null> {
    this.child.stdin?.end();
    await waitAtMost(this.grace, this.exited);
    // The group goes either way: a launcher's children must not outlive it.
    killGroup(this.pid);
    await waitAtMost(this.grace, this.exited);
    live.delete(this.pid);
    // The child is gone, so its stdout ends: the connection ends promptly.
    this.child.stdout?.destroy();
    await waitAtMost(this.grace, this.running);
    return this.child.exitCode;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Starts `command` in a process group of its own and connects `client` to it. */
export async function spawn<A extends AgentConnectionBase>(
  roles: RoleSurface,
  command: readonly string[],
  client: object,
  options: SpawnOptions = {},
  connectionType: new (endpoint: Endpoint) => A,
): Promise<{ agent: A; process: AgentProcess }> {
  const [program, ...args] = command;
  if (program === undefined) throw new TypeError("an agent command needs at least the program");
  installExitHook();
  const child = spawnChild(program, args, {
    stdio: ["pipe", "pipe", "inherit"],
    detached: true,
    cwd: options.cwd,
    env: options.env,
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", reject);
  });
  const pid = child.pid as number;
  live.add(pid);
  try {
    // Agents that print logs on stdout are common: skip what is not JSON.
    const acp: AcpOptions = { ...options, connection: { ...options.connection, skipNonJsonLines: true } };
    const stdin = child.stdin;
    const stdout = child.stdout;
    if (stdin === null || stdout === null) throw new Error("the agent's pipes are missing");
    stdin.on("error", () => {}); // a dead agent's broken pipe is reported through the connection
    const { connection, agent } = connectClient(roles, client, fromNodeReadable(stdout), toNodeWritable(stdin), acp, connectionType);
    const running = connection.run();
    running.catch(() => {});
    return { agent, process: new AgentProcess(child, connection, running, options.exitGrace ?? 2000) };
  } catch (err) {
    killGroup(pid);
    live.delete(pid);
    throw err;
  }
}
