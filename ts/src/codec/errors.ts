/**
 * Decode failures and the warnings of lenient decoding.
 *
 * A failure is a value made where it happens: what kind it is (`DecodeErrorKind`,
 * generated from `rules/decode.toml`), what the schema expected, what the input held and
 * where (a JSON path from the message root), in the same words in every SDK
 * (vectors/README.md, "Error texts"), so a -32602 reply carries the same
 * `{path, kind, expected, found}` in every language. Its message is rendered from those
 * parts and never read back.
 */

import type { DecodeErrorKind } from "./kind.js";

/** A value could not be decoded: what kind of failure, what was expected, what was found,
 * and where. The message (`expected <expected>, found <found> at <path>`) is rendered
 * from those parts; nothing reads it back. */
export class DecodeError extends Error {
  /**
   * @param path JSON path of the offending value from the message root (`$.params.prompt[0].text`).
   * @param kind what kind of failure it is (the same names in every SDK; a -32602 reply
   *   carries it as `data.kind`).
   * @param expected what the schema wants there, as a phrase: `a string`, `the field "sessionId"`,
   *   `an integer from 0 to 65535`.
   * @param found what the input holds there, as a phrase: `null`, `the integer 5`, `the string "x"`.
   */
  constructor(
    readonly path: string,
    readonly kind: DecodeErrorKind,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`expected ${expected}, found ${found} at ${path}`);
    this.name = "DecodeError";
  }

  /** `expected <expected>, found <found>` (the message without the path), rendered from the parts. */
  get detail(): string {
    return `expected ${this.expected}, found ${this.found}`;
  }
}

/** What lenient decoding did with a value: `salvaged` (an invalid optional value dropped,
 * or an invalid array item skipped, as the schema's lenient annotations allow) or
 * `unknown-variant` (a union variant the schema does not list, kept as raw JSON). */
export type WarningKind = "salvaged" | "unknown-variant";

/** A value that lenient decoding dropped, replaced or kept raw, and why. */
export interface DecodeWarning {
  /** JSON path of the value. */
  readonly path: string;
  /** What happened, in one line (written where it happened, from `error`'s parts or the tag). */
  readonly message: string;
  readonly kind: WarningKind;
  /** What was wrong with it: the failure that made a salvaged value be dropped (or a
   * `null` be read as the default), or, for an unknown variant, a failure of kind
   * `unknown-variant` naming the tag (what refusing it would say, as outgoing checks do). */
  readonly error: DecodeError;
}

/** A decoded value with the warnings lenient decoding produced (empty for a clean message). */
export interface Decoded<T> {
  readonly value: T;
  readonly warnings: readonly DecodeWarning[];
}
