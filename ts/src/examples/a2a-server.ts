/**
 * The demo A2A agent (`agentproto/a2a/server`'s `DemoAgent`, the same agent as the Rust
 * `agentproto serve`) on `node:http`: JSON-RPC at `/`, HTTP+JSON at `/a2a/rest`, the card
 * at `/.well-known/agent-card.json`.
 *
 *     node ts/dist/examples/a2a-server.js --addr 127.0.0.1:8080 [--db FILE | --memory]
 *
 * Tasks live in the durable SQLite store in `FILE` (default `agentproto.db`, created if
 * missing; `node:sqlite` on Node 22.5+, else the `better-sqlite3` package), or with
 * `--memory` in a bounded in-memory store. Push notifications go through the SSRF guard;
 * `--push-allow-private` lets them reach loopback and private addresses. `--header-timeout SECONDS`
 * closes a connection whose request head has not arrived in that time (default 15).
 * `--stream-budget-mib MIB` bounds the stream frames held for subscribers, all together
 * (default 64, as `agentproto serve`): past it the stream holding the most is cut off. It prints
 * `listening on http://HOST:PORT` once it serves, and stops on SIGINT or SIGTERM.
 */

import { A2aCore, A2aHttpServer, DemoAgent, demoCard, MemoryStore, SqliteStore, type TaskStore } from "../a2a/server/index.js";

const USAGE = "usage: a2a-server.js --addr HOST:PORT [--db FILE | --memory] [--push-allow-private] [--header-timeout SECONDS] [--stream-budget-mib MIB] [--max-connections N]";

/** Runs the server until a signal; returns the exit code. */
export async function main(args: readonly string[]): Promise<number> {
  let addr = "127.0.0.1:8080";
  let memory = false;
  let db: string | null = null;
  let pushAllowPrivate = false;
  let headerTimeout: number | undefined;
  let streamBudgetMib: number | undefined;
  let maxConnections: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--addr" && args[i + 1] !== undefined) addr = args[++i] as string;
    else if (a === "--memory") memory = true;
    else if (a === "--db" && args[i + 1] !== undefined) db = args[++i] as string;
    else if (a === "--push-allow-private") pushAllowPrivate = true;
    else if (a === "--header-timeout" && args[i + 1] !== undefined) {
      headerTimeout = Number(args[++i]);
      if (!(headerTimeout > 0)) {
        process.stderr.write(`a2a-server: --header-timeout wants a positive number of seconds\n${USAGE}\n`);
        return 2;
      }
    }
    else if (a === "--stream-budget-mib" && args[i + 1] !== undefined) {
      streamBudgetMib = Number(args[++i]);
      if (!Number.isInteger(streamBudgetMib) || streamBudgetMib <= 0) {
        process.stderr.write(`a2a-server: --stream-budget-mib wants a positive whole number of MiB\n${USAGE}\n`);
        return 2;
      }
    }
    else if (a === "--max-connections" && args[i + 1] !== undefined) {
      maxConnections = Number(args[++i]);
      if (!Number.isInteger(maxConnections) || maxConnections <= 0) {
        process.stderr.write(`a2a-server: --max-connections wants a positive whole number\n${USAGE}\n`);
        return 2;
      }
    }
    else if (a === "--help" || a === "-h") {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    } else {
      process.stderr.write(`a2a-server: unknown argument ${JSON.stringify(a)}\n${USAGE}\n`);
      return 2;
    }
  }
  if (memory && db !== null) {
    process.stderr.write(`a2a-server: --db and --memory exclude each other\n${USAGE}\n`);
    return 2;
  }
  const colon = addr.lastIndexOf(":");
  const host = addr.slice(0, colon).replace(/^\[|\]$/g, "");
  const port = Number(addr.slice(colon + 1));
  if (colon < 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`a2a-server: --addr wants HOST:PORT, got ${JSON.stringify(addr)}\n`);
    return 2;
  }
  let store: TaskStore;
  try {
    store = memory ? new MemoryStore() : await SqliteStore.open(db ?? "agentproto.db");
  } catch (e) {
    process.stderr.write(`a2a-server: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  // The SSRF guard refuses push targets that are not public unless told otherwise.
  const push = pushAllowPrivate ? { allowLoopback: true, allow: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"] } : {};
  const limits = {
    ...(headerTimeout === undefined ? {} : { headerTimeoutMs: headerTimeout * 1000 }),
    ...(streamBudgetMib === undefined ? {} : { streamBudgetBytes: streamBudgetMib * 2 ** 20 }),
    ...(maxConnections === undefined ? {} : { maxConnections }),
  };
  const server = new A2aHttpServer((url) => new A2aCore(new DemoAgent(), { card: demoCard(url), store, push }), limits);
  try {
    await server.listen(port, host);
  } catch (e) {
    process.stderr.write(`a2a-server: cannot listen on ${addr}: ${e instanceof Error ? e.message : String(e)}\n`);
    await store.close();
    return 1;
  }
  process.stdout.write(`listening on ${server.url}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.close();
  await store.close();
  return 0;
}
