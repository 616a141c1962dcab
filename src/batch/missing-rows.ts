/**
 * Rows with neither a job that will run nor an outcome: a row's job was removed before
 * the row got its outcome (a clean or a removal from outside the tool), or it finished
 * without one (BullMQ failed it by itself and the worker died before the net under it
 * wrote the row's outcome). Nothing would ever finish them: `status` names them, `run` and the nightly wait stop on them instead of waiting
 * for ever, and `retry --missing` makes their jobs again from the input.
 */
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import { dealJobId } from '../queue/job-data.js';
import type { Keys } from '../redis/keys.js';
import { batchOutcomes } from '../outcomes/batch-outcomes.js';

export interface MissingRows {
  count: number;
  /** The first rows (1-based, in input order), for a message; at most `sample`. */
  rows: number[];
}

/** Job keys checked per round trip. */
const CHUNK = 1000;

export async function findMissingRows(
  redis: Redis,
  keys: Keys,
  db: Database,
  batch: string,
  total: number,
  sample = 20,
): Promise<MissingRows> {
  const missing: MissingRows = { count: 0, rows: [] };
  const jobKey = `${keys.bullPrefix}:${keys.queueName}:`;
  let pending: Array<{ row: number; dealId: string }> = [];
  const check = async (): Promise<void> => {
    const pipeline = redis.pipeline();
    for (const p of pending)
      pipeline.exists(jobKey + dealJobId(batch, p.dealId)).hexists(jobKey + dealJobId(batch, p.dealId), 'finishedOn');
    const replies = pending.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    pending.forEach((p, i) => {
      const [err, exists] = replies[2 * i] ?? [null, 0];
      const [err2, finished] = replies[2 * i + 1] ?? [null, 0];
      const failed = err ?? err2;
      if (failed) throw failed;
      // A row the index does not name (it expired with a batch loaded again) has no job to find.
      if (exists === 1 && finished === 0 && p.dealId) return;
      missing.count++;
      if (missing.rows.length < sample) missing.rows.push(p.row);
    });
    pending = [];
  };
  for await (const r of batchOutcomes(redis, keys, db, batch, total)) {
    if (r.outcome !== 'pending') continue;
    pending.push({ row: r.row, dealId: r.dealId });
    if (pending.length >= CHUNK) await check();
  }
  await check();
  return missing;
}

/**
 * The one sentence that says what to do about them. `profile`: the path of the profile the batch
 * was loaded with, when Redis no longer holds it (emptied, restarted): the command needs it.
 */
export function describeMissing(batch: string, missing: MissingRows, profile?: string): string {
  const more = missing.count > missing.rows.length ? ', ...' : '';
  return (
    `${missing.count} row${missing.count === 1 ? '' : 's'} of batch ${batch} ha${missing.count === 1 ? 's' : 've'} neither a job that will run nor an outcome ` +
    `(row${missing.rows.length === 1 ? '' : 's'} ${missing.rows.join(', ')}${more}): their jobs were removed from outside the tool, failed without one, or went with Redis's data; ` +
    `realty-batch retry ${batch} --missing${profile !== undefined ? ` --profile ${profile || '<bank.json>'}` : ''} makes them again from the input`
  );
}
