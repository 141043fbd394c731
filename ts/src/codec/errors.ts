/**
 * Decode failures and the warnings of lenient decoding.
 *
 * A failure says what the schema expected, what the input held and where (a JSON path
 * from the message root), in the same words in every SDK (vectors/README.md, "Error
 * texts"), so a -32602 reply carries the same `{path, expected, found}` in every language.
 */

/** A value could not be decoded: what was expected, what was found, and where. */
export class DecodeError extends Error {
  /** The whole explanation in one line, without the path: rendered from the parts
   * (`expected X, found Y`) unless the failure has no parts. */
  readonly detail: string;

  /**
   * @param path JSON path of the offending value from the message root (`$.params.prompt[0].text`).
   * @param expected what the schema wants there, as a phrase: `a string`, `the field "sessionId"`,
   *   `an integer from 0 to 65535`.
   * @param found what the input holds there, as a phrase: `null`, `the integer 5`, `the string "x"`.
   * @param detail the explanation of a failure without parts; rendered from the parts when omitted.
   */
  constructor(
    readonly path: string,
    readonly expected: string,
    readonly found: string,
    detail?: string,
  ) {
    const text = detail ?? `expected ${expected}, found ${found}`;
    super(`${text} at ${path}`);
    this.detail = text;
    this.name = "DecodeError";
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
  /** What was wrong with it. */
  readonly message: string;
  readonly kind: WarningKind;
}

/** A decoded value with the warnings lenient decoding produced (empty for a clean message). */
export interface Decoded<T> {
  readonly value: T;
  readonly warnings: readonly DecodeWarning[];
}
