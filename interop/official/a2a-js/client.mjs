// An A2A 1.0 scenario runner on the official JavaScript SDK's client (@a2a-js/sdk 1.3.0),
// the peer of our TypeScript server in ts/test/a2a/interop.test.ts.
//
// Usage: node client.mjs --card-url http://127.0.0.1:P --binding JSONRPC|HTTP+JSON [--timeout S]
//
// Resolves the card, picks the interface of `--binding`, then runs the steps: two sends
// (each echoed back in a completed task), get of the second, a stream (its task first and
// a completed status last), cancel of a task waiting for input (the a2a-tck
// `tck-input-required` message-id prefix). Prints one JSON object per line:
// {"step": name, "ok": bool, "detail": ...}; exit status 0 when every step passed.
// Every call is bounded by the timeout (default 10 s).

import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const cardUrl = arg("--card-url", "");
const binding = arg("--binding", "JSONRPC");
const timeoutMs = Number(arg("--timeout", "10")) * 1000;
const RUN = crypto.randomUUID().slice(0, 8);
let failures = 0;

function report(step, ok, detail) {
  if (!ok) failures++;
  process.stdout.write(`${JSON.stringify({ step, ok, detail })}\n`);
}

function message(text, messageId, taskId = "") {
  return { messageId, contextId: "", taskId, role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function send(text, messageId) {
  return { tenant: "", message: message(text, messageId), configuration: undefined, metadata: undefined };
}

const options = () => ({ signal: AbortSignal.timeout(timeoutMs) });
const isTask = (r) => r !== undefined && typeof r === "object" && "status" in r && "id" in r;
const firstText = (task) => task.artifacts?.[0]?.parts?.[0]?.content?.value;

async function step(name, body) {
  try {
    const detail = await body();
    report(name, true, detail ?? null);
  } catch (e) {
    report(name, false, e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  }
}

function check(condition, what) {
  if (!condition) throw new Error(what);
}

const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }));
let client;
try {
  client = await factory.createFromUrl(cardUrl);
} catch (e) {
  report("card", false, e instanceof Error ? e.message : String(e));
  process.exit(1);
}
report("card", client.transport.protocolName === binding, { transport: client.transport.protocolName });

let second;
await step("send", async () => {
  const first = await client.sendMessage(send("hello", `m-1-${RUN}`), options());
  second = await client.sendMessage(send("again", `m-2-${RUN}`), options());
  check(isTask(first) && isTask(second), `expected tasks, got ${JSON.stringify([first, second])}`);
  check(first.status.state === TaskState.TASK_STATE_COMPLETED, `first task is ${first.status.state}`);
  check(firstText(first) === "hello", `first artifact is ${JSON.stringify(firstText(first))}`);
  return { tasks: [first.id, second.id] };
});

await step("get", async () => {
  check(second !== undefined, "no task from the sends");
  const got = await client.getTask({ tenant: "", id: second.id, historyLength: undefined }, options());
  check(got.id === second.id && got.status.state === TaskState.TASK_STATE_COMPLETED, `got ${JSON.stringify(got.status)}`);
  check(firstText(got) === "again", `artifact is ${JSON.stringify(firstText(got))}`);
});

await step("stream", async () => {
  const kinds = [];
  let last;
  for await (const event of client.sendMessageStream(send("streamed", `m-3-${RUN}`), options())) {
    kinds.push(event.payload?.$case);
    last = event.payload;
  }
  check(kinds[0] === "task", `the stream starts with ${kinds[0]}`);
  check(last?.$case === "statusUpdate" && last.value.status.state === TaskState.TASK_STATE_COMPLETED, `the stream ends with ${JSON.stringify(last)}`);
  return { kinds };
});

await step("cancel", async () => {
  const waiting = await client.sendMessage(send("more please", `tck-input-required-${RUN}`), options());
  check(isTask(waiting) && waiting.status.state === TaskState.TASK_STATE_INPUT_REQUIRED, `the task waits? ${JSON.stringify(waiting.status)}`);
  const canceled = await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined }, options());
  check(canceled.status.state === TaskState.TASK_STATE_CANCELED, `canceled task is ${canceled.status.state}`);
});

process.exit(failures === 0 ? 0 : 1);
