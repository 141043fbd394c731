/**
 * The demo A2A agent (`agentproto/a2a/server`'s `DemoAgent`, the same agent as the Rust
 * `agentproto serve`) on `node:http`: JSON-RPC at `/`, HTTP+JSON at `/a2a/rest`, the card
 * at `/.well-known/agent-card.json`.
 *
 *     node ts/dist/examples/a2a-server.js --addr 127.0.0.1:8080 --memory
 *
 * `--memory` keeps tasks in a bounded in-memory store. `--db FILE` (a durable SQLite
 * store) is not available yet. It prints `listening on http://HOST:PORT` once it serves,
 * and stops on SIGINT or SIGTERM.
 */

import { A2aCore, A2aHttpServer, DemoAgent, demoCard, MemoryStore } from "../a2a/server/index.js";

const USAGE = "usage: a2a-server.js --addr HOST:PORT --memory";

/** Runs the server until a signal; returns the exit code. */
export async function main(args: readonly string[]): Promise<number> {
  let addr = "127.0.0.1:8080";
  let memory = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--addr" && args[i + 1] !== undefined) addr = args[++i] as string;
    else if (a === "--memory") memory = true;
    else if (a === "--db") {
      process.stderr.write("a2a-server: --db (the SQLite store) is not available in this version; use --memory\n");
      return 2;
    } else if (a === "--help" || a === "-h") {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    } else {
      process.stderr.write(`a2a-server: unknown argument ${JSON.stringify(a)}\n${USAGE}\n`);
      return 2;
    }
  }
  if (!memory) {
    process.stderr.write(`a2a-server: choose a store: --memory (--db FILE is not available yet)\n${USAGE}\n`);
    return 2;
  }
  const colon = addr.lastIndexOf(":");
  const host = addr.slice(0, colon).replace(/^\[|\]$/g, "");
  const port = Number(addr.slice(colon + 1));
  if (colon < 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`a2a-server: --addr wants HOST:PORT, got ${JSON.stringify(addr)}\n`);
    return 2;
  }
  const server = new A2aHttpServer((url) => new A2aCore(new DemoAgent(), { card: demoCard(url), store: new MemoryStore() }));
  try {
    await server.listen(port, host);
  } catch (e) {
    process.stderr.write(`a2a-server: cannot listen on ${addr}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  process.stdout.write(`listening on ${server.url}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.close();
  return 0;
}
