/**
 * The HTTP+JSON binding's request side, for the server: method, path, query, headers and
 * body in, the operation and its typed request out (path variables and the tenant filled
 * in), or the error to answer with its HTTP status. Pure: no I/O, nothing runs.
 *
 * Routes are not written per operation: the path is matched against the generated
 * `google.api.http` rules (`OPERATIONS[…].http`). A rule with a body takes the body as the
 * request message, its path variables winning over the same fields of the body; a rule
 * without one builds the request from the path variables and the query string, each
 * parameter typed by the field it names, so that the generated validator refuses a bad
 * value with the same path, kind, expected and found as in a body.
 */

import { JMember, JNumber, JObject, JsonSyntaxError, NestingError, parse, type JNode } from "../codec/reader.js";
import { DecodeError } from "../codec/errors.js";
import { OPERATION_NAMES, OPERATIONS, type A2aRequest, type HttpRule, type OperationName } from "../generated/a2a/v1.js";
import { A2aError, type ErrorTable } from "./errors.js";
import { bodyText, checkDepth, checkVersion, MAX_REQUEST_DEPTH, tooDeep, contentTypeOk, contentTypeRefused, percentDecode, queryPairs, splitTarget, type Headers, type VersionOptions } from "./http.js";
import { decodeRequest } from "./operations.js";

/** What the server reads from one HTTP+JSON request. */
export interface RestHttpRequest {
  /** The HTTP method (any case). */
  readonly method: string;
  /** The request target below the interface URL, percent-encoded, with its query
   * (`/tasks/t-1?historyLength=2`, `/acme/message:send`). */
  readonly target: string;
  readonly headers: Headers;
  /** The body; `null` or empty when there is none. */
  readonly body: Uint8Array | string | null;
}

/** A request the server would run, and the tenant its path named (if any). */
export interface RestCall {
  readonly outcome: "dispatched";
  readonly request: A2aRequest;
  readonly pathTenant: string | undefined;
}

/** A request refused before it ran. */
export interface RestRefusal {
  readonly outcome: "refused";
  readonly error: A2aError;
  /** For a 405: the verbs the path takes (the `Allow` header). */
  readonly allow: string | undefined;
}

/** Options of `decodeRestRequest`. */
export interface RestOptions extends VersionOptions {}

/** A path matched against an operation's rules. */
interface Route {
  readonly operation: OperationName;
  readonly rule: HttpRule;
  readonly vars: ReadonlyArray<readonly [string, string]>;
}

/** The path variables of `path` under `template` (`/tasks/{id}:cancel`), or `null`. */
export function matchTemplate(template: string, path: string): Array<[string, string]> | null {
  const t = template.replace(/^\/+/, "").split("/");
  const p = path.replace(/^\/+/, "").split("/");
  if (t.length !== p.length) return null;
  const vars: Array<[string, string]> = [];
  for (let i = 0; i < t.length; i++) {
    const ts = t[i] as string;
    const ps = p[i] as string;
    if (ts.startsWith("{")) {
      const close = ts.indexOf("}");
      if (close < 0) return null;
      const name = ts.slice(1, close);
      const suffix = ts.slice(close + 1);
      if (!ps.endsWith(suffix)) return null;
      const value = ps.slice(0, ps.length - suffix.length);
      if (value === "" || (suffix === "" && value.includes(":"))) return null;
      vars.push([name, percentDecode(value)]);
    } else if (ts !== ps) {
      return null;
    }
  }
  return vars;
}

/** The route of `method` `path`, or the verbs the path takes under another method, or
 * nothing. */
export function findRoute(method: string, path: string): Route | { readonly allowed: string[] } | null {
  const verb = method.toLowerCase();
  const allowed = new Set<string>();
  for (const operation of OPERATION_NAMES) {
    for (const rule of OPERATIONS[operation].http) {
      const vars = matchTemplate(rule.path, path);
      if (vars === null) continue;
      if (rule.method === verb) return { operation, rule, vars };
      allowed.add(rule.method.toUpperCase());
    }
  }
  return allowed.size === 0 ? null : { allowed: [...allowed].sort() };
}

/** `task_id` → `taskId`: a proto field name as its JSON name. */
function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A synthetic member holding a string (its text is not in the body: no span). */
function stringMember(key: string, value: string): JMember {
  return new JMember(key, value, 0, 0);
}

/** The request object of a rule without a body: path variables, then the query parameters
 * that name a request field (by JSON or proto name), typed by that field: an integer stays
 * a string (ProtoJSON reads it), a boolean is `true`/`1` or `false`/`0`, an enum may be its
 * number. Others are ignored. */
function queryObject(route: Route, query: string): JObject {
  const members: JMember[] = route.vars.map(([k, v]) => stringMember(lowerCamel(k), v));
  const fields = OPERATIONS[route.operation].query;
  for (const [k, v] of queryPairs(query)) {
    const key = lowerCamel(k);
    const field = fields.find((f) => f.wire === key);
    if (field === undefined) continue;
    let value: JNode = v;
    if (field.kind === "bool" && (v === "true" || v === "1")) value = true;
    else if (field.kind === "bool" && (v === "false" || v === "0")) value = false;
    else if (field.kind === "enum" && /^-?\d{1,10}$/.test(v)) value = new JNumber(String(Number(v)));
    members.push(new JMember(field.wire, value, 0, 0));
  }
  return new JObject(members, 0, 0);
}

/** The body object with the path variables put in (they win over the body's own). */
function withPathVars(body: JObject, route: Route): JObject {
  if (route.vars.length === 0) return body;
  const replaced = new Set<string>();
  for (const [k] of route.vars) {
    replaced.add(k);
    replaced.add(lowerCamel(k));
  }
  const members = body.members.filter((m) => !replaced.has(m.key));
  for (const [k, v] of route.vars) members.push(stringMember(lowerCamel(k), v));
  return new JObject(members, body.start, body.end);
}

function refused(error: A2aError, allow?: string): RestRefusal {
  return { outcome: "refused", error, allow };
}

/** Decodes one HTTP+JSON request of the A2A 1.0 binding. */
export function decodeRestRequest(request: RestHttpRequest, options: RestOptions = {}): RestCall | RestRefusal {
  const [path, query] = splitTarget(request.target);
  const found = findRoute(request.method, path);
  if (found === null) return refused(new A2aError("MethodNotFound", `no A2A operation at ${path}`));
  if ("allowed" in found) {
    const allow = found.allowed.join(", ");
    return refused(new A2aError("MethodNotAllowed", `${request.method} is not allowed on ${path} (allowed: ${allow})`).with("allow", allow), allow);
  }
  const versionError = checkVersion(request.headers, query, options);
  if (versionError !== null) return refused(versionError);
  const route = found;
  const pathTenant = route.vars.find(([k]) => k === "tenant")?.[1];
  const ownVars = route.vars.filter(([k]) => k !== "tenant");
  const raw = request.body ?? "";
  const empty = typeof raw === "string" ? raw === "" : raw.length === 0;
  const decoded = bodyText(raw);
  if (decoded === null) return refused(A2aError.parse("the body is not UTF-8"));
  let node: JNode;
  let text = "";
  if (route.rule.body && !(empty && ownVars.length > 0)) {
    if (!contentTypeOk(request.headers)) return refused(checkDepth(decoded, 0) ?? contentTypeRefused());
    text = decoded;
    try {
      node = parse(text, MAX_REQUEST_DEPTH);
    } catch (err) {
      if (err instanceof NestingError) return refused(tooDeep());
      if (err instanceof JsonSyntaxError) return refused(checkDepth(text, 0) ?? A2aError.parse(err.message));
      throw err;
    }
    if (node instanceof JObject) node = withPathVars(node, route);
  } else {
    // A body this rule does not read is still bounded, as in the Rust server.
    const deep = empty ? null : checkDepth(decoded, 0);
    if (deep !== null) return refused(deep);
    node = route.rule.body ? withPathVars(new JObject([], 0, 0), route) : queryObject(route, query);
  }
  try {
    return { outcome: "dispatched", request: decodeRequest(route.operation, node, "$", text), pathTenant };
  } catch (err) {
    if (err instanceof DecodeError) return refused(A2aError.invalidParams(err));
    throw err;
  }
}

/** The AIP-193 body text of an error on this binding. */
export function restErrorBody(error: A2aError, table: ErrorTable = "1.0.1"): string {
  return JSON.stringify(error.restBody(table));
}
