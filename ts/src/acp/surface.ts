/**
 * One ACP surface (v1, v1 unstable, v2, ...): its method table and the decoding and
 * canonical encoding of its payloads by type name, through the generated validators and
 * encoders (`src/generated/acp/<surface>.codec.ts`).
 */

import type { Decoded } from "../codec/errors.js";
import { JObject, JsonSyntaxError, MAX_NESTING_DEPTH, NestingError, parse, type JNode } from "../codec/reader.js";
import { Ctx, notJson, tooDeep, type Decoder } from "../codec/runtime.js";
import { ReceivedJson, type RawJson } from "../codec/values.js";
import type { MethodInfo, SurfaceRules } from "./rules.js";

type Decoders<T> = { readonly [K in keyof T]: Decoder<T[K]> };
type Encoders<T> = { readonly [K in keyof T]: (value: T[K]) => string };

const EMPTY_OBJECT = new JObject([], 0, 2);
const RESULT = "$.result";

/** What the receive path needs of a surface, whatever its payload types. */
export interface SurfaceView {
  requests(side: string): ReadonlyMap<string, MethodInfo>;
  notifications(side: string): ReadonlyMap<string, MethodInfo>;
  /** `decode` with a type name only known at run time (a method table's). */
  decodeNamed(name: string, payload: RawJson | null, root: string): Decoded<unknown>;
  /** `encode` with a type name only known at run time; `value` must be of that type. */
  encodeNamed(name: string, value: unknown): string;
}

/** The method table of one generated module and the codecs of its payload types. */
export class Surface<T> implements SurfaceView {
  private readonly bySide = new Map<string, Map<string, MethodInfo>>();
  /** `requests(side)` and `notifications(side)` by side: looked up once per line, so no key is built per call. */
  private readonly requestsOf = new Map<string, ReadonlyMap<string, MethodInfo>>();
  private readonly notificationsOf = new Map<string, ReadonlyMap<string, MethodInfo>>();
  private static readonly NONE: ReadonlyMap<string, MethodInfo> = new Map();

  constructor(
    readonly methods: readonly MethodInfo[],
    readonly rules: SurfaceRules,
    readonly protocolVersion: number,
    private readonly decoders: Decoders<T>,
    private readonly encoders: Encoders<T>,
  ) {
    for (const m of methods) this.table(m.kind, m.side).set(m.name, m);
    const protocol = this.table("notification", "protocol");
    for (const side of ["agent", "client", "proxy"]) {
      const own = this.table("notification", side);
      const merged = new Map(protocol);
      for (const [name, m] of own) merged.set(name, m);
      this.bySide.set(`notification ${side}`, merged);
    }
    for (const [key, table] of this.bySide) {
      const [kind, side] = key.split(" ") as [string, string];
      (kind === "request" ? this.requestsOf : this.notificationsOf).set(side, table);
    }
  }

  private table(kind: string, side: string): Map<string, MethodInfo> {
    const key = `${kind} ${side}`;
    let table = this.bySide.get(key);
    if (table === undefined) {
      table = new Map();
      this.bySide.set(key, table);
    }
    return table;
  }

  /** The requests `side` handles, by wire name. */
  requests(side: string): ReadonlyMap<string, MethodInfo> {
    return this.requestsOf.get(side) ?? Surface.NONE;
  }

  /** The notifications `side` handles (its own and the `protocol` ones), by wire name. */
  notifications(side: string): ReadonlyMap<string, MethodInfo> {
    return this.notificationsOf.get(side) ?? Surface.NONE;
  }

  /** Whether `name` is a type of this surface. */
  has(name: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.decoders, name);
  }

  decodeNamed(name: string, payload: RawJson | null, root: string): Decoded<unknown> {
    if (!this.has(name)) throw new TypeError(`no type named ${name}`);
    return this.decode(name as keyof T & string, payload, root);
  }

  /**
   * Decodes a payload as the type `name`; absent or `null` params decode as `{}`, a
   * `null` result (`root` `$.result`) as `null` (the caller reads it as `{}` for a method
   * whose result may be empty).
   *
   * @param root the JSON path of the payload in its message (`$.params`, `$.result`).
   * @throws DecodeError when the payload does not match the type.
   */
  decode<K extends keyof T & string>(name: K, payload: RawJson | null, root: string): Decoded<T[K]> {
    let node: JNode;
    let cx: Ctx;
    if (payload === null || (payload.text === "null" && root !== RESULT)) {
      node = EMPTY_OBJECT;
      cx = new Ctx("{}");
    } else if (payload.text === "null") {
      // A `null` result is `{}` only for a method whose result may be empty, and the
      // caller decides that (vectors/README.md, canonical rule 10): here it is refused.
      node = null;
      cx = new Ctx("null");
    } else if (payload instanceof ReceivedJson) {
      node = payload.node;
      cx = new Ctx(payload.source);
    } else {
      try {
        node = parse(payload.text, MAX_NESTING_DEPTH);
      } catch (err) {
        // Not JSON (kind `not-json`): where it stops is the grammar's to say, not the reader's message.
        if (err instanceof JsonSyntaxError) throw notJson(root, payload.text, err.position);
        if (err instanceof NestingError) throw tooDeep(root);
        throw err;
      }
      cx = new Ctx(payload.text);
    }
    const decoder = this.decoders[name];
    if (decoder === undefined) throw new TypeError(`no type named ${name}`);
    const value = decoder(node, root, cx);
    return { value, warnings: cx.warnings };
  }

  encodeNamed(name: string, value: unknown): string {
    if (!this.has(name)) throw new TypeError(`no type named ${name}`);
    const key = name as keyof T & string;
    return this.encode(key, value as T[typeof key]);
  }

  /** The canonical JSON of a value of the type `name` (vectors/README.md, "Canonical encoding"). */
  encode<K extends keyof T & string>(name: K, value: T[K]): string {
    const encoder = this.encoders[name];
    if (encoder === undefined) throw new TypeError(`no type named ${name}`);
    return encoder(value);
  }
}
