/**
 * The demo agent behind `node ts/dist/examples/a2a-server.js`, the same as the Rust
 * `agentproto serve`: it echoes text, and follows the a2a-tck's `messageId`-prefix
 * contract (`tck-<scenario>-<suffix>`; the longest known prefix picks the behaviour).
 * `agentproto-ticks` moves to WORKING, then appends one chunk (`tick 1`, `tick 2`, …) to
 * one artifact after each delay, as many as the message's text says (10 unless it is a
 * number; at most `MAX_TICKS`), then completes; a cancel stops it between two ticks.
 * Anything else is echoed back in a completed task.
 */

import type { AgentCard, Artifact, Part } from "../../generated/a2a/v1.js";
import { RawJson } from "../../codec/values.js";
import { VERSION } from "../../version.js";
import type { AgentExecutor, RequestContext, TaskUpdater } from "./executor.js";

/** The most ticks an `agentproto-ticks` turn writes. */
export const MAX_TICKS = 10_000;

/** Known prefixes, longest first so that a prefix never shadows a longer one. */
const PREFIXES = [
  "agentproto-ticks",
  "tck-stream-artifact-chunked",
  "tck-stream-artifact-text",
  "tck-stream-artifact-file",
  "tck-stream-ordering-001",
  "tck-artifact-file-url",
  "tck-delayed-complete",
  "tck-message-response",
  "tck-input-required",
  "tck-complete-task",
  "tck-artifact-text",
  "tck-artifact-file",
  "tck-artifact-data",
  "tck-reject-task",
  "tck-stream-001",
  "tck-stream-002",
  "tck-stream-003",
  "test-resubscribe-message-id",
] as const;

/** The behaviour a message id selects. */
export function scenario(messageId: string): (typeof PREFIXES)[number] | undefined {
  return PREFIXES.find((p) => messageId.startsWith(p));
}

/** Resolves after `ms`, or with `false` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve(true);
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

function artifact(parts: Part[]): Artifact {
  return { artifactId: crypto.randomUUID(), parts };
}

function filePart(content: { raw: Uint8Array } | { url: string }): Part {
  return { ...content, mediaType: "text/plain", filename: "output.txt" } as Part;
}

/** Options of the demo agent. */
export interface DemoOptions {
  /** The wait of the delayed scenarios (default 2 s, the TCK's streaming timeout). */
  readonly delayMs?: number;
  /** How long a plain echo stays WORKING before it completes (default 0). */
  readonly echoDelayMs?: number;
}

/** The demo agent. */
export class DemoAgent implements AgentExecutor {
  constructor(private readonly options: DemoOptions = {}) {}

  async execute(cx: RequestContext, task: TaskUpdater): Promise<void> {
    const delay = this.options.delayMs ?? 2000;
    const text = (s: string) => task.textMessage(s);
    const id = cx.message.messageId;
    switch (scenario(id)) {
      case "tck-complete-task":
        return task.complete(text("Hello from TCK"));
      case "tck-delayed-complete":
        await task.working();
        if (await sleep(delay, cx.signal)) await task.complete(text("Done after delay"));
        return;
      case "tck-artifact-text":
        await task.addArtifact(artifact([{ text: "Generated text content" }]));
        return task.complete();
      case "tck-artifact-file":
      case "tck-stream-artifact-file":
        await task.addArtifact(artifact([filePart({ raw: new TextEncoder().encode("tck") })]));
        return task.complete();
      case "tck-artifact-file-url":
        await task.addArtifact(artifact([filePart({ url: "https://example.com/output.txt" })]));
        return task.complete();
      case "tck-artifact-data":
        await task.addArtifact(artifact([{ data: new RawJson('{"key":"value","count":42}') }]));
        return task.complete();
      case "tck-message-response":
        return task.reply(text("Direct message response"));
      case "tck-input-required":
        return task.requireInput(text("Please provide more input"));
      case "tck-reject-task":
        return task.reject(text("rejected"));
      case "tck-stream-001":
      case "tck-stream-003":
        await task.working();
        await task.addArtifact(artifact([{ text: id.startsWith("tck-stream-001") ? "Stream hello from TCK" : "Stream task lifecycle" }]));
        return task.complete();
      case "tck-stream-artifact-text":
        await task.working();
        await task.addArtifact(artifact([{ text: "Generated text content" }]));
        return task.complete();
      case "tck-stream-artifact-chunked": {
        const a = artifact([{ text: "chunk-1 " }]);
        await task.working();
        await task.addArtifact(a, { lastChunk: false });
        await task.addArtifact({ artifactId: a.artifactId, parts: [{ text: "chunk-2" }] }, { append: true, lastChunk: true });
        return task.complete();
      }
      case "tck-stream-ordering-001":
        await task.working();
        await task.addArtifact(artifact([{ text: "Ordered output" }]));
        return task.complete();
      case "test-resubscribe-message-id":
        await task.working();
        if (await sleep(delay * 2, cx.signal)) await task.complete();
        return;
      case "agentproto-ticks":
        return ticks(cx, task, delay);
      case "tck-stream-002":
        return task.complete();
      case undefined: {
        // The echo agent: a follow-up to an input-required task completes it.
        const said = cx.text();
        await task.working();
        const echoDelay = this.options.echoDelayMs ?? 0;
        if (echoDelay > 0 && !(await sleep(echoDelay, cx.signal))) return;
        await task.addArtifact(artifact([{ text: said }]));
        return task.complete(text(`echo: ${said}`));
      }
    }
  }
}

async function ticks(cx: RequestContext, task: TaskUpdater, delay: number): Promise<void> {
  const said = cx.text().trim();
  const count = Math.min(/^\d+$/.test(said) ? Number(said) : 10, MAX_TICKS);
  await task.working();
  const id = crypto.randomUUID();
  for (let tick = 1; tick <= count; tick++) {
    if (!(await sleep(delay, cx.signal))) return;
    const whole = count <= 1;
    await task.addArtifact({ artifactId: id, parts: [{ text: `tick ${tick}` }] }, { append: !whole && tick > 1, lastChunk: whole || tick === count });
  }
  return task.complete();
}

/** The demo agent's card for a server at `base` (`http://127.0.0.1:8080`): JSON-RPC at
 * `/` and HTTP+JSON at `restPrefix` (default `/a2a/rest`), both A2A 1.0. */
export function demoCard(base: string, restPrefix = "/a2a/rest"): AgentCard {
  const root = base.replace(/\/+$/, "");
  return {
    name: "agentproto demo agent",
    description: "A durable echo agent on agentproto (SQLite store, resumable streams, push outbox).",
    supportedInterfaces: [
      { url: `${root}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${root}${restPrefix.replace(/\/+$/, "")}`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ],
    version: VERSION,
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes text back; follows the a2a-tck messageId-prefix contract.", tags: ["echo", "test"], examples: ["hello"] }],
  };
}
