/** The generated rule code of each surface (`<handler>Rules`, `CHECKS`), through the
 * public modules: its refusals, rendered by `refusal.ts`, against a reference reading of
 * the rule rows over the same messages as plain JSON (how the runtime used to judge
 * them), byte for byte; and the single decode of a received request. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { CapabilityNotAdvertised, NotAnnounced } from "../../src/acp/errors.js";
import { refusalError, refusalFailure, type MethodChecks, type Refusal } from "../../src/acp/refusal.js";
import type { MethodInfo } from "../../src/acp/rules.js";
import type { SurfaceView } from "../../src/acp/surface.js";
import * as v1 from "../../src/acp/v1.js";
import * as v1u from "../../src/acp/v1-unstable.js";
import * as v2 from "../../src/acp/v2.js";
import * as v2u from "../../src/acp/v2-unstable.js";
import { encodeString, RawJson } from "../../src/codec/values.js";
import { ErrorCode, invalidParamsError, type ErrorObject } from "../../src/jsonrpc/error.js";
import { duplex } from "../../src/jsonrpc/memory.js";
import { Remote, within } from "../jsonrpc/harness.js";

type Json = unknown;
type Obj = Record<string, Json>;

// ---------------------------------------------------------------------------------------
// The reference: the rule rows read over parsed JSON, as the runtime did before the rules
// became generated code (the same semantics and the same wording).

const isObject = (x: Json): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);
const chooser = (s: string): string | null => (s.startsWith("{") && s.endsWith("}") ? s.slice(1, -1) : null);
const text = (params: Json, member: string): string | null => (isObject(params) && typeof params[member] === "string" ? (params[member] as string) : null);

function walk(init: Json, path: readonly string[]): Json {
  let node = init;
  for (const key of path) {
    if (!isObject(node) || !Object.prototype.hasOwnProperty.call(node, key)) return undefined;
    node = node[key];
  }
  return node;
}
const advertised = (init: Json, path: readonly string[]): boolean => {
  const node = walk(init, path);
  return node === true || isObject(node);
};

function referenceRefusal(row: MethodInfo, init: Json, params: Json): ErrorObject | null {
  const gate = row.gate;
  if (gate !== null) {
    const member = gate.path.map(chooser).find((m) => m !== null) ?? null;
    const value = member === null ? null : text(params, member);
    if (member === null || value !== null) {
      const path = gate.path.map((s) => (chooser(s) === null ? s : (value as string)));
      const node = walk(init, path);
      const open = gate.test === "non-empty" ? Array.isArray(node) && node.length > 0 : node === true || isObject(node);
      if (!open) {
        const capability = path.join(".");
        const wanted = gate.test === "advertised" ? `\`${capability}\`` : `a non-empty \`${capability}\``;
        if (member !== null && gate.refusal === ErrorCode.INVALID_PARAMS) {
          const error = invalidParamsError(`$.params.${member}`, `a ${member} this side advertised`, value as string);
          error.message = `invalid params: ${member} \`${value as string}\` needs ${wanted}, which this side did not advertise`;
          return error;
        }
        const data = `{"method":${encodeString(row.name)},"capability":${encodeString(capability)}}`;
        return { code: gate.refusal, message: `method not found: \`${row.name}\` needs ${wanted}, which this side did not advertise`, data: new RawJson(data) };
      }
    }
  }
  for (const g of row.values) {
    const items = isObject(params) ? params[g.member] : undefined;
    if (!Array.isArray(items)) continue;
    for (let index = 0; index < items.length; index++) {
      const raw = isObject(items[index]) ? (items[index] as Obj)[g.tag] : undefined;
      const tag = typeof raw === "string" ? raw : "";
      if (g.baseline.includes(tag)) continue;
      const path = Object.prototype.hasOwnProperty.call(g.gated, tag) ? g.gated[tag] : undefined;
      if (path !== undefined && advertised(init, path)) continue;
      const accepted = row.values.flatMap((v) => [...v.baseline, ...Object.entries(v.gated).filter(([, p]) => advertised(init, p)).map(([t]) => t)]);
      const shown = tag === "" ? "(untagged)" : tag;
      const at = `$.params.${g.member}[${index}]`;
      const error = invalidParamsError(at, `one of the advertised kinds (${accepted.join(", ")})`, shown);
      const reason = path !== undefined ? `\`${shown}\` needs \`${path.join(".")}\`, which this side did not advertise` : `\`${shown}\` is not a kind this side can have advertised`;
      error.message = `invalid params: ${at}: ${reason}`;
      return error;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// Fixtures: `initialize` messages advertising each capability the rows name, params with
// every kind of list item, each decoded by the surface (what the runtime holds).

interface Surface {
  readonly name: string;
  readonly SURFACE: SurfaceView & { readonly methods: readonly MethodInfo[] };
  readonly CHECKS: ReadonlyMap<string, MethodChecks>;
  readonly version: number;
}
const SURFACES: Surface[] = [
  { name: "v1", SURFACE: v1.SURFACE, CHECKS: v1.CHECKS, version: 1 },
  { name: "v1-unstable", SURFACE: v1u.SURFACE, CHECKS: v1u.CHECKS, version: 1 },
  { name: "v2", SURFACE: v2.SURFACE, CHECKS: v2.CHECKS, version: 2 },
  { name: "v2-unstable", SURFACE: v2u.SURFACE, CHECKS: v2u.CHECKS, version: 2 },
];

/** `value` decoded as `type`, when it decodes without a warning. */
function decodes(s: Surface, type: string, value: Json): unknown {
  try {
    const decoded = s.SURFACE.decodeNamed(type, new RawJson(JSON.stringify(value)), "$");
    return decoded.warnings.length === 0 ? decoded.value : undefined;
  } catch {
    return undefined;
  }
}

function set(target: Obj, path: readonly string[], value: Json): Obj {
  const copy = structuredClone(target);
  let node = copy;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as Obj;
  }
  node[path[path.length - 1] as string] = value;
  return copy;
}

const AUTH = [{ id: "a", name: "A" }, { methodId: "a", name: "A" }, { type: "agent", methodId: "a", name: "A" }, { type: "agent", id: "a", name: "A" }];
const ITEMS: Json[] = [
  { type: "text", text: "hi" },
  { type: "image", data: "AA==", mimeType: "image/png" },
  { type: "audio", data: "AA==", mimeType: "audio/wav" },
  { type: "resource_link", uri: "file:///a", name: "a" },
  { type: "resource", resource: { uri: "file:///a", text: "a" } },
  { type: "video", url: "u" },
  { name: "s", command: "/bin/s", args: [], env: [] },
  { type: "stdio", name: "s", command: "/bin/s", args: [], env: [] },
  { type: "http", name: "h", url: "http://h", headers: [] },
  { type: "sse", name: "e", url: "http://e", headers: [] },
  { type: "acp", name: "a", serverId: "x" },
  { type: "ws", name: "w" },
];
const MODES: Json[] = [
  { mode: "form", requestedSchema: { type: "object", properties: {} }, sessionId: "s" },
  { mode: "url", url: "http://u", elicitationId: "e", sessionId: "s" },
  { mode: "telepathy", sessionId: "s" },
];

/** The `initialize` messages of one side: nothing advertised, each capability alone (and
 * refused as `false` / `null`), and everything at once. */
function inits(s: Surface, type: string, paths: readonly (readonly string[])[]): { json: Obj; typed: unknown }[] {
  const base: Obj = s.version === 1 ? { protocolVersion: 1 } : { protocolVersion: 2, info: { name: "x", version: "1" } };
  const out: { json: Obj; typed: unknown }[] = [];
  let all = base;
  const add = (json: Obj): boolean => {
    const typed = decodes(s, type, json);
    if (typed !== undefined) out.push({ json, typed });
    return typed !== undefined;
  };
  add(base);
  for (const path of paths) {
    const value = [true, {}, ...AUTH.map((a) => [a])].find((v) => add(set(base, path, v)));
    assert.ok(value !== undefined, `${s.name}: ${path.join(".")} can be advertised`);
    all = set(all, path, value);
    add(set(base, path, false));
    add(set(base, path, null));
  }
  add(all);
  return out;
}

function capabilityPaths(s: Surface, where: string): string[][] {
  const paths: string[][] = [];
  for (const row of s.SURFACE.methods) {
    if (row.gate?.where === where) {
      const at = row.gate.path.findIndex((x) => chooser(x) !== null);
      if (at < 0) paths.push([...row.gate.path]);
      else for (const mode of ["form", "url"]) paths.push([...row.gate.path.slice(0, at), mode]);
    }
    for (const g of row.values) if (g.where === where) for (const p of Object.values(g.gated)) paths.push([...p]);
  }
  return paths;
}

function paramsFor(s: Surface, row: MethodInfo): { json: Obj; typed: unknown }[] {
  const base: Obj = { sessionId: "s", cwd: "/", message: "m", prompt: [], mcpServers: [] };
  const out: { json: Obj; typed: unknown }[] = [];
  const add = (json: Obj): void => {
    const typed = decodesLoosely(s, row.params, json);
    if (typed !== undefined) out.push({ json, typed });
  };
  if (row.gate !== null && row.gate.path.some((x) => chooser(x) !== null)) for (const mode of MODES) add({ ...base, ...(mode as Obj) });
  for (const g of row.values) {
    const kept = ITEMS.filter((item) => decodesLoosely(s, row.params, { ...base, [g.member]: [item] }) !== undefined);
    for (const item of kept) add({ ...base, [g.member]: [item] });
    add({ ...base, [g.member]: kept });
  }
  // A plain gate reads no params: any will do.
  if (row.values.length === 0 && out.length === 0) out.push({ json: base, typed: base });
  return out;
}

/** Decoded even with warnings (an unknown variant is kept, with one). */
function decodesLoosely(s: Surface, type: string, value: Json): unknown {
  try {
    return s.SURFACE.decodeNamed(type, new RawJson(JSON.stringify(value)), "$.params").value;
  } catch {
    return undefined;
  }
}

const rendered = (e: ErrorObject | null): Json => (e === null ? null : { code: e.code, message: e.message, data: e.data instanceof RawJson ? e.data.text : null });

test("the generated checks refuse exactly what the rule rows say, with the same answer, on every surface", () => {
  let compared = 0;
  let refused = 0;
  for (const s of SURFACES) {
    const [initMethod] = s.SURFACE.methods.filter((m) => m.name === "initialize");
    assert.ok(initMethod !== undefined && initMethod.result !== null);
    const clients = inits(s, initMethod.params, capabilityPaths(s, "initialize.params"));
    const agents = inits(s, initMethod.result, capabilityPaths(s, "initialize.result"));
    assert.ok(clients.length > 2 && agents.length > 2, `${s.name}: the fixtures decode`);
    for (const row of s.SURFACE.methods) {
      if (row.kind !== "request" || (row.gate === null && row.values.length === 0)) continue;
      const checks = s.CHECKS.get(row.name);
      assert.ok(checks?.refusal !== undefined, `${s.name} ${row.name}: generated`);
      const params = paramsFor(s, row);
      assert.ok(params.length > 0, `${s.name} ${row.name}: params decode`);
      const side = row.side === "agent" ? agents : clients;
      for (const init of side) {
        for (const p of params) {
          const handshake = row.side === "agent" ? { client: clients[0]?.typed, agent: init.typed } : { client: init.typed, agent: agents[0]?.typed };
          const refusal: Refusal | null = checks.refusal(p.typed, handshake);
          const expected = referenceRefusal(row, init.json, p.json);
          const label = `${s.name} ${row.name} init=${JSON.stringify(init.json)} params=${JSON.stringify(p.json)}`;
          assert.deepEqual(rendered(refusal === null ? null : refusalError(row.name, refusal)), rendered(expected), label);
          compared++;
          if (refusal !== null) refused++;
        }
      }
    }
  }
  assert.ok(compared > 10000 && refused > 1000 && compared - refused > 500, `${compared} compared, ${refused} refused`);
});

test("a gate reads the typed initialize answer: defaults filled in or left out mean the same", () => {
  const load = v1.loadSessionRules;
  const params: v1.LoadSessionRequest = { sessionId: "s", cwd: "/", mcpServers: [] };
  const decoded = v1.SURFACE.decode("InitializeResponse", new RawJson('{"protocolVersion":1}'), "$.result").value;
  const client: v1.InitializeRequest = { protocolVersion: 1 };
  for (const agent of [decoded, { protocolVersion: 1 }, { protocolVersion: 1, agentCapabilities: { loadSession: false } }]) {
    assert.deepEqual(load.refusal?.(params, { client, agent }), { kind: "CapabilityNotAdvertised", capability: "agentCapabilities.loadSession", test: "advertised" });
  }
  assert.equal(load.refusal?.(params, { client, agent: { protocolVersion: 1, agentCapabilities: { loadSession: true } } }), null);
});

test("value gates: the first refused item, the accepted kinds, and an unknown kind refused without a capability", () => {
  const agent: v1.InitializeResponse = { protocolVersion: 1, agentCapabilities: { promptCapabilities: { audio: true } } };
  const handshake = { client: { protocolVersion: 1 }, agent };
  const prompt = v1.SURFACE.decode(
    "PromptRequest",
    new RawJson('{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":"audio","data":"","mimeType":"a"},{"type":"image","data":"","mimeType":"i"}]}'),
    "$.params",
  ).value;
  const refusal = v1.promptRules.refusal?.(prompt, handshake) ?? null;
  assert.deepEqual(refusal, {
    kind: "ValueNotAdvertised",
    path: "$.params.prompt[2]",
    tag: "image",
    capability: "agentCapabilities.promptCapabilities.image",
    accepted: ["text", "resource_link", "audio"],
  });
  assert.ok(refusal !== null);
  const error = refusalError("session/prompt", refusal);
  assert.equal(error.message, "invalid params: $.params.prompt[2]: `image` needs `agentCapabilities.promptCapabilities.image`, which this side did not advertise");
  assert.deepEqual(error.data?.parse(), { path: "$.params.prompt[2]", expected: "one of the advertised kinds (text, resource_link, audio)", found: "image" });
  assert.ok(refusalFailure("session/prompt", refusal) instanceof CapabilityNotAdvertised);

  const unknown = v1.SURFACE.decode("PromptRequest", new RawJson('{"sessionId":"s","prompt":[{"type":"video"}]}'), "$.params").value;
  const other = v1.promptRules.refusal?.(unknown, handshake) ?? null;
  assert.deepEqual(other, { kind: "ValueNotAdvertised", path: "$.params.prompt[0]", tag: "video", capability: null, accepted: ["text", "resource_link", "audio"] });
  assert.ok(other !== null);
  assert.equal(refusalError("session/prompt", other).message, "invalid params: $.params.prompt[0]: `video` is not a kind this side can have advertised");
  // Sent, such an item is left to the params' validation.
  assert.equal(refusalFailure("session/prompt", other), null);
});

test("a chosen capability: the elicitation mode picks the member of the client's capabilities", () => {
  const client: v1u.InitializeRequest = { protocolVersion: 1, clientCapabilities: { elicitation: { form: {} } } };
  const handshake = { client, agent: { protocolVersion: 1 } };
  const decode = (json: string): v1u.CreateElicitationRequest => v1u.SURFACE.decode("CreateElicitationRequest", new RawJson(json), "$.params").value;
  const form = decode('{"message":"m","mode":"form","requestedSchema":{"type":"object","properties":{}},"sessionId":"s"}');
  assert.equal(v1u.createElicitationRules.refusal?.(form, handshake), null);
  const url = decode('{"message":"m","mode":"url","url":"http://u","elicitationId":"e","sessionId":"s"}');
  const refusal = v1u.createElicitationRules.refusal?.(url, handshake) ?? null;
  assert.deepEqual(refusal, { kind: "ChoiceNotAdvertised", member: "mode", value: "url", capability: "clientCapabilities.elicitation.url" });
  assert.ok(refusal !== null);
  const error = refusalError("elicitation/create", refusal);
  assert.equal(error.message, "invalid params: mode `url` needs `clientCapabilities.elicitation.url`, which this side did not advertise");
  assert.deepEqual(error.data?.parse(), { path: "$.params.mode", expected: "a mode this side advertised", found: "url" });
});

test("a non-empty list: v2 auth methods", () => {
  const client = v2.SURFACE.decode("InitializeRequest", new RawJson('{"protocolVersion":2,"info":{"name":"c","version":"1"}}'), "$.params").value;
  const agent = v2.SURFACE.decode("InitializeResponse", new RawJson('{"protocolVersion":2,"info":{"name":"a","version":"1"}}'), "$.result").value;
  const refusal = v2.loginAuthRules.refusal?.({ methodId: "a" } as v2.LoginAuthRequest, { client, agent }) ?? null;
  assert.deepEqual(refusal, { kind: "CapabilityNotAdvertised", capability: "authMethods", test: "non-empty" });
  assert.ok(refusal !== null);
  const error = refusalError("auth/login", refusal);
  assert.equal(error.message, "method not found: `auth/login` needs a non-empty `authMethods`, which this side did not advertise");
  assert.equal(error.data instanceof RawJson ? error.data.text : null, '{"method":"auth/login","capability":"authMethods"}');
});

test("sessions: named by the typed params, created by the typed result, announcements read from it", () => {
  assert.equal(v1.promptRules.session?.({ sessionId: "s1", prompt: [] }), "s1");
  assert.equal(v1.newSessionRules.created?.({ sessionId: "s2" }), "s2");
  assert.deepEqual(v1.newSessionRules.announced?.({ sessionId: "s2", modes: { currentModeId: "m", availableModes: [] } }), ["modes"]);
  assert.deepEqual(v1.newSessionRules.announced?.({ sessionId: "s2", modes: null }), []);
  assert.deepEqual(v1.newSessionRules.announced?.({ sessionId: "s2" }), []);
  assert.equal(v1.setSessionModeRules.needs, "modes");
  const refusal: Refusal = { kind: "NotAnnounced", member: "modes", session: "s2" };
  const error = refusalError("session/set_mode", refusal);
  assert.equal(error.message, "invalid params: `session/set_mode` needs `modes`, which the answer that opened session `s2` did not announce");
  assert.deepEqual(error.data?.parse(), { path: "$.params.sessionId", expected: "a session whose opening answer announced `modes`", found: "s2" });
  assert.ok(refusalFailure("session/set_mode", refusal) instanceof NotAnnounced);
  // v2 has no session gate, and no `session/set_mode`.
  assert.equal(v2.CHECKS.get("session/set_mode"), undefined);
});

// ---------------------------------------------------------------------------------------
// Parsed once: a `session/prompt` through the real receive path.

test("a received session/prompt is decoded once and its text never parsed again", async () => {
  const [agentEnd, remoteEnd] = duplex();
  const prompts: v1.PromptRequest[] = [];
  const agent: v1.Agent = {
    initialize: () => ({ protocolVersion: 1, agentCapabilities: { promptCapabilities: { image: true } } }),
    newSession: () => ({ sessionId: "s1" }),
    prompt: (_cx, params) => {
      prompts.push(params);
      return { stopReason: "end_turn" };
    },
  };
  const { connection } = v1.connectAgent(agent, agentEnd.input, agentEnd.output, { strict: true });
  const run = connection.run();
  const remote = new Remote(remoteEnd);
  await remote.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
  await remote.next("initialize");
  await remote.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/", mcpServers: [] } });
  await remote.next("session/new");

  const decodedTypes: string[] = [];
  const parsed: string[] = [];
  const surface = v1.SURFACE as unknown as { decodeNamed: SurfaceView["decodeNamed"] };
  const decodeNamed = surface.decodeNamed;
  const parse = JSON.parse;
  surface.decodeNamed = function (this: unknown, name, payload, root) {
    decodedTypes.push(name);
    return decodeNamed.call(v1.SURFACE, name, payload, root);
  };
  JSON.parse = function (textArg: string, reviver?: (key: string, value: unknown) => unknown) {
    parsed.push(String(textArg));
    return parse(textArg, reviver);
  } as typeof JSON.parse;
  let answer: { result?: { stopReason?: string } };
  try {
    const marker = "parse-me-once";
    const line = `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"${marker}"},{"type":"image","data":"AA==","mimeType":"image/png"}]}}`;
    await remote.sendRaw(line);
    answer = (await remote.next("the prompt's answer")) as typeof answer;
    // The prompt's params were decoded once, as its params type (the result is checked
    // as it goes out), and no JSON text holding them was parsed.
    assert.deepEqual(decodedTypes.filter((t) => t !== "PromptResponse"), ["PromptRequest"]);
    assert.deepEqual(parsed.filter((t) => t.includes(marker)), []);
  } finally {
    delete (surface as { decodeNamed?: unknown }).decodeNamed;
    JSON.parse = parse;
  }
  assert.equal(answer.result?.stopReason, "end_turn");
  assert.equal(prompts.length, 1);
  await remoteEnd.output.close();
  await within(run, "the connection ends");
});

test("the answers to the client's initialize and session/new are decoded once, on the reader", async () => {
  const [clientEnd, remoteEnd] = duplex();
  const { connection, agent } = v1.connectClient({ requestPermission: () => ({ outcome: { outcome: "cancelled" } }), sessionUpdate: () => {} }, clientEnd.input, clientEnd.output, { strict: true });
  const run = connection.run();
  const remote = new Remote(remoteEnd);
  const decodedTypes: string[] = [];
  const parsed: string[] = [];
  const surface = v1.SURFACE as unknown as { decodeNamed: SurfaceView["decodeNamed"] };
  const decodeNamed = surface.decodeNamed;
  const parse = JSON.parse;
  surface.decodeNamed = function (this: unknown, name, payload, root) {
    decodedTypes.push(name);
    return decodeNamed.call(v1.SURFACE, name, payload, root);
  };
  try {
    const init = agent.initialize({ protocolVersion: 1 });
    const asked = (await remote.next("initialize")) as { id: number };
    JSON.parse = function (textArg: string, reviver?: (key: string, value: unknown) => unknown) {
      parsed.push(String(textArg));
      return parse(textArg, reviver);
    } as typeof JSON.parse;
    await remote.sendRaw(`{"jsonrpc":"2.0","id":${asked.id},"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"agentInfo":{"name":"marker-agent","version":"1"}}}`);
    const answer = await within(init, "initialize");
    assert.equal(answer.agentCapabilities?.loadSession, true);
    // The typed value the handle exposes is the one decoded.
    assert.equal(agent.agentCapabilities?.loadSession, true);
    JSON.parse = parse;
    const opened = agent.newSession({ cwd: "/", mcpServers: [] });
    const call = (await remote.next("session/new")) as { id: number };
    JSON.parse = function (textArg: string, reviver?: (key: string, value: unknown) => unknown) {
      parsed.push(String(textArg));
      return parse(textArg, reviver);
    } as typeof JSON.parse;
    await remote.sendRaw(`{"jsonrpc":"2.0","id":${call.id},"result":{"sessionId":"marker-session","modes":{"currentModeId":"m","availableModes":[]}}}`);
    assert.equal((await within(opened, "session/new")).sessionId, "marker-session");
    assert.deepEqual(parsed.filter((t) => t.includes("marker")), []);
    assert.deepEqual(
      decodedTypes.filter((t) => t === "InitializeResponse" || t === "NewSessionResponse"),
      ["InitializeResponse", "NewSessionResponse"],
    );
  } finally {
    JSON.parse = parse;
    delete (surface as { decodeNamed?: unknown }).decodeNamed;
  }
  // The session was opened, with the modes it announced: `session/set_mode` may be sent.
  const setMode = agent.setSessionMode({ sessionId: "marker-session", modeId: "m" });
  const sent = (await remote.next("session/set_mode")) as { id: number; method: string };
  assert.equal(sent.method, "session/set_mode");
  await remote.send({ jsonrpc: "2.0", id: sent.id, result: {} });
  await within(setMode, "session/set_mode");
  await clientEnd.output.close();
  await remoteEnd.output.close();
  await within(run, "the connection ends");
});
