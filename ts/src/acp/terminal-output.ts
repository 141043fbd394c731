/** The bounded output buffer of one terminal (the twin of Rust's `terminal/output.rs`
 * and Python's `terminal/output.py`): the last `limit` bytes of what a command wrote,
 * cut at a character boundary, decoded as UTF-8 when it is read. */

/** A UTF-8 character is one leading byte and at most three continuation bytes. */
const MAX_CONTINUATION_BYTES = 3;
const REPLACEMENT = "\ufffd";

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** The last `limit` bytes of a command's output, or a few fewer after a cut moved to a
 * character boundary. The kept bytes are `data[start, end)`: dropping the oldest bytes
 * only moves `start`, and the buffer is compacted or grown (doubling, to less than four
 * times the limit) when a chunk does not fit, so each byte is copied a bounded number
 * of times however the output arrives. */
export class OutputBuffer {
  private data: Buffer;
  private start = 0;
  private end = 0;
  /** Whether any byte was ever dropped (once set, it stays set). */
  truncated = false;

  constructor(
    /** How many bytes are kept at most. */
    readonly limit: number,
  ) {
    this.data = Buffer.alloc(Math.min(limit, 4096));
  }

  /** How many bytes are kept. */
  get length(): number {
    return this.end - this.start;
  }

  /** Appends `chunk`, dropping the oldest bytes beyond the limit. */
  push(chunk: Uint8Array): void {
    let cut = false;
    if (chunk.length > this.limit) {
      // Only the chunk's tail can survive; everything kept before it goes.
      cut = true;
      this.start = 0;
      this.end = 0;
      chunk = chunk.subarray(chunk.length - this.limit);
    }
    this.append(chunk);
    const excess = this.length - this.limit;
    if (excess > 0) {
      this.start += excess;
      cut = true;
    }
    if (cut) {
      this.truncated = true;
      // Start on a character: the rest of a character cut in two goes too.
      for (let i = 0; i < MAX_CONTINUATION_BYTES && this.start < this.end && isContinuation(this.data[this.start]); i++) this.start++;
    }
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
    }
  }

  private append(chunk: Uint8Array): void {
    if (this.end + chunk.length > this.data.length) {
      const live = this.length;
      const needed = live + chunk.length;
      if (needed <= this.data.length && (this.start >= live || this.data.length >= 2 * this.limit)) {
        // Moving the live part down costs no more than the bytes appended since the last
        // move: the dead prefix is as long as the live part, or the buffer has room for
        // twice the limit.
        this.data.copy(this.data, 0, this.start, this.end);
      } else {
        let size = Math.max(this.data.length, 1);
        while (size < needed) size *= 2;
        const grown = Buffer.alloc(size);
        this.data.copy(grown, 0, this.start, this.end);
        this.data = grown;
      }
      this.start = 0;
      this.end = live;
    }
    this.data.set(chunk, this.end);
    this.end += chunk.length;
  }

  /**
   * The text kept and whether anything was dropped. Invalid bytes read as U+FFFD. While
   * the command runs (`finished` false) an incomplete character at the very end is left
   * out, since its remaining bytes may still come; once it has finished, that character
   * is replaced too.
   */
  snapshot(finished: boolean): { text: string; truncated: boolean } {
    const bytes = this.data.subarray(this.start, this.end);
    // A streaming decode holds back exactly a valid but incomplete last character.
    let text = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(bytes, { stream: !finished });
    let truncated = this.truncated;
    // A replacement character (3 bytes) may stand for a single byte: the text can then
    // be longer than the limit, and its start is dropped to fit.
    if (text.includes(REPLACEMENT)) {
      const encoded = Buffer.from(text, "utf8");
      if (encoded.length > this.limit) {
        let from = encoded.length - this.limit;
        while (from < encoded.length && isContinuation(encoded[from])) from++;
        text = encoded.subarray(from).toString("utf8");
        truncated = true;
      }
    }
    return { text, truncated };
  }
}
