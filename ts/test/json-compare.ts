/**
 * JSON values compared as the vector runners compare them: objects by key set and
 * values (the last of a repeated key wins, as JSON readers do), arrays item by item,
 * numbers by value (`3` equals `3.0`, integers compared exactly), `true` is not `1`.
 * Values are `codec/reader` nodes, so integers beyond 2^53 keep every digit.
 */

import { JArray, JMember, JNumber, JObject, type JNode } from "../src/codec/reader.js";

/** The last member of `object` named `key`. */
export function member(object: JObject, key: string): JMember | undefined {
  let found: JMember | undefined;
  for (const m of object.members) if (m.key === key) found = m;
  return found;
}

function lastWins(object: JObject): Map<string, JNode> {
  const out = new Map<string, JNode>();
  for (const m of object.members) out.set(m.key, m.value);
  return out;
}

/** A plain JavaScript value (or a node) as a node. */
export function nodeOf(value: unknown): JNode {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number" || typeof value === "bigint") return new JNumber(String(value));
  if (value instanceof JObject || value instanceof JArray || value instanceof JNumber) return value;
  if (Array.isArray(value)) {
    const items = value.map(nodeOf);
    return new JArray(items, items.map(() => 0), items.map(() => 0), 0, 0);
  }
  if (typeof value === "object") {
    const members = Object.entries(value).map(([k, v]) => new JMember(k, nodeOf(v), 0, 0));
    return new JObject(members, 0, 0);
  }
  throw new TypeError(`not a JSON value: ${String(value)}`);
}

function numbersEqual(a: JNumber, b: JNumber): boolean {
  if (a.integer && b.integer) return BigInt(a.text) === BigInt(b.text);
  return a.value === b.value;
}

export function same(a: JNode, b: JNode): boolean {
  if (a instanceof JNumber || b instanceof JNumber) {
    return a instanceof JNumber && b instanceof JNumber && numbersEqual(a, b);
  }
  if (a instanceof JArray || b instanceof JArray) {
    if (!(a instanceof JArray && b instanceof JArray) || a.items.length !== b.items.length) return false;
    return a.items.every((item, i) => same(item, b.items[i] as JNode));
  }
  if (a instanceof JObject || b instanceof JObject) {
    if (!(a instanceof JObject && b instanceof JObject)) return false;
    const x = lastWins(a);
    const y = lastWins(b);
    if (x.size !== y.size) return false;
    for (const [k, v] of x) {
      if (!y.has(k) || !same(v, y.get(k) as JNode)) return false;
    }
    return true;
  }
  return a === b;
}

/** A node as compact JSON text, for failure messages. */
export function show(node: JNode): string {
  if (node === null) return "null";
  if (typeof node === "string") return JSON.stringify(node);
  if (typeof node === "boolean") return String(node);
  if (node instanceof JNumber) return node.text;
  if (node instanceof JArray) return `[${node.items.map(show).join(",")}]`;
  return `{${node.members.map((m) => `${JSON.stringify(m.key)}:${show(m.value)}`).join(",")}}`;
}
