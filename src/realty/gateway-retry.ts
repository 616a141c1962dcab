/**
 * The error policy of every call after creation (`documents`, and later `sign`), the same
 * as creation's (docs/results.md, "What each answer becomes"): no answer, 408, 429, 5xx and 501
 * are tried again with exponential backoff and jitter (429 waits its Retry-After); 401
 * stops the command (the session is refused: nothing else would pass either); any other
 * answer is that docflow's own failure, not tried again.
 */
import pRetry, { AbortError } from 'p-retry';
import { ApiHttpError, ApiNetworkError, LoginRefusedError, SessionRefusedError } from '../errors.js';

export interface GatewayRetryOptions {
  /** Tries after the first (default 5). */
  retries?: number;
  /** The first wait (ms, default 1000), doubled each time. */
  minTimeoutMs?: number;
  maxTimeoutMs?: number;
  signal?: AbortSignal;
  /** Told of each failed try that will be tried again. */
  onRetry?: (err: Error, attempt: number) => void;
}

/** Whether a failed call may succeed when made again. */
export function isTransient(err: unknown): boolean {
  if (err instanceof ApiNetworkError) return true;
  if (err instanceof ApiHttpError) return err.status === 408 || err.status === 429 || err.status >= 500;
  return false;
}

export async function withGatewayRetry<T>(call: () => Promise<T>, options: GatewayRetryOptions = {}): Promise<T> {
  return pRetry(
    async () => {
      try {
        return await call();
      } catch (err) {
        if (err instanceof ApiHttpError && err.status === 401) throw new AbortError(new SessionRefusedError(err.endpoint));
        if (err instanceof LoginRefusedError) throw new AbortError(err);
        if (!isTransient(err)) throw new AbortError(err as Error);
        if (err instanceof ApiHttpError && err.status === 429 && err.retryAfterSeconds !== undefined) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(60_000, err.retryAfterSeconds! * 1000)));
        }
        throw err;
      }
    },
    {
      retries: options.retries ?? 5,
      minTimeout: options.minTimeoutMs ?? 1000,
      maxTimeout: options.maxTimeoutMs ?? 30_000,
      factor: 2,
      randomize: true,
      ...(options.signal ? { signal: options.signal } : {}),
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (retriesLeft > 0) options.onRetry?.(error, attemptNumber);
      },
    },
  );
}
