/**
 * The stream budget: one count, shared by every SSE stream of a server, of the bytes of
 * encoded frames held for subscribers — a frame from the moment it is encoded until the
 * connection's write buffer has let it out to the kernel. When a frame does not fit, the
 * stream holding the most is cut off (its connection closed, which frees what node holds
 * for it), so clients that stop reading cannot make the server keep a copy of every event
 * for each of them, nor keep the budget from the streams that do read.
 */

/** The default budget, as `agentproto serve --stream-budget-mib`. */
export const DEFAULT_STREAM_BUDGET_BYTES = 64 << 20;

/** One stream's share of the budget. */
export interface BudgetHolder {
  /** The bytes it has charged and not given back. */
  readonly held: number;
  /** Cuts the stream off: gives its bytes back (`StreamBudget.release`) and leaves the
   * budget (`StreamBudget.leave`) before it returns. */
  cut(): void;
}

/** A server-wide count of the stream bytes held, against a limit. */
export class StreamBudget {
  #used = 0;
  readonly #holders = new Set<BudgetHolder>();

  /** `limitBytes`: the most held at once, all streams together. */
  constructor(readonly limitBytes: number = DEFAULT_STREAM_BUDGET_BYTES) {
    if (!(limitBytes > 0)) throw new RangeError(`a stream budget wants a positive number of bytes, got ${limitBytes}`);
  }

  /** The bytes held now, all streams together. */
  get used(): number {
    return this.#used;
  }

  /** The streams that may be cut to make room. */
  join(holder: BudgetHolder): void {
    this.#holders.add(holder);
  }

  leave(holder: BudgetHolder): void {
    this.#holders.delete(holder);
  }

  /** Counts `bytes` for `holder` (the caller adds them to its `held`). While they do not
   * fit, the stream holding the most is cut; when that would be `holder` itself, nothing
   * is counted: `false`. */
  charge(holder: BudgetHolder, bytes: number): boolean {
    while (this.#used + bytes > this.limitBytes) {
      let most = holder;
      for (const other of this.#holders) if (other.held > most.held) most = other;
      if (most === holder) return false;
      const before = this.#used;
      most.cut();
      this.#holders.delete(most);
      if (this.#used >= before) return false; // a holder that gave nothing back: no loop
    }
    this.#used += bytes;
    return true;
  }

  /** Gives back `bytes` counted before. */
  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}
