/**
 * Decode failures and the warnings of lenient decoding.
 *
 * The wording follows the Rust SDK (`crates/codec`): a failure says what the schema
 * expected, what the input held and where (a JSON path from the message root), so a
 * -32602 reply carries the same `{path, expected, found}` in every language.
 */

/** A value could not be decoded: what was expected, what was found, and where. */
export class DecodeError extends Error {
  /**
   * @param path JSON path of the offending value from the message root (`$.params.prompt[0].text`).
   * @param expected what the schema wants there, e.g. "a string" or "field `sessionId`".
   * @param found what the input holds there, e.g. "null" or "integer `5`".
   * @param detail the whole explanation in one line, without the path.
   */
  constructor(
    readonly path: string,
    readonly expected: string,
    readonly found: string,
    readonly detail: string,
  ) {
    super(`${detail} at \`${path}\``);
    this.name = "DecodeError";
  }

  /** An error from a serde-style message at `path`, split into its parts
   * ("invalid type: X, expected Y", "missing field `x`", ...). */
  static fromMessage(path: string, message: string): DecodeError {
    const [expected, found] = splitMessage(message);
    return new DecodeError(path, expected, found, message);
  }
}

/** `[expected, found]` of a serde-style message; two empty strings when it has no such parts. */
export function splitMessage(message: string): [string, string] {
  for (const prefix of ["invalid type: ", "invalid value: "]) {
    if (message.startsWith(prefix)) {
      const rest = message.slice(prefix.length);
      const at = rest.indexOf(", expected ");
      if (at >= 0) return [rest.slice(at + ", expected ".length), rest.slice(0, at)];
    }
  }
  if (message.startsWith("missing field ")) {
    return [`field ${message.slice("missing field ".length)}`, "an object without it"];
  }
  if (message.startsWith("duplicate field ")) {
    return ["each key once", `${message.slice("duplicate field ".length)} twice`];
  }
  if (message.startsWith("unknown variant ")) {
    const rest = message.slice("unknown variant ".length);
    const at = rest.indexOf(", expected ");
    if (at >= 0) return [rest.slice(at + ", expected ".length), rest.slice(0, at)];
  }
  return ["", ""];
}

/** What lenient decoding did with a value: `salvaged` (an invalid optional value dropped,
 * or an invalid array item skipped, as the schema's lenient annotations allow) or
 * `unknown-variant` (a union variant the schema does not list, kept as raw JSON). */
export type WarningKind = "salvaged" | "unknown-variant";

/** A value that lenient decoding dropped, replaced or kept raw, and why. */
export interface DecodeWarning {
  /** JSON path of the value. */
  readonly path: string;
  /** What was wrong with it. */
  readonly message: string;
  readonly kind: WarningKind;
}

/** A decoded value with the warnings lenient decoding produced (empty for a clean message). */
export interface Decoded<T> {
  readonly value: T;
  readonly warnings: readonly DecodeWarning[];
}
