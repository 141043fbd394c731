// agentproto's TypeScript A2A server (this repository's ts/, built into ts/dist: the
// `ts-agentproto` build of bench/adapters.json) for the A2A benchmark (bench/a2a/). It
// imports the built `agentproto/a2a/server` module by path, as an application loads it.
//
// JSON-RPC at `/` on 127.0.0.1 (an ephemeral port unless --port is given): A2aHttpServer
// (node:http, its default limits), the in-memory store (MemoryStore defaults: 10,000
// tasks, 1,000 events per task). The executors are the seed's:
//
// - a message whose id starts with `noop`: Working -> Completed;
// - any other: Working -> artifact "echo" with the text "Echo: benchmark" -> Completed.
//
// Prints `LISTENING <port>` once it accepts connections; stops on SIGTERM or SIGINT.

// AGENTPROTO_TS_DIST names another build of ts/ (a directory like ts/dist) to load instead.
const dist = process.env.AGENTPROTO_TS_DIST ? new URL(`file://${process.env.AGENTPROTO_TS_DIST.replace(/\/?$/, "/")}`) : new URL("../../ts/dist/", import.meta.url);
const { A2aCore, A2aHttpServer, MemoryStore } = await import(new URL("src/a2a/server/index.js", dist).href);

const args = process.argv.slice(2);
const at = args.indexOf("--port");
const port = at >= 0 ? Number(args[at + 1]) : 0;

const executor = {
  async execute(cx, task) {
    await task.working();
    if (!cx.message.messageId.startsWith("noop")) await task.addArtifact({ artifactId: "echo", parts: [{ text: "Echo: benchmark" }] });
    await task.complete();
  },
};

function card(url) {
  return {
    name: "Bench Agent",
    description: "Benchmark agent",
    supportedInterfaces: [{ url: `${url}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    version: "1.0.0",
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes input", tags: ["echo", "benchmark"] }],
  };
}

const server = new A2aHttpServer((url) => new A2aCore(executor, { card: card(url), store: new MemoryStore() }));
const address = await server.listen(port, "127.0.0.1");
process.stdout.write(`LISTENING ${address.port}\n`);
const stop = () => void server.close();
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
