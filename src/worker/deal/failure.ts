/** How a failure of a deal job's gateway call (or of a step before it) ends: retried, held, paused, or the row's outcome. */
import { DelayedError, RateLimitError, UnrecoverableError, WaitingError } from 'bullmq';
import { ApiNetworkError } from '../../errors.js';
import { isDatabaseOutage } from '../../db/database.js';
import { FeedNotCompleteError } from '../../ledger/claim.js';
import { decide, describeApiError } from './gateway-failure.js';
import type { DealRun } from './run.js';
import { WAIT, type Decision } from './decision.js';
import { LockLostError } from './job-boundary.js';

/** How long a deal waits for the database to answer again before it asks again (ms, before jitter). */
export const DATABASE_HOLD_MS = 5000;
/** At most one line a process in this time while the database stays away. */
const DATABASE_LOG_MS = 30_000;
let databaseLoggedAt = 0;
/** When each worker (its logger) last said the feed is not known complete. */
const feedLoggedAt = new WeakMap<object, number>();
/**
 * A gateway that does not answer (refused, reset, timed out) fails every deal the same way: one
 * warn line a worker a minute says so with how many tries failed so, not a line per try
 * (issue 40, point 7: an hour of ECONNREFUSED lines). Each try's own line goes to debug.
 */
const NO_ANSWER_LOG_MS = 60_000;
const noAnswerLogged = new WeakMap<object, { at: number; since: number }>();
/** A deal waiting for the feed looks again after this, doubled per wait, at most FEED_HOLD_MAX_MS (ms, before jitter). */
const FEED_HOLD_MAX_MS = 30_000;

/** A failure before or of the docflow call: retried, the session paused, held, or the row's outcome. */
export function failure(run: DealRun, err: unknown, uncertain: boolean): Decision {
  if (isSignal(err)) return { kind: 'fail', error: err };
  if (isDatabaseOutage(err)) {
    // The ledger cannot be asked: nothing may be sent (a deal is sent only under a committed claim).
    // The deal waits without spending a try, for as long as the database is away, and goes on by itself.
    const now = Date.now();
    if (now - databaseLoggedAt >= DATABASE_LOG_MS) {
      databaseLoggedAt = now;
      run
        .log()
        .error(
          { err: { message: err instanceof Error ? err.message : String(err) } },
          'the database (the ledger) cannot be reached: sending is paused; deals wait without spending a try and go on when it answers',
        );
    }
    return { kind: 'delay', ms: DATABASE_HOLD_MS + Math.round(Math.random() * 1000) };
  }
  if (err instanceof FeedNotCompleteError) return feedNotComplete(run, err);
  const decision = decide(err);
  if (decision.action === 'pause') return WAIT;
  const { ctx, attempt } = run;
  // Masked here, before anything of it is logged, thrown or kept in the job's data (`exhausted`).
  const described = describeApiError(err, (text) => run.mask(text));
  const holds = run.job.data.holds ?? 0;
  const hold = decision.action === 'retry' && holds < ctx.attempts ? (ctx.holdUntil?.() ?? 0) : 0;
  if (hold > 0) {
    // The breaker is open: the gateway is down for everyone, not for this deal. It waits for
    // the cool-down without spending a try, as many times as it has tries: a gateway down for
    // good still ends the row (unavailable or failed), not a run that never ends.
    // At debug: the breaker's own line says the gateway is down once; a line per deal held would be a flood.
    run
      .log()
      .debug(
        { errorCode: described.errorCode, httpStatus: described.httpStatus, holds: holds + 1 },
        'gateway down (breaker open): waiting without spending a try',
      );
    return { kind: 'delay', ms: hold - Date.now() + Math.round(Math.random() * 1000), patch: { holds: holds + 1 } };
  }
  if (decision.action === 'retry' && attempt < ctx.attempts) {
    const line = { errorCode: described.errorCode, httpStatus: described.httpStatus, attemptsLeft: ctx.attempts - attempt, uncertain };
    logRetry(run, err, line);
    // BullMQ keeps the message and the stack (which repeats the message), never the cause,
    // which stays in memory for the backoff strategy (a 429's Retry-After).
    return { kind: 'fail', error: new Error(described.errorMessage, { cause: err }) };
  }
  const outcome = decision.action === 'record' ? decision.outcome : decision.exhausted;
  const fields = { outcome, ...described };
  if (uncertain && outcome !== 'rejected' && outcome !== 'forbidden') {
    // No tries left, and the last may have made a docflow: the feed says which before the row ends.
    run
      .log()
      .info(
        { errorCode: described.errorCode },
        'no tries left; the last may have reached the gateway: asking the news feed before the row ends',
      );
    return { kind: 'delay', ms: 1000, patch: { exhausted: { ...fields, outcome: outcome === 'unavailable' ? 'unavailable' : 'failed' } } };
  }
  return { kind: 'outcome', fields, ledger: run.ledger() };
}

/** A try that failed and will be retried: a line each, but one a minute for a gateway that does not answer. */
function logRetry(run: DealRun, err: unknown, line: Record<string, unknown>): void {
  if (!(err instanceof ApiNetworkError)) {
    run.log().warn(line, 'transient failure, will retry');
    return;
  }
  const now = Date.now();
  const seen = noAnswerLogged.get(run.ctx.logger) ?? { at: 0, since: 0 };
  seen.since++;
  noAnswerLogged.set(run.ctx.logger, seen);
  if (now - seen.at < NO_ANSWER_LOG_MS) {
    run.log().debug(line, 'transient failure, will retry');
    return;
  }
  run
    .log()
    .warn(
      { ...line, failedTriesSinceLastLine: seen.since },
      'the gateway does not answer (transient failure, will retry): deals wait for their next try; one line a minute while it lasts',
    );
  seen.at = now;
  seen.since = 0;
}

/** BullMQ's signals, and a run that lost its job: thrown on as they are, never a failure of the deal. */
const SIGNALS = [UnrecoverableError, RateLimitError, DelayedError, WaitingError, LockLostError];
function isSignal(err: unknown): boolean {
  return SIGNALS.some((signal) => err instanceof signal);
}

/**
 * The ledger may not know the latest docflows (a database restored from an older copy): the deal
 * waits, without spending a try, until a follower reads the feed to its end. First after a quarter
 * of the follower's poll interval (a run whose follower is about to finish its first read barely
 * waits), then twice as long each time, at most 30 s: with no follower at all, waiting deals cost
 * the worker little. One line a worker every 30 s says why.
 */
function feedNotComplete(run: DealRun, err: FeedNotCompleteError): Decision {
  const { coveredAt, now, allowMs } = err.behind;
  const stamp = Date.now();
  if (stamp - (feedLoggedAt.get(run.ctx.logger) ?? 0) >= DATABASE_LOG_MS) {
    feedLoggedAt.set(run.ctx.logger, stamp);
    run
      .log()
      .warn(
        { lastCompleteRead: new Date(coveredAt).toISOString(), ageMs: now - coveredAt, allowMs },
        `${err.message}: new deals wait without spending a try until a follower reads the feed to its end; \`realty-batch work\` and \`run\` follow it (unless --no-track), or run \`realty-batch track\``,
      );
  }
  const waits = run.job.data.waits ?? 0;
  const ms = Math.min(FEED_HOLD_MAX_MS, Math.max(100, allowMs / 8) * 2 ** Math.min(10, waits));
  return { kind: 'delay', ms: Math.round(ms * (0.9 + 0.2 * Math.random())), patch: { waits: waits + 1 } };
}
