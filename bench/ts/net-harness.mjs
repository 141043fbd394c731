// What the network end-to-end adapters share (bench/net_bench.py drives them): the
// command line of both roles and the agent's one announcement line, as in
// bench/python/net_harness.py.
//
//   node net-<sdk>.mjs agent --listen HOST:PORT      prints {"listening": URL}, serves until SIGTERM
//   node net-<sdk>.mjs client --url URL [--ws] [--count N] [--tokens T]   prints an e2e line

export function parseNetArgs(argv) {
  const role = argv[0];
  if (role !== "agent" && role !== "client") throw new Error("first argument: agent or client");
  const args = { role, host: "127.0.0.1", port: 0, url: "", websocket: false, count: 10000, tokens: 100 };
  for (let i = 1; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--ws") {
      args.websocket = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--listen") {
      const at = value.lastIndexOf(":");
      args.host = value.slice(0, at);
      args.port = Number.parseInt(value.slice(at + 1), 10);
    } else if (flag === "--url") args.url = value;
    else if (flag === "--count" || flag === "--tokens") args[flag.slice(2)] = Number.parseInt(value, 10);
    else throw new Error(`unknown flag ${flag}`);
  }
  if (role === "client" && args.url === "") throw new Error("client needs --url");
  return args;
}

export function announce(url) {
  process.stdout.write(JSON.stringify({ listening: url }) + "\n");
}

/** Ends the process on SIGTERM/SIGINT after `close()` (bounded: 5 s). */
export function closeOnSignal(close) {
  const stop = () => {
    setTimeout(() => process.exit(0), 5_000).unref();
    close().finally(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

// Every wait is bounded: a stuck peer fails the run instead of hanging it.
export function within(ms, promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
