// The server child process seen from a synchronous caller: its process group,
// ending it, and learning how it ended without running the event loop.

import { type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { constants } from "node:os";

import { type ExitStatus } from "./errors.js";

const LIVE = 0;
const KILLING = 1;
const REAPED = 2;

/** A `Killer` as plain data, for `postMessage` / `workerData` to another thread. */
export interface SharedKiller {
  readonly pid: number;
  readonly state: SharedArrayBuffer;
}

/**
 * Ends a server's process group from any thread (a worker enforcing a
 * deadline on a request that blocks the thread that owns the client: the
 * request then fails with `ChildExitedError`). Once the client has seen the
 * child dead, killing does nothing, so that a pid given to another process
 * later is never signalled.
 */
export class Killer {
  private readonly flag: Int32Array;

  private constructor(
    readonly pid: number,
    private readonly state: SharedArrayBuffer,
  ) {
    this.flag = new Int32Array(state);
  }

  /** A killer for a new child (its pid is also its process group id). */
  static create(pid: number): Killer {
    return new Killer(pid, new SharedArrayBuffer(4));
  }

  /** The killer rebuilt from `share()`'s data in another thread. */
  static from(shared: SharedKiller): Killer {
    return new Killer(shared.pid, shared.state);
  }

  /** The data another thread needs to rebuild this killer. */
  share(): SharedKiller {
    return { pid: this.pid, state: this.state };
  }

  /** Sends SIGKILL to the whole group, unless the child is known dead. */
  kill(): void {
    if (Atomics.compareExchange(this.flag, 0, LIVE, KILLING) !== LIVE) return;
    try {
      signalGroup(this.pid, "SIGKILL");
    } finally {
      Atomics.store(this.flag, 0, LIVE);
      Atomics.notify(this.flag, 0);
    }
  }

  /** Whether the owner has seen the child dead. */
  get reaped(): boolean {
    return Atomics.load(this.flag, 0) === REAPED;
  }

  /** Records that the child is dead: later kills do nothing. Waits for a kill in progress in another thread. */
  markReaped(): void {
    for (;;) {
      const previous = Atomics.compareExchange(this.flag, 0, LIVE, REAPED);
      if (previous !== KILLING) return;
      // Another thread is inside `kill()`: one system call away from done.
      Atomics.wait(this.flag, 0, KILLING, 1000);
    }
  }
}

/** Sends `signal` to every process of the group `leader` leads; a group with nobody left is not an error. */
export function signalGroup(leader: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-leader, signal);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ESRCH") throw error;
  }
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
);

/** A `waitpid` status word as code or signal. */
export function decodeWaitStatus(word: number): ExitStatus {
  const signal = word & 0x7f;
  if (signal === 0) return { code: (word >> 8) & 0xff, signal: null };
  return { code: null, signal: SIGNAL_NAMES.get(signal) ?? (`SIG${signal}` as NodeJS.Signals) };
}

/** What `/proc/PID/stat` says of a child that nobody has reaped yet. */
type ProcState = { readonly dead: true; readonly status: ExitStatus } | { readonly dead: false };

let procAvailable: boolean | undefined;

/** Reads the child's state from `/proc` (Linux); `undefined` where there is no `/proc` or no such process. */
function procState(pid: number): ProcState | undefined {
  if (procAvailable === false) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    procAvailable = true;
  } catch {
    if (procAvailable === undefined) {
      try {
        readFileSync("/proc/self/stat");
        procAvailable = true;
      } catch {
        procAvailable = false;
      }
    }
    return undefined;
  }
  // `PID (COMM) STATE …`: COMM may hold spaces and parentheses. After it,
  // field 3 (the state) is the first word and field 52 (the exit code, in
  // `waitpid` form, Linux ≥ 3.5) the fiftieth.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  if (state !== "Z" && state !== "X") return { dead: false };
  return { dead: true, status: decodeWaitStatus(Number(fields[49] ?? 0)) };
}

/** Whether `pid` exists and has not exited (a zombie counts as exited); Linux reads `/proc`. */
export function running(pid: number): boolean {
  const state = procState(pid);
  if (state !== undefined) return !state.dead;
  if (procAvailable) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * Waits (at most `limitMs`) for a child that has been sent SIGKILL to be dead
 * and returns how it ended. Node reaps children only from its event loop,
 * which a synchronous caller does not run; until then the child is a zombie
 * whose status Linux shows in `/proc/PID/stat`. A killed process takes
 * microseconds to die, which is waited for in naps of growing length (pure JS
 * has no way to block on a child's death). Without `/proc`, or when the event
 * loop has already reaped the child, the status is what Node recorded, if any.
 */
export function awaitDeath(child: ChildProcess, pid: number, limitMs = 10_000): ExitStatus | undefined {
  const deadline = performance.now() + limitMs;
  let pause = 0.05;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      return { code: child.exitCode, signal: child.signalCode };
    }
    const state = procState(pid);
    if (state === undefined) return undefined;
    if (state.dead) return state.status;
    if (performance.now() >= deadline) return undefined;
    Atomics.wait(nap, 0, 0, pause);
    pause = Math.min(pause * 2, 5);
  }
}
