// The thread of a `Watchdog` (support.ts): waits for the test to finish and
// kills the child's process group if the deadline passes first. Run as a test
// file on its own (node --test runs every file under test/), it does nothing.

import { isMainThread, workerData } from "node:worker_threads";

import { Killer, type SharedKiller } from "../../src/sync/process.js";

/** What the worker is given: the killer, the deadline, and the flag the test raises when done. */
export interface WatchdogData {
  readonly killer: SharedKiller;
  readonly deadlineMs: number;
  /** Int32Array: [0] done (set by the test), [1] killed (set here). */
  readonly flags: SharedArrayBuffer;
}

if (!isMainThread) {
  const data = workerData as WatchdogData;
  const flags = new Int32Array(data.flags);
  if (Atomics.wait(flags, 0, 0, data.deadlineMs) === "timed-out") {
    Atomics.store(flags, 1, 1);
    Killer.from(data.killer).kill();
  }
}
