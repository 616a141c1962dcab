/**
 * What to do with a gateway failure: one small pure function of the error and
 * the attempt, and one for the delay. Both are unit-tested against the table in
 * docs/results.md ("What each answer becomes").
 */
import { ApiHttpError, ApiNetworkError, ApiResponseError, DocumentChangedError, LoginRefusedError } from '../../errors.js';
import { ERROR_CODES, httpStatusCode } from '../../outcomes/error-codes.js';
import type { Outcome } from '../../domain/outcome.js';

export type Decision =
  /** Final: record this outcome now, no retry can change it. */
  | { action: 'record'; outcome: Outcome }
  /** Transient: try again after a delay while the budget lasts, then record `exhausted`. */
  | { action: 'retry'; exhausted: 'unavailable' | 'failed' }
  /** The session is refused: stop every worker; the row stays unfinished. */
  | { action: 'pause' };

export function decide(err: unknown): Decision {
  // The fleet's login was refused (400 from /auth): no deal can pass until someone fixes it.
  if (err instanceof LoginRefusedError) return { action: 'pause' };
  // A file the row names is not the one the load checked: no try sends it as it was loaded.
  if (err instanceof DocumentChangedError) return { action: 'record', outcome: 'invalid' };
  if (err instanceof ApiHttpError) {
    const s = err.status;
    if (s === 400 || s === 404 || s === 409 || s === 422) return { action: 'record', outcome: 'rejected' };
    if (s === 401) return { action: 'pause' };
    if (s === 403) return { action: 'record', outcome: 'forbidden' };
    if (s === 501) return { action: 'retry', exhausted: 'unavailable' };
    if (s === 408 || s === 429 || s >= 500) return { action: 'retry', exhausted: 'failed' };
    return { action: 'record', outcome: 'rejected' };
  }
  // No answer, or an answer we cannot read: the docflow may or may not exist. Retried, but
  // only after the news feed has been asked (mayHaveCreated, src/ledger/).
  if (err instanceof ApiNetworkError || err instanceof ApiResponseError) return { action: 'retry', exhausted: 'failed' };
  // Anything else is a defect or an outage of our own side (Redis); retried the same way.
  return { action: 'retry', exhausted: 'failed' };
}

/** Failures of the connection before any byte of the request could reach the gateway. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Whether a failed creation call may have made a docflow: an answer that says nothing was
 * done (4xx, 501: the register is not supported) made none; no answer (a timeout after the
 * body was written, a reset), an answer that cannot be read, a 5xx or an unexpected 2xx
 * may have. Such a try is reconciled with the news feed before the deal is sent again.
 */
export function mayHaveCreated(err: unknown): boolean {
  if (err instanceof ApiHttpError) return err.status >= 500 && err.status !== 501;
  if (err instanceof ApiNetworkError) return !NOT_SENT.has(err.reason);
  return true;
}

/** The longest wait between two tries, whatever the attempt number or Retry-After says. */
export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;

/**
 * Delay before try `attemptsMade + 1`: `backoffMs` doubled per failed try, times a
 * jitter in [0.8, 1.2) so that a thousand deals failing together do not come back
 * together. A 429 waits what its Retry-After says instead.
 */
export function retryDelay(attemptsMade: number, backoffMs: number, err: unknown, random: () => number = Math.random): number {
  if (err instanceof ApiHttpError && err.status === 429 && err.retryAfterSeconds !== undefined) {
    return Math.min(MAX_RETRY_DELAY_MS, err.retryAfterSeconds * 1000);
  }
  const exponent = Math.max(0, attemptsMade - 1);
  const base = backoffMs * 2 ** exponent;
  return Math.round(Math.min(MAX_RETRY_DELAY_MS, base * (0.8 + 0.4 * random())));
}

/**
 * The gateway's Error object, flattened for one results cell: `code: message @ target; nested...`.
 * The gateway may echo a person's values in its code as well as its message
 * (`badSnils12345678964`): `mask` (maskPersonalData for the row's persons) runs over both,
 * so that neither reaches an outcome, a log line or an Error unmasked.
 */
export function describeApiError(
  err: unknown,
  mask: (text: string) => string = (text) => text,
): { errorCode?: string; errorMessage: string; httpStatus?: number } {
  const raw = flatten(err);
  return { ...raw, ...(raw.errorCode !== undefined && { errorCode: mask(raw.errorCode) }), errorMessage: mask(raw.errorMessage) };
}

function flatten(err: unknown): { errorCode?: string; errorMessage: string; httpStatus?: number } {
  if (err instanceof ApiHttpError) {
    const body = err.body;
    const parts: string[] = [];
    const walk = (e: NonNullable<typeof body>, depth: number): void => {
      const text = [e.code, e.message].filter(Boolean).join(': ');
      parts.push(`${text || 'error'}${e.target ? ` @ ${e.target}` : ''}`);
      if (depth < 3) for (const child of e.errors ?? []) walk(child, depth + 1);
    };
    if (body) walk(body, 0);
    return {
      errorCode: body?.code ?? httpStatusCode(err.status),
      errorMessage: parts.length > 0 ? `${err.status}: ${parts.join('; ')}` : err.message,
      httpStatus: err.status,
    };
  }
  if (err instanceof ApiNetworkError) return { errorCode: err.reason, errorMessage: err.message };
  if (err instanceof ApiResponseError) return { errorCode: err.code, errorMessage: err.message, httpStatus: err.status };
  if (err instanceof DocumentChangedError) return { errorCode: ERROR_CODES.DOCUMENT_CHANGED.code, errorMessage: err.message };
  return { errorCode: ERROR_CODES.ERR_INTERNAL.code, errorMessage: err instanceof Error ? err.message : String(err) };
}
