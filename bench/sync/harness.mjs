// What every JavaScript sync-channel driver shares (bench/README.md, "Sync channel"): the
// command line, the inputs file, seed 002's workloads written once over a small adapter,
// the clock and the one-line JSON report per workload. The Rust and Python drivers follow
// the same contract.
//
//   node <driver>.mjs --tsc PATH --project DIR --inputs INPUTS.json --workload NAME:WARMUP:ITERATIONS ...
//
// An adapter supplies the primitive calls of one client (spawn, echo, initialize, open the
// project, release a snapshot, fetch a source file, walk it, the symbol calls, close). Each
// iteration's untimed preparation (a fresh server, a cleared cache, a fetched file) runs
// outside the clock; every iteration is timed on its own (process.hrtime.bigint).
// For an `async` adapter every call is awaited inside the clock; for a synchronous one
// nothing is awaited inside it.
//
// The inputs name the server's release (`server`: "7.0.2" or "7.1.0-beta") and the npm
// install its binary and official clients come from (`install`), with the names that differ
// between releases (`opens_with`, `official_sync`, `official_async`; bench/adapters.json).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const now = () => process.hrtime.bigint();

function parseArgs(argv) {
  const args = { workloads: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--tsc") args.tsc = value;
    else if (flag === "--project") args.project = value;
    else if (flag === "--inputs") args.inputs = JSON.parse(readFileSync(value, "utf8"));
    else if (flag === "--workload") {
      const [name, warmup, iterations, extra] = value.split(":");
      const counts = [warmup, iterations].map((n) => Number.parseInt(n, 10));
      if (extra !== undefined || !counts.every((n) => Number.isSafeInteger(n) && n >= 0)) {
        throw new Error(`--workload ${value}: expected NAME:WARMUP:ITERATIONS`);
      }
      args.workloads.push({ name, warmup: counts[0], iterations: counts[1] });
    } else throw new Error(`unknown flag ${flag}`);
  }
  if (!args.tsc || !args.inputs || !args.project?.startsWith("/")) {
    throw new Error("--tsc, --inputs and an absolute --project are required");
  }
  return args;
}

// Where each release's official `Project` keeps its root files.
const ROOT_FILES = {
  "7.0.2": (project) => project.rootFiles,
  "7.1.0-beta": (project) => project.parsedCommandLine.fileNames,
};

/**
 * The official client module `flavour` ("sync" or "async") of the install the inputs name,
 * the name of its project-opening method and where its projects keep their root files.
 * Fails unless the install's `typescript` is the release the inputs name: the method set is
 * configured, never guessed.
 */
export async function officialClient(inputs, flavour) {
  const rootFiles = ROOT_FILES[inputs.server];
  if (!rootFiles) throw new Error(`no official client known for typescript ${inputs.server}`);
  const require = createRequire(join(inputs.install, "package.json"));
  const version = JSON.parse(readFileSync(require.resolve("typescript/package.json"), "utf8")).version;
  if (version !== inputs.server) throw new Error(`${inputs.install}: typescript ${version}, not ${inputs.server}`);
  const module = await import(pathToFileURL(require.resolve(inputs[`official_${flavour}`])).href);
  return { API: module.API, opensWith: inputs.opens_with, rootFiles };
}

/** Waits for `promise` at most `ms` milliseconds (a referenced timer keeps the loop alive meanwhile). */
export function within(promise, ms) {
  let timer;
  const expired = new Promise((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Waits until `child` (a ChildProcess) has exited and been reaped: bounded, SIGKILL after `ms`. */
export async function reap(child, ms = 5000) {
  if (!child) return;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  if (gone()) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  if ((await within(exited, ms)) === "timeout") {
    child.kill("SIGKILL");
    if ((await within(exited, ms)) === "timeout") throw new Error(`child ${child.pid} survived SIGKILL`);
  }
}

/**
 * Runs the command line's workloads on an adapter (`adapterOf`, or what `adapterOf(args)`
 * returns when it is a function) and prints one line each:
 * {status, workload, warmup, iterations, samples_ns, detail}. The adapter:
 *   async: boolean                       every call below returns a promise
 *   spawn(args) -> server                a new server process (the channel's constructor)
 *   echo(server, text) -> string         the echo round trip (the answer as text)
 *   initialize(server)                   untimed, first on a server that opens the project (what the client does first)
 *   open(server, tsconfig) -> {snapshot, roots}   the release's method opening the project (updateSnapshot or createSnapshot)
 *   release(server, snapshot)            untimed after each warm load (dispose the old snapshot)
 *   beforeFetch(server)?                 untimed before each transfer (clear a client-side cache)
 *   fetch(server, snapshot, file) -> byte count   getSourceFile, the result in hand
 *   walkable(server, snapshot, file) -> {file, bytes}   untimed: a fetched file, ready to walk
 *   walk(file) -> node count             the whole tree, every node visited (synchronous everywhere)
 *   symbol(server, snapshot, file, position) -> symbol name or undefined
 *   symbols(server, snapshot, file, positions) -> array (undefined/null where none)
 *   identifiers?(server, snapshot, file) -> positions   (untimed; agentproto's readers only)
 *   close(server)                        ends the server and waits until it is reaped
 */
export async function main(adapterOf) {
  let args;
  let adapter;
  try {
    args = parseArgs(process.argv.slice(2));
    adapter = typeof adapterOf === "function" ? await adapterOf(args) : adapterOf;
  } catch (error) {
    process.stdout.write(JSON.stringify({ status: "error", error: String(error?.message ?? error) }) + "\n");
    process.exitCode = 2;
    return;
  }
  let session;
  const sessionOf = async () => {
    if (!session) {
      const server = await adapter.spawn(args);
      try {
        await adapter.initialize(server);
        const opened = await adapter.open(server, args.inputs.tsconfig);
        session = { server, snapshot: opened.snapshot, roots: opened.roots };
      } catch (error) {
        await adapter.close(server);
        throw error;
      }
    }
    return session;
  };
  let current = "";
  try {
    for (const workload of args.workloads) {
      current = workload.name;
      const line = await runWorkload(adapter, args, workload, sessionOf);
      process.stdout.write(JSON.stringify(line) + "\n");
    }
  } catch (error) {
    const text = String(error?.stack ?? error);
    process.stdout.write(JSON.stringify({ status: "error", workload: current, error: text }) + "\n");
    process.exitCode = 1;
  } finally {
    if (session) await adapter.close(session.server);
  }
}

/** Times `run` once per iteration; `before` and `after` run outside the clock. `run` is awaited only when `awaited`. */
async function measure(workload, awaited, { before, run, after }) {
  const samples = [];
  for (let index = 0; index < workload.warmup + workload.iterations; index++) {
    const state = before ? await before() : undefined;
    const started = now();
    const value = awaited ? await run(state) : run(state);
    const elapsed = now() - started;
    if (after) await after(state, value);
    if (index >= workload.warmup) samples.push(Number(elapsed));
  }
  return samples;
}

function fileOf(inputs, name) {
  const file = inputs.files[name.slice(name.indexOf("-") + 1)];
  if (!file) throw new Error(`inputs: no file for ${name}`);
  return file;
}

async function runWorkload(adapter, args, workload, sessionOf) {
  const { inputs } = args;
  const name = workload.name;
  const ok = (samples, detail) => ({ status: "ok", workload: name, warmup: workload.warmup, iterations: samples.length, samples_ns: samples, detail });
  const awaited = adapter.async;
  if (name === "spawn") {
    const spawnCall = [];
    let count = 0;
    const samples = await measure(workload, awaited, {
      run: awaited
        ? async () => {
            const started = now();
            const server = await adapter.spawn(args);
            const spawned = now() - started;
            const answer = await adapter.echo(server, inputs.echo_payload);
            return { server, spawned, answer };
          }
        : () => {
            const started = now();
            const server = adapter.spawn(args);
            const spawned = now() - started;
            const answer = adapter.echo(server, inputs.echo_payload);
            return { server, spawned, answer };
          },
      after: async (_, { server, spawned, answer }) => {
        await adapter.close(server);
        if (answer !== inputs.echo_payload) throw new Error(`echo answered ${JSON.stringify(answer)}`);
        if (count++ >= workload.warmup) spawnCall.push(Number(spawned));
      },
    });
    return ok(samples, { spawn_call_ns: spawnCall });
  }
  if (name === "load-cold") {
    let roots = 0;
    const samples = await measure(workload, awaited, {
      before: async () => {
        const server = await adapter.spawn(args);
        await adapter.initialize(server);
        return server;
      },
      run: (server) => adapter.open(server, inputs.tsconfig),
      after: async (server, opened) => {
        roots = opened.roots;
        await adapter.close(server);
      },
    });
    return ok(samples, { root_files: roots });
  }
  const session = await sessionOf();
  const server = session.server;
  if (name === "load-warm") {
    const samples = await measure(workload, awaited, {
      run: () => adapter.open(server, inputs.tsconfig),
      after: async (_, opened) => {
        await adapter.release(server, session.snapshot);
        session.snapshot = opened.snapshot;
        session.roots = opened.roots;
      },
    });
    return ok(samples, { root_files: session.roots });
  }
  if (name === "echo") {
    let answer;
    const samples = await measure(workload, awaited, {
      run: () => adapter.echo(server, inputs.echo_payload),
      after: (_, value) => {
        answer = value;
      },
    });
    if (answer !== inputs.echo_payload) throw new Error(`echo answered ${JSON.stringify(answer)}`);
    return ok(samples, { bytes: Buffer.byteLength(answer) });
  }
  if (name.startsWith("transfer-")) {
    const file = fileOf(inputs, name);
    let bytes = 0;
    const samples = await measure(workload, awaited, {
      before: adapter.beforeFetch ? () => adapter.beforeFetch(server) : undefined,
      run: () => adapter.fetch(server, session.snapshot, file),
      after: (_, value) => {
        bytes = value;
      },
    });
    return ok(samples, { bytes });
  }
  if (name.startsWith("materialize-")) {
    const file = fileOf(inputs, name);
    let nodes = 0;
    let bytes = 0;
    // The walk is synchronous on every side (the async client's node view is the sync one's).
    const samples = await measure(workload, false, {
      before: () => adapter.walkable(server, session.snapshot, file),
      run: (prepared) => adapter.walk(prepared.file),
      after: (prepared, value) => {
        nodes = value;
        bytes = prepared.bytes;
      },
    });
    return ok(samples, { nodes, bytes });
  }
  if (name === "symbol-once") {
    let symbolName;
    const samples = await measure(workload, awaited, {
      run: () => adapter.symbol(server, session.snapshot, inputs.symbol_file, inputs.symbol_position),
      after: (_, value) => {
        symbolName = value;
      },
    });
    return ok(samples, { name: symbolName ?? null });
  }
  if (name === "symbol-each") {
    const positions = inputs.positions;
    let found = 0;
    const each = adapter.async
      ? async () => {
          let hits = 0;
          for (const position of positions) {
            if ((await adapter.symbol(server, session.snapshot, inputs.symbol_file, position)) !== undefined) hits++;
          }
          return hits;
        }
      : () => {
          let hits = 0;
          for (const position of positions) {
            if (adapter.symbol(server, session.snapshot, inputs.symbol_file, position) !== undefined) hits++;
          }
          return hits;
        };
    const samples = await measure(workload, awaited, {
      run: each,
      after: (_, value) => {
        found = value;
      },
    });
    return ok(samples, { calls: positions.length, found });
  }
  if (name === "symbol-batched") {
    const positions = inputs.positions;
    let found = 0;
    const samples = await measure(workload, awaited, {
      run: () => adapter.symbols(server, session.snapshot, inputs.symbol_file, positions),
      after: (_, list) => {
        if (list.length !== positions.length) throw new Error("getSymbolsAtPositions: one answer per position expected");
        found = list.filter((symbol) => symbol !== undefined && symbol !== null).length;
      },
    });
    return ok(samples, { positions: positions.length, found });
  }
  if (name === "identifiers") {
    if (!adapter.identifiers) return { status: "unsupported", workload: name, reason: "no reader of identifiers here" };
    const positions = await adapter.identifiers(server, session.snapshot, inputs.symbol_file);
    return ok([0], { file: inputs.symbol_file, positions });
  }
  return { status: "unsupported", workload: name, reason: "no such workload" };
}
