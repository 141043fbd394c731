/**
 * An ACP client that spawns any agent command, runs one prompt and prints the updates
 * as they stream in.
 *
 *     node ts/dist/examples/run-prompt.js [--allow | --reject] [--prompt TEXT] -- <agent command> [args…]
 *
 * Message chunks go to stdout, everything else (tool calls, permissions, the stop
 * reason) to stderr. Permission requests are answered from the flag: `--allow` picks
 * the first "allow" option, `--reject` (the default) the first "reject" one. Ctrl-C
 * sends `session/cancel`. Files are served from the current directory only. The agent,
 * and whatever it started in its process group, is gone when this program exits
 * (exit status 1 when the prompt failed). `--agent PROGRAM` is a shorthand for
 * `-- PROGRAM` (a program taking no arguments).
 *
 * `--url http://HOST:PORT/acp` connects to an agent served over the network instead of
 * starting one: over Streamable HTTP, or over WebSocket with `--ws`.
 */

import { FsRoots } from "../acp/fs.js";
import * as v1 from "../acp/v1.js";
import { UnknownVariant } from "../codec/values.js";
import { VERSION } from "../version.js";

class Printer implements v1.Client {
  constructor(
    private readonly allow: boolean,
    private readonly files: FsRoots,
  ) {}

  requestPermission(_cx: v1.ClientContext, params: v1.RequestPermissionRequest): v1.RequestPermissionResponse {
    const wanted = this.allow ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
    const choice = params.options.find((o) => wanted.includes(o.kind));
    process.stderr.write(`[permission] ${params.toolCall.toolCallId} -> ${choice === undefined ? "cancelled" : choice.name}\n`);
    if (choice === undefined) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: choice.optionId } };
  }

  sessionUpdate(_cx: v1.ClientContext, params: v1.SessionNotification): void {
    const update = params.update;
    if (update instanceof UnknownVariant) {
      process.stderr.write(`[unknown update] ${update.raw.text}\n`);
    } else if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      process.stdout.write(update.content.text);
    } else if (update.sessionUpdate === "tool_call") {
      process.stderr.write(`[tool] ${update.toolCallId} ${update.title}\n`);
    } else {
      process.stderr.write(`[update] ${v1.SURFACE.encode("SessionUpdate", update)}\n`);
    }
  }

  readTextFile(_cx: v1.ClientContext, params: v1.ReadTextFileRequest): Promise<v1.ReadTextFileResponse> {
    return this.files.readTextFile(params);
  }

  writeTextFile(_cx: v1.ClientContext, params: v1.WriteTextFileRequest): Promise<v1.WriteTextFileResponse> {
    return this.files.writeTextFile(params);
  }
}

/** Initializes, opens a session and runs one prompt; Ctrl-C cancels it. Resolves with the stop reason. */
async function run(agent: v1.AgentConnection, cwd: string, text: string): Promise<string> {
  await agent.initialize({
    protocolVersion: v1.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    clientInfo: { name: "run-prompt", version: VERSION },
  });
  const { sessionId } = await agent.newSession({ cwd, mcpServers: [] });
  // The turn goes on until the agent answers it (`cancelled`).
  const interrupted = (): void => {
    agent.cancel({ sessionId }).catch(() => {});
  };
  process.on("SIGINT", interrupted);
  try {
    const response = await agent.prompt({ sessionId, prompt: [{ type: "text", text }] });
    return response.stopReason;
  } finally {
    process.off("SIGINT", interrupted);
  }
}

interface Args {
  allow: boolean;
  prompt: string;
  command: string[];
  url: string | null;
  websocket: boolean;
}

const USAGE = `usage: run-prompt [--allow|--reject] [--prompt TEXT] (-- <agent command>… | --url URL [--ws])

Starts the agent command (or connects to the agent served at URL), runs one
prompt and prints the reply as it streams in: message text on stdout, tool
calls, permissions and the stop reason on stderr. Ctrl-C cancels the turn.
Files are served from the current directory only.

  --allow          answer permission requests with the first "allow" option
  --reject         ... with the first "reject" option (the default)
  --prompt TEXT    the prompt (default "hello from run-prompt")
  --agent PROGRAM  shorthand for \`-- PROGRAM\` (a program without arguments)
  --url URL        connect to the agent at URL (http://HOST:PORT/acp)
  --ws             with --url: over WebSocket, not Streamable HTTP
  -h, --help       this text
`;

function parse(argv: readonly string[]): Args | "help" | string {
  const args: Args = { allow: false, prompt: "hello from run-prompt", command: [], url: null, websocket: false };
  let chose: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      args.command = argv.slice(i + 1);
      break;
    }
    if (arg === "--help" || arg === "-h") return "help";
    if (arg === "--allow" || arg === "--reject") {
      if (chose !== null && chose !== arg) return "--allow and --reject exclude each other";
      chose = arg;
      args.allow = arg === "--allow";
    } else if (arg === "--ws") {
      args.websocket = true;
    } else if (arg === "--prompt" || arg === "--agent" || arg === "--url") {
      const value = argv[++i];
      if (value === undefined) return `${arg} needs a value`;
      if (arg === "--prompt") args.prompt = value;
      else if (arg === "--url") args.url = value;
      else args.command = [value];
    } else if (arg.startsWith("--prompt=")) {
      args.prompt = arg.slice("--prompt=".length);
    } else if (arg.startsWith("--url=")) {
      args.url = arg.slice("--url=".length);
    } else if (arg.startsWith("--agent=")) {
      args.command = [arg.slice("--agent=".length)];
    } else return `unknown argument ${arg}`;
  }
  if (args.url !== null && args.command.length > 0) return "give either --url or an agent command after --, not both";
  if (args.websocket && args.url === null) return "--ws needs --url";
  if (args.url === null && args.command.length === 0) return "no agent command after -- (or --url)";
  return args;
}

/** The command line; resolves with the exit status. */
export async function main(argv: readonly string[]): Promise<number> {
  const args = parse(argv);
  if (args === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (typeof args === "string") {
    process.stderr.write(`run-prompt: ${args}\n${USAGE}`);
    return 2;
  }
  const cwd = process.cwd();
  if (args.url !== null) return runRemote(args, args.url, cwd);
  let spawned: { agent: v1.AgentConnection; process: import("../acp/process.js").AgentProcess };
  try {
    spawned = await v1.spawnAgent(args.command, new Printer(args.allow, await FsRoots.of([cwd])));
  } catch (err) {
    process.stderr.write(`run-prompt: cannot start the agent: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  // On every way out the agent goes, with whatever it started.
  try {
    const stop = await run(spawned.agent, cwd, args.prompt);
    process.stdout.write("\n");
    process.stderr.write(`[stop] ${stop}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`\nrun-prompt: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await spawned.process.close();
  }
}

/** `--url`: the prompt against an agent served over the network. */
async function runRemote(args: Args, url: string, cwd: string): Promise<number> {
  const { connect } = await import("../acp/remote/index.js");
  let remote: Awaited<ReturnType<typeof connect>>;
  try {
    remote = await connect(url, new Printer(args.allow, await FsRoots.of([cwd])), { websocket: args.websocket });
  } catch (err) {
    process.stderr.write(`run-prompt: cannot connect to ${url}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  try {
    const stop = await run(remote.agent, cwd, args.prompt);
    process.stdout.write("\n");
    process.stderr.write(`[stop] ${stop}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`\nrun-prompt: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await remote.close();
  }
}
