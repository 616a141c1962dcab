/**
 * Outcomes, one per row per batch, and the ledger of deals that reached the
 * registry. A submitted outcome and its ledger entry are written in one MULTI.
 */
import type { RedisClient as Redis } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import { SUBMITTED_OUTCOMES, type LedgerEntry, type OutcomeRecord } from './types.js';

export interface OutcomeStore {
  /** `expiresAt` (ms since epoch): the batch's expiry, given to the outcomes hash too. */
  record(batch: string, record: OutcomeRecord, expiresAt?: number): Promise<void>;
  /** Writes only when the row has no outcome yet; true when written. */
  recordIfAbsent(batch: string, record: OutcomeRecord): Promise<boolean>;
  get(batch: string, row: number): Promise<OutcomeRecord | undefined>;
  /** Rows `from`..`to` (inclusive), `undefined` where a row has no outcome yet. */
  range(batch: string, from: number, to: number): Promise<Array<OutcomeRecord | undefined>>;
  count(batch: string): Promise<number>;
  ledger(dealId: string): Promise<LedgerEntry | undefined>;
}

export function createOutcomeStore(redis: Redis, keys: Keys): OutcomeStore {
  return {
    async record(batch, record, expiresAt) {
      const multi = redis.multi().hset(keys.outcomes(batch), String(record.row), JSON.stringify(record));
      if (expiresAt) multi.pexpireat(keys.outcomes(batch), expiresAt);
      if (SUBMITTED_OUTCOMES.has(record.outcome) && record.outcome !== 'already_submitted' && record.docflowId) {
        const entry: LedgerEntry = {
          dealId: record.dealId,
          docflowId: record.docflowId,
          outcome: record.outcome as LedgerEntry['outcome'],
          batch,
          row: record.row,
          at: record.finishedAt,
        };
        multi.hset(keys.ledger, record.dealId, JSON.stringify(entry));
      }
      await multi.exec();
    },
    async recordIfAbsent(batch, record) {
      return (await redis.hsetnx(keys.outcomes(batch), String(record.row), JSON.stringify(record))) === 1;
    },
    async get(batch, row) {
      const raw = await redis.hget(keys.outcomes(batch), String(row));
      return raw ? (JSON.parse(raw) as OutcomeRecord) : undefined;
    },
    async range(batch, from, to) {
      if (to < from) return [];
      const fields: string[] = [];
      for (let row = from; row <= to; row++) fields.push(String(row));
      const raw = await redis.hmget(keys.outcomes(batch), ...fields);
      return raw.map((r) => (r ? (JSON.parse(r) as OutcomeRecord) : undefined));
    },
    async count(batch) {
      return redis.hlen(keys.outcomes(batch));
    },
    async ledger(dealId) {
      const raw = await redis.hget(keys.ledger, dealId);
      return raw ? (JSON.parse(raw) as LedgerEntry) : undefined;
    },
  };
}
