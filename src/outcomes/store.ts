/**
 * Outcomes, one per row per batch, the ledger of deals that reached the
 * registry, and each unfinished row's checkpoint. An outcome, its ledger entry,
 * the end of its checkpoint and the removal of the deal from its job are one
 * script: all or nothing, in one round trip.
 */
import type { RedisClient as Redis } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import { createScriptBatcher, luaScript, type ScriptRunner } from '../queue/lua.js';
import { SUBMITTED_OUTCOMES, type LedgerEntry, type OutcomeRecord } from './types.js';

export interface RecordOptions {
  /** The batch's expiry (ms since epoch), given to the outcomes hash too (it may be new). */
  expiresAt?: number | undefined;
  /**
   * The job to strip of its personal data in the same script: its Redis key and its
   * data without the deal. Written only while the job exists, as BullMQ's own
   * updateData does (commands/updateData-1.lua).
   */
  job?: { key: string; data: string } | undefined;
}

/** What a job needs to know before it sends anything. */
export interface Lookup {
  /** The row's outcome, when it has one (a job run again after a crash or a stall). */
  earlier: OutcomeRecord | undefined;
  /** Where the deal went when it reached the registry before. */
  ledger: LedgerEntry | undefined;
  /** The cadastral number suggest found on an earlier try of the row. */
  cadastralNumber: string | undefined;
}

export interface OutcomeStore {
  /** The row's outcome, its ledger entry when submitted, and the end of its checkpoint: all or nothing. */
  record(batch: string, record: OutcomeRecord, options?: RecordOptions): Promise<void>;
  /** The three reads in one command; the ledger is not read when `withLedger` is false. */
  lookup(batch: string, row: number, dealId: string, withLedger: boolean): Promise<Lookup>;
  /** Keeps the cadastral number of a row until its outcome: a retry does not ask suggest again. */
  checkpoint(batch: string, row: number, cadastralNumber: string, expiresAt?: number): Promise<void>;
  /**
   * The lookup and the checkpoint in one round trip, for a job's first run (suggest
   * asked first): reads what `lookup` reads, and writes the checkpoint only when the row
   * has no outcome, no checkpoint and (when `withLedger`) its deal no ledger entry, the
   * case of nearly every row. `written` says whether it did; if not, the caller goes on
   * as after `lookup`.
   */
  lookupAndCheckpoint(batch: string, row: number, dealId: string, withLedger: boolean, cadastralNumber: string, expiresAt?: number): Promise<Lookup & { written: boolean }>;
  /** Writes only when the row has no outcome yet; true when written. */
  recordIfAbsent(batch: string, record: OutcomeRecord): Promise<boolean>;
  /** Rows `from`..`to` (inclusive), `undefined` where a row has no outcome yet. */
  range(batch: string, from: number, to: number): Promise<Array<OutcomeRecord | undefined>>;
  count(batch: string): Promise<number>;
}

/**
 * KEYS: outcomes hash, ledger hash, checkpoints hash, job hash (or the outcomes hash
 * again when no job). ARGV: row, outcome JSON, expiry ms ('' for none), dealId (''
 * for no ledger entry), ledger entry JSON, job data JSON ('' to leave the job be).
 */
const RECORD = luaScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], ARGV[4], ARGV[5]) end
redis.call('HDEL', KEYS[3], ARGV[1])
if ARGV[6] ~= '' and redis.call('EXISTS', KEYS[4]) == 1 then redis.call('HSET', KEYS[4], 'data', ARGV[6]) end
return 0`);

/** KEYS: checkpoints hash. ARGV: row, cadastral number, expiry ms ('' for none). */
const CHECKPOINT = luaScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 0`);

/**
 * KEYS: outcomes, ledger, checkpoints. ARGV: row, dealId ('' not to read the ledger),
 * cadastral number ('' to write nothing), expiry ms ('' for none). Three reads, one
 * command; then, given a cadastral number and when all three found nothing, the
 * checkpoint. The fourth answer is 1 when it was written.
 */
const LOOKUP = luaScript(`
local ledger = false
if ARGV[2] ~= '' then ledger = redis.call('HGET', KEYS[2], ARGV[2]) end
local earlier = redis.call('HGET', KEYS[1], ARGV[1])
local checkpoint = redis.call('HGET', KEYS[3], ARGV[1])
if earlier or ledger or checkpoint or ARGV[3] == '' then return {earlier or '', ledger or '', checkpoint or '', 0} end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
if ARGV[4] ~= '' then redis.call('PEXPIREAT', KEYS[3], ARGV[4]) end
return {'', '', '', 1}`);

const parse = <T>(raw: string | null | undefined): T | undefined => (raw ? (JSON.parse(raw) as T) : undefined);

/** The row's outcome, its deal's ledger entry and its checkpoint, '' for none; 1 when the checkpoint was written. */
type LookupReply = [string, string, string, number];

const looked = ([earlier, ledger, cadastralNumber, written]: LookupReply): Lookup & { written: boolean } => ({
  earlier: parse<OutcomeRecord>(earlier),
  ledger: parse<LedgerEntry>(ledger),
  cadastralNumber: cadastralNumber || undefined,
  written: written === 1,
});

export interface OutcomeStoreOptions {
  /** Send the scripts of one turn of the event loop together (a worker with many jobs at once). */
  batched?: boolean;
}

export function createOutcomeStore(redis: Redis, keys: Keys, options: OutcomeStoreOptions = {}): OutcomeStore {
  const run: ScriptRunner = options.batched ? createScriptBatcher(redis) : (script, k, args) => script.run(redis, k, args);
  const lookUp = async (batch: string, row: number, dealId: string, withLedger: boolean, cadastralNumber: string, expiresAt?: number): Promise<Lookup & { written: boolean }> =>
    looked((await run(LOOKUP, [keys.outcomes(batch), keys.ledger, keys.checkpoints(batch)], [row, withLedger ? dealId : '', cadastralNumber, expiresAt ?? ''])) as LookupReply);
  return {
    async record(batch, record, options = {}) {
      const outcomes = keys.outcomes(batch);
      let dealId = '';
      let entry = '';
      if (SUBMITTED_OUTCOMES.has(record.outcome) && record.outcome !== 'already_submitted' && record.docflowId) {
        const ledger: LedgerEntry = {
          dealId: record.dealId,
          docflowId: record.docflowId,
          outcome: record.outcome as LedgerEntry['outcome'],
          batch,
          row: record.row,
          at: record.finishedAt,
        };
        dealId = record.dealId;
        entry = JSON.stringify(ledger);
      }
      const { expiresAt, job } = options;
      await run(
        RECORD,
        [outcomes, keys.ledger, keys.checkpoints(batch), job?.key ?? outcomes],
        [record.row, JSON.stringify(record), expiresAt ?? '', dealId, entry, job?.data ?? ''],
      );
    },
    // No cadastral number: the script only reads.
    lookup: (batch, row, dealId, withLedger) => lookUp(batch, row, dealId, withLedger, '', undefined),
    lookupAndCheckpoint: lookUp,
    async checkpoint(batch, row, cadastralNumber, expiresAt) {
      await run(CHECKPOINT, [keys.checkpoints(batch)], [row, cadastralNumber, expiresAt ?? '']);
    },
    async recordIfAbsent(batch, record) {
      return (await redis.hsetnx(keys.outcomes(batch), String(record.row), JSON.stringify(record))) === 1;
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
  };
}
