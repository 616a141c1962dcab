/**
 * A batch's outcomes in input order, read in pages from the database: what the results file,
 * `status` and the missing-rows check walk through without holding a million rows. A row with
 * no outcome yet is `pending`, its dealId from the batch's row index in Redis (empty once Redis
 * lost it: the input names it).
 */
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { batchBank, readDocflowStatuses, rowDocflows } from '../ledger/docflows.js';
import { createOutcomeStore } from './store.js';
import { SUBMITTED_OUTCOMES, type DocflowStatus, type OutcomeRecord } from '../domain/outcome.js';

const PAGE = 1000;

export interface BatchOutcomesOptions {
  /** Join each submitted row's docflow state, as the news feed last showed it (the results file's state columns). */
  states?: boolean;
}

/**
 * A submitted row's state columns. Before the feed shows its docflow, a row that made it
 * stands where the gateway's answer put it (queued, or suspended on the signatures) since its outcome;
 * a row whose deal another row made waits for the feed.
 */
export function withStatus(record: OutcomeRecord, status: DocflowStatus | undefined): OutcomeRecord {
  if (!SUBMITTED_OUTCOMES.has(record.outcome) || !record.docflowId) return record;
  if (!status) {
    if (record.outcome === 'already_submitted') return record;
    // A 201 docflow waits for the applicants' signatures (docs/gateway.md): so it stands until the feed says more.
    const stands: OutcomeRecord = { ...record, state: record.outcome, stateAt: record.finishedAt };
    if (record.outcome === 'suspended') stands.requirement = 'signature';
    return stands;
  }
  const joined: OutcomeRecord = { ...record, state: status.state, stateAt: status.stateAt };
  if (status.requirement) joined.requirement = status.requirement;
  if (status.paymentUin) joined.paymentUin = status.paymentUin;
  if (status.paymentAmount) joined.paymentAmount = status.paymentAmount;
  if (status.registryError) joined.registryError = status.registryError;
  return joined;
}

/** Every row's outcome, in input order, `pending` where there is none yet. */
export async function* batchOutcomes(
  redis: Redis,
  keys: Keys,
  db: Database,
  batch: string,
  total: number,
  options: BatchOutcomesOptions = {},
): AsyncGenerator<OutcomeRecord> {
  const store = createOutcomeStore(redis, keys, { db });
  const bank = options.states ? await batchBank(db, batch) : '';
  for (let from = 1; from <= total; from += PAGE) {
    const to = Math.min(total, from + PAGE - 1);
    const page = await store.range(batch, from, to);
    const missing = page.flatMap((r, i) => (r ? [] : [from + i]));
    const dealIds = missing.length > 0 ? await redis.hmget(keys.rows(batch), ...missing.map(String)) : [];
    const statuses = options.states ? await readDocflowStatuses(db, rowDocflows(bank, page)) : [];
    let m = 0;
    for (let i = 0; i < page.length; i++) {
      const record = page[i];
      if (record) yield options.states ? withStatus(record, statuses[i]) : record;
      else yield { row: from + i, dealId: dealIds[m++] ?? '', outcome: 'pending', attempts: 0, finishedAt: '' };
    }
  }
}
