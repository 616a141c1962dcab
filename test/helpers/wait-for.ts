/**
 * Polls until a condition holds: the one way the tests wait for what another process,
 * a worker, the sandbox or Redis does in its own time.
 */
import { inspect } from 'node:util';

export interface WaitForOptions {
  /** Gives up once this long has passed since the first check. */
  timeoutMs: number;
  /** The pause between two checks. */
  intervalMs: number;
  /** What is awaited, for the error: "every outcome", "the first to follow". */
  what: string;
}

/** Thrown when the time is up; carries what was awaited and the last value the check gave. */
export class WaitForTimeoutError extends Error {
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
    readonly lastValue: unknown,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${what} (last value: ${inspect(lastValue, { depth: 4, breakLength: Infinity })})`);
    this.name = 'WaitForTimeoutError';
  }
}

type Truthy<T> = Exclude<T, false | 0 | 0n | '' | null | undefined>;

/**
 * Runs `check` at once, then every `intervalMs`, until it gives a truthy value, and
 * resolves with that value. When `timeoutMs` has passed after a falsy answer, rejects
 * with a WaitForTimeoutError. An error thrown by `check` rejects at once.
 */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitForOptions): Promise<Truthy<T>> {
  const { timeoutMs, intervalMs, what } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new WaitForTimeoutError(what, timeoutMs, value);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
