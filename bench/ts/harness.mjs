// What every JavaScript adapter shares: seed 000's command line, its messages
// (byte for byte the same as bench/rust/harness), the timed loops and the one-line
// JSON report. An adapter supplies `decode(kind, line)` and two encoders; the
// loops, the clock and the output are this file's, as in the Rust harness.
//
//   node <adapter>.mjs --mode cold-start|roundtrip|throughput|codec|tokens|messages|reject
//                      [--count N] [--tokens T] [--warmup W]
//
// Lines are JavaScript strings, as in the seed's TypeScript program: the step from
// bytes to text is left out on every JavaScript side alike.

export const MESSAGES = [
  '{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"benchmark","version":"1.0.0"}},"id":1}',
  '{"jsonrpc":"2.0","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]},"id":1}',
  '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-001","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello, this is a test message."}}}}',
  '{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"sess-001","prompt":[{"type":"text","text":"What is 2+2?"}]},"id":2}',
];

// A session/prompt whose text is a number: valid JSON-RPC, invalid ACP. `--mode
// reject` says whether the adapter refuses it (a validating one must).
export const INVALID_PROMPT = '{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"sess-001","prompt":[{"type":"text","text":5}]},"id":2}';

// What each message is; session/update is received by a client, the rest by an agent.
export const KINDS = ["initialize", "session/new", "session/update", "session/prompt"];

export function tokenMessage(tokens) {
  const text = "word ".repeat(tokens);
  return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-001","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"${text}"}}}}`;
}

function parseArgs(argv) {
  const args = { mode: "roundtrip", count: 100, tokens: 100, warmup: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--mode") args.mode = value;
    else if (["--count", "--tokens", "--warmup"].includes(flag)) {
      const n = Number.parseInt(value, 10);
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${flag} ${value}: not a count`);
      args[flag.slice(2)] = n;
    } else throw new Error(`unknown flag ${flag}`);
  }
  return args;
}

const now = () => process.hrtime.bigint();
const ms = (ns) => Math.round(Number(ns) / 1e6);
const rate = (items, ns) => (ns > 0n ? Math.round((items * 1e9) / Number(ns)) : 0);
// A sink the optimiser cannot see through.
let sink = 0;

/**
 * Runs the mode named on the command line with `adapter`:
 * { decode(kind, line) -> boolean, encodeSessionResult(id, sessionId) -> string,
 *   encodeInitializeResult(id) -> string }.
 */
export function main(adapter) {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`usage error: ${error.message}\n`);
    process.exit(2);
  }
  const { mode, count, tokens, warmup } = args;
  let failed = 0;
  let line;
  const status = () => (failed === 0 ? "ok" : "error");
  switch (mode) {
    case "messages":
      line = [...MESSAGES, tokenMessage(tokens)].join("\n");
      break;
    case "reject":
      line = JSON.stringify({ status: "ok", mode, refused: !adapter.decode("session/prompt", INVALID_PROMPT) });
      break;
    case "cold-start": {
      const start = now();
      if (!adapter.decode(KINDS[0], MESSAGES[0])) failed += 1;
      const out = adapter.encodeInitializeResult(1);
      const ns = now() - start;
      process.stdout.write(out + "\n");
      line = JSON.stringify({ status: status(), mode, elapsed_ms: ms(ns), elapsed_ns: Number(ns), failed });
      break;
    }
    case "roundtrip": {
      const start = now();
      if (!adapter.decode(KINDS[1], MESSAGES[1])) failed += 1;
      sink += adapter.encodeSessionResult(1, "sess-benchmark").length;
      const ns = now() - start;
      line = JSON.stringify({ status: status(), mode, elapsed_ms: ms(ns), elapsed_ns: Number(ns), failed });
      break;
    }
    case "throughput": {
      const pass = (n) => {
        let bad = 0;
        for (let i = 0; i < n; i++) {
          const k = i % 4;
          if (!adapter.decode(KINDS[k], MESSAGES[k])) bad += 1;
        }
        return bad;
      };
      pass(warmup);
      const start = now();
      failed += pass(count);
      const ns = now() - start;
      line = JSON.stringify({
        status: status(), mode, count, elapsed_ms: ms(ns), msgs_per_sec: rate(count, ns),
        elapsed_ns: Number(ns), warmup, failed,
      });
      break;
    }
    case "codec": {
      const pass = (n) => {
        let bad = 0;
        for (let i = 0; i < n; i++) {
          const k = i % 4;
          if (!adapter.decode(KINDS[k], MESSAGES[k])) bad += 1;
          sink += adapter.encodeSessionResult(i, "sess-bench").length;
        }
        return bad;
      };
      pass(warmup);
      const start = now();
      failed += pass(count);
      const ns = now() - start;
      const ops = 2 * count;
      line = JSON.stringify({
        status: status(), mode, ops, elapsed_ms: ms(ns), ops_per_sec: rate(ops, ns),
        elapsed_ns: Number(ns), warmup, failed,
      });
      break;
    }
    case "tokens": {
      const message = tokenMessage(tokens);
      const pass = (n) => {
        let bad = 0;
        let total = 0;
        for (let i = 0; i < n; i++) {
          if (!adapter.decode("session/update", message)) bad += 1;
          total += tokens;
        }
        sink += total;
        return bad;
      };
      pass(warmup);
      const start = now();
      failed += pass(count);
      const ns = now() - start;
      line = JSON.stringify({
        status: status(), mode, messages: count, tokens_per_msg: tokens, total_tokens: count * tokens,
        elapsed_ms: ms(ns), tokens_per_sec: rate(count * tokens, ns), msgs_per_sec: rate(count, ns),
        elapsed_ns: Number(ns), warmup, failed,
      });
      break;
    }
    default:
      process.stderr.write(`usage error: unknown mode ${JSON.stringify(mode)}\n`);
      process.exit(2);
  }
  process.stdout.write(line + "\n");
  if (sink < 0) process.stderr.write("unreachable\n");
  process.exitCode = failed === 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------
// End to end: the client's command line and output line (bench/rust/harness has
// the same).

export function parseE2eArgs(argv) {
  const args = { count: 10000, tokens: 100, agent: [] };
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === "--") {
      args.agent = argv.slice(i + 1);
      break;
    }
    const n = Number.parseInt(argv[i + 1], 10);
    if (argv[i] === "--count") args.count = n;
    else if (argv[i] === "--tokens") args.tokens = n;
    else throw new Error(`unknown flag ${argv[i]}`);
  }
  if (args.agent.length === 0) throw new Error("no agent command after --");
  return args;
}

// The prompt text that tells the benchmark agent what to stream.
export const e2ePrompt = (args) => `${args.count} ${args.tokens}`;

export function parseE2ePrompt(text) {
  const [count, tokens] = text.trim().split(/\s+/).map((w) => Number.parseInt(w, 10));
  return Number.isSafeInteger(count) && Number.isSafeInteger(tokens) ? { count, tokens } : null;
}

/** Whether an SDK that can switch off the check of what it sends keeps it on: the runner sets
 * AGENTPROTO_BENCH_OUTGOING=unchecked for both processes of the pair that measures it. */
export function outgoingChecked() {
  return process.env.AGENTPROTO_BENCH_OUTGOING !== "unchecked";
}

/** An e2e line with the `outgoing` field (checked or unchecked) the runner verifies. */
export function withOutgoing(line, checked) {
  return JSON.stringify({ ...JSON.parse(line), outgoing: checked ? "checked" : "unchecked" });
}

export function e2eLine(args, received, ns) {
  const { count: n, tokens: t } = args;
  return JSON.stringify({
    status: received === n ? "ok" : "error", mode: "e2e", messages: n, tokens_per_msg: t,
    total_tokens: n * t, elapsed_ms: ms(ns), msgs_per_sec: rate(n, ns), tokens_per_sec: rate(n * t, ns),
    elapsed_ns: Number(ns), received,
  });
}

export { now };
