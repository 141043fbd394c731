/**
 * The demo agent behind `node ts/dist/examples/a2a-server.js`, the same as the Rust
 * `agentproto serve`: it echoes text, and follows the a2a-tck's `messageId`-prefix
 * contract (`tck-<scenario>-<suffix>`; the longest known prefix picks the behaviour).
 * What it does is data: `rules/a2a-demo.toml` (the card, and an ordered list of steps per
 * prefix, documented there), generated into `generated/a2a/demo.ts`; this module only
 * runs the steps over the `TaskUpdater` and builds the card for a server's URLs.
 * `agentproto-ticks` appends one chunk (`tick 1`, `tick 2`, …) to one artifact after each
 * delay, as many as the message's text says (10 unless it is a number; at most
 * `MAX_TICKS`); a cancel stops a wait between two steps or ticks.
 */

import type { AgentCard, Part } from "../../generated/a2a/v1.js";
import { CARD, FALLBACK, MAX_TICKS, SCENARIOS, type DemoPart, type Step } from "../../generated/a2a/demo.js";
import { RawJson } from "../../codec/values.js";
import { VERSION } from "../../version.js";
import type { AgentExecutor, RequestContext, TaskUpdater } from "./executor.js";

export { MAX_TICKS };

/** The prefix whose steps a message id selects (`undefined`: the fallback, an echo). */
export function scenario(messageId: string): string | undefined {
  return SCENARIOS.find(([p]) => messageId.startsWith(p))?.[0];
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

/** Options of the demo agent. */
export interface DemoOptions {
  /** The wait of the delayed scenarios (default 2 s, the TCK's streaming timeout). */
  readonly delayMs?: number;
  /** How long a plain echo stays WORKING before it completes (default 0). */
  readonly echoDelayMs?: number;
}

function part(spec: DemoPart): Part {
  const names = { ...(spec.mediaType === undefined ? {} : { mediaType: spec.mediaType }), ...(spec.filename === undefined ? {} : { filename: spec.filename }) };
  switch (spec.kind) {
    case "text":
      return { text: spec.value, ...names };
    case "raw":
      return { raw: new TextEncoder().encode(spec.value), ...names } as Part;
    case "url":
      return { url: spec.value, ...names } as Part;
    case "data":
      return { data: new RawJson(spec.value), ...names } as Part;
  }
}

/** The demo agent. */
export class DemoAgent implements AgentExecutor {
  constructor(private readonly options: DemoOptions = {}) {}

  async execute(cx: RequestContext, task: TaskUpdater): Promise<void> {
    const steps = SCENARIOS.find(([p]) => cx.message.messageId.startsWith(p))?.[1] ?? FALLBACK;
    for (const step of steps) if (!(await this.run(step, cx, task))) return;
  }

  /** Runs one step; `false` when a cancel ended the turn. */
  private async run(step: Step, cx: RequestContext, task: TaskUpdater): Promise<boolean> {
    const delay = this.options.delayMs ?? 2000;
    const message = step.text === undefined ? undefined : task.textMessage(step.text);
    switch (step.op) {
      case "working":
        await task.working();
        return true;
      case "wait":
        return sleep(delay * (step.delays ?? 0), cx.signal);
      case "artifact":
        await task.addArtifact({ artifactId: crypto.randomUUID(), parts: (step.parts ?? []).map(part) });
        return true;
      case "chunks": {
        const artifactId = crypto.randomUUID();
        const pieces = step.parts ?? [];
        const whole = pieces.length <= 1;
        for (const [i, piece] of pieces.entries())
          await task.addArtifact({ artifactId, parts: [part(piece)] }, { append: !whole && i > 0, lastChunk: i === pieces.length - 1 });
        return true;
      }
      case "complete":
        await task.complete(message);
        return true;
      case "reject":
        await task.reject(message);
        return true;
      case "input_required":
        await task.requireInput(message);
        return true;
      case "reply":
        await task.reply(message ?? task.textMessage(""));
        return true;
      case "ticks":
        await ticks(cx, task, delay);
        return true;
      case "echo": {
        // The echo agent: a follow-up to an input-required task completes it.
        const said = cx.text();
        await task.working();
        const echoDelay = this.options.echoDelayMs ?? 0;
        if (echoDelay > 0 && !(await sleep(echoDelay, cx.signal))) return false;
        await task.addArtifact({ artifactId: crypto.randomUUID(), parts: [{ text: said }] });
        await task.complete(task.textMessage(`echo: ${said}`));
        return true;
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
 * `/` and HTTP+JSON at `restPrefix` (default `/a2a/rest`), both A2A 1.0; the rest comes
 * from the table. */
export function demoCard(base: string, restPrefix = "/a2a/rest"): AgentCard {
  const root = base.replace(/\/+$/, "");
  const { skill } = CARD;
  return {
    name: CARD.name,
    description: CARD.description,
    supportedInterfaces: [
      { url: `${root}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${root}${restPrefix.replace(/\/+$/, "")}`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ],
    version: VERSION,
    capabilities: { streaming: CARD.streaming, pushNotifications: CARD.pushNotifications },
    defaultInputModes: [...CARD.inputModes],
    defaultOutputModes: [...CARD.outputModes],
    skills: [{ id: skill.id, name: skill.name, description: skill.description, tags: [...skill.tags], examples: [...skill.examples] }],
  };
}
