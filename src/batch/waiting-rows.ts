/**
 * A batch's rows waiting in BullMQ's delayed set: a retry after a 501 or an outage, the
 * circuit breaker's cool-down, another row holding the deal, the news feed being asked.
 * Read from the delayed set alone (never the whole queue): a member's score holds its next
 * try (BullMQ bakes the time, ms, into the score's upper bits: score = time × 4096 + n).
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { jobIdParts } from '../queue/job-data.js';

export interface WaitingRow {
  /** The record's 1-based position in the input. */
  row: number;
  dealId: string;
  /** When the row is tried again (ISO, UTC). */
  nextTryAt: string;
  /** Tries made so far (a try is a call that failed; a hold or a wait spends none). */
  attempts: number;
  /** Why it waits, in a sentence: the last try's error (masked as BullMQ keeps it), or what it waits for. */
  reason: string;
}

export interface WaitingRows {
  /** The batch's rows in the delayed set. */
  count: number;
  /** The earliest next try among them (ms since the epoch). */
  nextAt?: number;
  /** The first `limit` of them by next try, with their reasons (only when `limit` > 0). */
  rows: WaitingRow[];
}

/** Delayed-set members read per ZSCAN round trip. */
const SCAN_COUNT = 1000;
/** Job hashes read per pipeline. */
const CHUNK = 200;
/** A reason is one line: a gateway's long message is cut here. */
const REASON_CHARS = 240;

/** BullMQ's delayed score: the time (ms) × 0x1000 plus a counter of the same millisecond. */
export function delayedScoreTime(score: number): number {
  return Math.floor(score / 0x1000);
}

/**
 * The batch's waiting rows: their count and earliest next try, and the first `limit` with
 * their reasons. Job ids are `<batch>.<base64url of the dealId>`: base64url has no `.`, so
 * a batch `a` never takes the jobs of a batch `a.b`.
 */
export async function findWaitingRows(redis: Redis, keys: Keys, batch: string, limit = 0): Promise<WaitingRows> {
  const delayedKey = `${keys.bullPrefix}:${keys.queueName}:delayed`;
  const own = `${batch}.`;
  const found: Array<{ id: string; at: number }> = [];
  let cursor = '0';
  do {
    // Batch ids hold letters, digits, '.', '_' and '-' (BATCH_ID): nothing a glob would read as a pattern.
    const [next, page] = await redis.zscan(delayedKey, cursor, 'MATCH', `${own}*`, 'COUNT', SCAN_COUNT);
    cursor = next;
    for (let i = 0; i + 1 < page.length; i += 2) {
      const id = page[i]!;
      if (id.slice(own.length).includes('.')) continue;
      found.push({ id, at: delayedScoreTime(Number(page[i + 1])) });
    }
  } while (cursor !== '0');
  // ZSCAN may return a member twice (the set changed during the scan).
  const unique = [...new Map(found.map((f) => [f.id, f])).values()].sort((a, b) => a.at - b.at);
  const result: WaitingRows = { count: unique.length, rows: [] };
  if (unique.length > 0) result.nextAt = unique[0]!.at;
  const chosen = unique.slice(0, Math.max(0, limit));
  const jobKey = `${keys.bullPrefix}:${keys.queueName}:`;
  for (let i = 0; i < chosen.length; i += CHUNK) {
    const slice = chosen.slice(i, i + CHUNK);
    const pipeline = redis.pipeline();
    for (const f of slice) pipeline.hmget(jobKey + f.id, 'data', 'failedReason', 'atm');
    const replies = (await pipeline.exec()) ?? [];
    slice.forEach((f, j) => {
      const [err, fields] = replies[j] ?? [null, null];
      if (err) throw err;
      const [data, failedReason, atm] = (fields as Array<string | null> | null) ?? [];
      // Removed between the scan and this read: it is no longer waiting.
      if (!data) return;
      const job = parseJobData(data, f.id);
      const attempts = Number(atm ?? 0) || 0;
      result.rows.push({
        row: job.row,
        dealId: job.dealId,
        nextTryAt: new Date(f.at).toISOString(),
        attempts,
        reason: waitingReason({ ...job, attempts, failedReason: failedReason ?? undefined }),
      });
    });
  }
  return result;
}

interface WaitingJob {
  row: number;
  dealId: string;
  exhausted?: { errorMessage?: string };
  holds?: number;
  waits?: number;
}

/**
 * Only the fields a reason needs: the job's deal (personal data) is read and dropped here. A job
 * written by this version has its dealId in its id only (`dealJobId`).
 */
function parseJobData(text: string, id: string): WaitingJob {
  const dealId = (d: Partial<WaitingJob>) => (typeof d.dealId === 'string' ? d.dealId : (jobIdParts(id)?.dealId ?? ''));
  try {
    const d = JSON.parse(text) as Partial<WaitingJob>;
    return {
      row: typeof d.row === 'number' ? d.row : 0,
      dealId: dealId(d),
      ...(d.exhausted && { exhausted: { errorMessage: d.exhausted.errorMessage } }),
      ...(typeof d.holds === 'number' && { holds: d.holds }),
      ...(typeof d.waits === 'number' && { waits: d.waits }),
    };
  } catch {
    return { row: 0, dealId: dealId({}) };
  }
}

/**
 * Why a delayed job waits, from what the worker left on it: no tries left with the feed
 * being asked (`exhausted`), a failed try (BullMQ's failedReason, the worker's masked message
 * such as `501: ...`), another row holding the deal (`waits`), the breaker (`holds`).
 */
export function waitingReason(job: WaitingJob & { attempts: number; failedReason?: string }): string {
  const cut = (text: string) => (text.length > REASON_CHARS ? `${text.slice(0, REASON_CHARS - 1)}…` : text);
  if (job.exhausted)
    return cut(
      `no tries left (${job.exhausted.errorMessage ?? 'the last failed'}); the news feed is asked whether the last one made a docflow`,
    );
  if (job.failedReason) return cut(`try ${job.attempts} failed: ${job.failedReason}`);
  if (job.waits) return 'another row holds this deal, or the news feed is asked about an earlier try';
  if (job.holds) return 'the gateway is down (circuit breaker open): waiting without spending a try';
  return 'waiting for its batch to finish loading';
}
