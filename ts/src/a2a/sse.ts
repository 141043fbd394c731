/**
 * Server-sent events, read incrementally: text in as it arrives, whole events out
 * (`id`, `event`, `data`, `retry`), by the rules of the HTML standard's event stream
 * format. Pure: the client feeds it what `fetch` yields.
 */

/** One dispatched event. */
export interface SseEvent {
  /** The last event id seen on the stream (what `Last-Event-ID` resumes from), if any. */
  readonly id: string | undefined;
  /** The event's name (`undefined`: the default, `message`). */
  readonly event: string | undefined;
  /** Its data lines joined by `\n`. */
  readonly data: string;
  /** A reconnection time the server asked for, in milliseconds. */
  readonly retry: number | undefined;
}

/** An incremental event-stream reader. */
export class SseReader {
  private buffer = "";
  private data: string[] = [];
  private event: string | undefined;
  private retry: number | undefined;
  private lastId: string | undefined;
  private started = false;

  /** The events completed by `chunk` (text decoded with a streaming `TextDecoder`). */
  push(chunk: string): SseEvent[] {
    let text = this.buffer + chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (c === 13 && i + 1 === text.length) break;
      this.line(text.slice(start, i), out);
      if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    this.buffer = text.slice(start);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === "") {
      if (this.data.length > 0) out.push({ id: this.lastId, event: this.event, data: this.data.join("\n"), retry: this.retry });
      this.data = [];
      this.event = undefined;
      this.retry = undefined;
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
  }
}
