/**
 * The hand-written conversions the generated 0.3 tables name: where 0.3 and 1.0 differ
 * in structure, not only in names. Each takes the direction (`v1`: from 0.3 to 1.0).
 */

import { ENUMS, type MembersFn, type ValueFn } from "../../generated/a2a/v03.js";
import { bad, enumValue, get, isObject, member, object, string, type Direction, type Json, type JsonObject } from "./v03.js";

/** The 0.3 states after which no more status updates follow on a stream (terminal or
 * interrupted): the ones that carry `final: true`. */
export const FINAL_STATES: readonly string[] = ["completed", "failed", "canceled", "rejected", "input-required", "auth-required"];

/** Converts a whole value by the named function. */
export function customValue(fn: ValueFn, dir: Direction, value: Json, path: string): Json {
  switch (fn) {
    case "part":
      return part(dir, value, path);
    case "oauth_flows":
      return oauthFlows(dir, value, path);
    case "security_requirements":
      return securityRequirements(dir, value, path);
  }
}

/** Reads `src` and adds members to `out` by the named function. */
export function customMembers(fn: MembersFn, dir: Direction, src: JsonObject, out: JsonObject, path: string): void {
  switch (fn) {
    case "final_flag":
      return finalFlag(dir, src, out, path);
    case "schemes":
      return schemes(dir, src, out, path);
    case "default_config_id":
      return defaultIdFrom(dir, src, out, "taskId");
    case "default_get_id":
      return defaultIdFrom(dir, src, out, "id");
    case "interfaces":
      return interfaces(dir, src, out, path);
    case "extended_card":
      return extendedCard(dir, src, out);
  }
}

/** 0.3 `final` is not in 1.0 (the stream closing says it): going to 0.3 it is derived
 * from the state (terminal or interrupted); going to 1.0 it is dropped. */
function finalFlag(dir: Direction, src: JsonObject, out: JsonObject, path: string): void {
  if (dir !== "v03") return;
  const status = src["status"];
  const state = isObject(status) && status["state"] !== undefined ? enumValue(ENUMS.TaskState, dir, status["state"] as Json, `${path}.status.state`) : null;
  out["final"] = typeof state === "string" && FINAL_STATES.includes(state);
}

/** 0.3 parts are tagged by `kind` and keep files in a nested object; 1.0 parts are a
 * `oneof` of `text`, `raw`, `url` and `data` with `mediaType` and `filename` beside it. */
function part(dir: Direction, value: Json, path: string): Json {
  const src = object(value, path);
  const out: JsonObject = {};
  if (dir === "v1") {
    const k = get(src, "kind");
    const kindPath = member(path, "kind");
    // Lenient: a part without `kind` is read by the member it has.
    const kind = k !== undefined ? string(k, kindPath) : "text" in src ? "text" : "file" in src ? "file" : "data" in src ? "data" : null;
    if (kind === null) throw bad(kindPath, '"text", "file" or "data"', null);
    if (kind === "text") {
      out["text"] = string(get(src, "text") ?? null, member(path, "text"));
    } else if (kind === "file") {
      const p = member(path, "file");
      const file = object(src["file"] ?? null, p);
      const bytes = get(file, "bytes");
      const uri = get(file, "uri");
      if (bytes !== undefined && uri === undefined) out["raw"] = string(bytes, member(p, "bytes"));
      else if (uri !== undefined && bytes === undefined) out["url"] = string(uri, member(p, "uri"));
      else throw bad(p, "a file with exactly one of bytes and uri", src["file"]);
      const mime = get(file, "mimeType");
      if (mime !== undefined) out["mediaType"] = string(mime, member(p, "mimeType"));
      const name = get(file, "name");
      if (name !== undefined) out["filename"] = string(name, member(p, "name"));
    } else if (kind === "data") {
      const d = get(src, "data");
      if (d === undefined) throw bad(member(path, "data"), "an object", null);
      out["data"] = d;
    } else {
      throw bad(kindPath, '"text", "file" or "data"', kind);
    }
  } else {
    const present = ["text", "raw", "url", "data"].filter((k) => get(src, k) !== undefined);
    const which = present[0];
    if (which === undefined || present.length > 1) throw bad(path, "a part with exactly one of text, raw, url, data", value);
    if (which === "text") {
      out["kind"] = "text";
      out["text"] = src["text"] as Json;
    } else if (which === "data") {
      out["kind"] = "data";
      // 0.3 data parts hold an object; any other JSON value is wrapped.
      const d = src["data"] as Json;
      out["data"] = isObject(d) ? d : { value: d };
    } else {
      const file: JsonObject = { [which === "raw" ? "bytes" : "uri"]: src[which] as Json };
      const mime = get(src, "mediaType");
      if (mime !== undefined && mime !== "") file["mimeType"] = mime;
      const name = get(src, "filename");
      if (name !== undefined && name !== "") file["name"] = name;
      out["kind"] = "file";
      out["file"] = file;
    }
  }
  const metadata = get(src, "metadata");
  if (metadata !== undefined) out["metadata"] = metadata;
  return out;
}

/** 0.3 `schemes[]` <-> 1.0 `scheme`: only the first scheme survives the way up. */
function schemes(dir: Direction, src: JsonObject, out: JsonObject, path: string): void {
  if (dir === "v1") {
    const p = member(path, "schemes");
    const list = get(src, "schemes");
    const first = Array.isArray(list) ? list[0] : undefined;
    if (first === undefined) throw bad(p, "an array with at least one scheme", src["schemes"]);
    out["scheme"] = string(first, `${p}[0]`);
  } else {
    const s = get(src, "scheme");
    if (s !== undefined) out["schemes"] = [s];
  }
}

/** Going to 1.0, a config without an id gets the task's id (read from `taskKey`), as the
 * 0.3 SDKs did: `set` without an id stores the task's default config, and `get` without
 * `pushNotificationConfigId` finds it. */
function defaultIdFrom(dir: Direction, src: JsonObject, out: JsonObject, taskKey: string): void {
  if (dir !== "v1" || "id" in out) return;
  const t = get(src, taskKey);
  if (t !== undefined) out["id"] = t;
}

/** The flows 0.3 knows, in the order one is picked when 1.0's `oneof` holds only one. */
const FLOWS = ["authorizationCode", "clientCredentials", "implicit", "password"];

function oauthFlows(dir: Direction, value: Json, path: string): Json {
  const src = object(value, path);
  const out: JsonObject = {};
  for (const name of FLOWS) {
    const f = get(src, name);
    if (f === undefined) continue;
    out[name] = { ...object(f, member(path, name)) };
    if (dir === "v1") break;
  }
  return out;
}

/** 0.3 `[{scheme: [scopes]}]` <-> 1.0 `[{schemes: {scheme: {list: [scopes]}}}]`. */
function securityRequirements(dir: Direction, value: Json, path: string): Json {
  if (!Array.isArray(value)) throw bad(path, "an array", value);
  return value.map((item, i) => {
    const p = `${path}[${i}]`;
    const obj = object(item, p);
    const req: JsonObject = {};
    if (dir === "v1") {
      for (const [name, scopes] of Object.entries(obj)) req[name] = { list: scopes };
      return { schemes: req };
    }
    const sp = member(p, "schemes");
    const schemesOf = get(obj, "schemes");
    if (schemesOf !== undefined) {
      for (const [name, list] of Object.entries(object(schemesOf, sp))) req[name] = get(object(list, member(sp, name)), "list") ?? [];
    }
    return req;
  });
}

/** 0.3 `supportsAuthenticatedExtendedCard` <-> 1.0 `capabilities.extendedAgentCard`. */
function extendedCard(dir: Direction, src: JsonObject, out: JsonObject): void {
  if (dir === "v1") {
    const v = get(src, "supportsAuthenticatedExtendedCard");
    if (v === undefined) return;
    const caps = isObject(out["capabilities"]) ? out["capabilities"] : (out["capabilities"] = {});
    (caps as JsonObject)["extendedAgentCard"] = v;
    return;
  }
  const caps = src["capabilities"];
  const v = isObject(caps) ? get(caps, "extendedAgentCard") : undefined;
  if (v !== undefined) out["supportsAuthenticatedExtendedCard"] = v;
}

/** 0.3 `url` + `preferredTransport` + `additionalInterfaces` + `protocolVersion` <-> 1.0
 * `supportedInterfaces`. To 1.0: the main interface first, then every additional one that
 * is not the main one again, all with the card's `Major.Minor`. To 0.3: the interfaces
 * that declare 0.3 if there are any (else all); the first is the main one, and when there
 * are several they are all listed in `additionalInterfaces`, main first. */
function interfaces(dir: Direction, src: JsonObject, out: JsonObject, path: string): void {
  if (dir === "v1") {
    const url = string(get(src, "url") ?? null, member(path, "url"));
    const t = get(src, "preferredTransport");
    const transport = t === undefined ? "JSONRPC" : string(t, member(path, "preferredTransport"));
    const v = get(src, "protocolVersion");
    const version = v === undefined ? "0.3" : majorMinor(string(v, member(path, "protocolVersion")));
    const list: Json[] = [{ url, protocolBinding: transport, protocolVersion: version }];
    const extra = get(src, "additionalInterfaces");
    if (extra !== undefined) {
      const ap = member(path, "additionalInterfaces");
      if (!Array.isArray(extra)) throw bad(ap, "an array", extra);
      extra.forEach((item, i) => {
        const ip = `${ap}[${i}]`;
        const obj = object(item, ip);
        const u = string(obj["url"] ?? null, member(ip, "url"));
        const tr = string(obj["transport"] ?? null, member(ip, "transport"));
        if (u !== url || tr !== transport) list.push({ url: u, protocolBinding: tr, protocolVersion: version });
      });
    }
    out["supportedInterfaces"] = list;
    return;
  }
  const p = member(path, "supportedInterfaces");
  const all = get(src, "supportedInterfaces");
  if (!Array.isArray(all) || all.length === 0) throw bad(p, "at least one interface", src["supportedInterfaces"]);
  let chosen = all.map((item, i) => {
    const ip = `${p}[${i}]`;
    const obj = object(item, ip);
    const version = obj["protocolVersion"];
    return { url: string(obj["url"] ?? null, member(ip, "url")), transport: string(obj["protocolBinding"] ?? null, member(ip, "protocolBinding")), v03: typeof version === "string" && version.startsWith("0.3") };
  });
  if (chosen.some((c) => c.v03)) chosen = chosen.filter((c) => c.v03);
  const main = chosen[0] as (typeof chosen)[number];
  out["url"] = main.url;
  out["preferredTransport"] = main.transport;
  out["protocolVersion"] = "0.3.0";
  if (chosen.length > 1) out["additionalInterfaces"] = chosen.map((c) => ({ url: c.url, transport: c.transport }));
}

/** `"0.3.0"` → `"0.3"`. */
function majorMinor(v: string): string {
  const parts = v.split(".");
  return parts.length >= 2 ? `${parts[0]}.${parts[1]}` : v;
}
