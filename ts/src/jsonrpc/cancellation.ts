/**
 * Small helpers over `AbortSignal`: a controller that follows a parent signal until it
 * is detached, a listener that can be removed, and racing a promise against a signal.
 */

/** Calls `fn` once when `signal` aborts (at once if it already has); returns the remover. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => {};
  }
  const listener = (): void => fn();
  signal.addEventListener("abort", listener, { once: true });
  return () => signal.removeEventListener("abort", listener);
}

/** An `AbortController` that aborts when `parent` does, until `detach()` is called. */
export class ChildController extends AbortController {
  private readonly remove: () => void;

  constructor(parent: AbortSignal) {
    super();
    this.remove = onAbort(parent, () => this.abort());
  }

  /** Stops following the parent (call when the work is over, so the parent does not keep it). */
  detach(): void {
    this.remove();
  }
}

/** Whether `promise` settled before any of `signals` aborted. `false` at once if one
 * already has. The promise's own failure counts as settled. */
export async function settledBefore(promise: Promise<unknown>, ...signals: AbortSignal[]): Promise<boolean> {
  if (signals.some((s) => s.aborted)) return false;
  const removers: (() => void)[] = [];
  try {
    return await new Promise<boolean>((resolve) => {
      for (const s of signals) removers.push(onAbort(s, () => resolve(false)));
      promise.then(
        () => resolve(true),
        () => resolve(true),
      );
    });
  } finally {
    for (const remove of removers) remove();
  }
}

/** A promise with its resolve function outside (the one-shot event the connection's tasks wait on). */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  settled: boolean;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  const d: Deferred<T> = {
    promise,
    settled: false,
    resolve(value: T) {
      if (d.settled) return;
      d.settled = true;
      resolve(value);
    },
  };
  return d;
}

/** Resolves after `ms` or when `until` settles, whichever is first; the timer never keeps the process alive past it. */
export async function waitAtMost(ms: number, until: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      until.then(
        () => true,
        () => true,
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
