/**
 * Outcomes, one per row per batch. An outcome, what it means for its deal's ledger
 * entry, the end of the row's checkpoint and the removal of the deal from its job are
 * one script: all or nothing, in one round trip. The outcomes hash lives at least as
 * long as its batch: each write reads the batch's expiry from Redis (never a cached
 * one), and never shortens it.
 */
import { DAY, DEFAULTS } from '../config.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { createScriptBatcher, luaScript, type ScriptRunner } from '../redis/lua.js';
import { LEDGER_LUA } from '../ledger/lua.js';
import { propertyArgs } from '../ledger/ledger.js';
import type { PropertyKey, SubmittedDeal, Via } from '../ledger/entry.js';
import type { OutcomeRecord } from './types.js';
import { decodeOutcome, encodeOutcome } from './outcome-codec.js';

export interface RecordOptions {
  /**
   * The job to strip of its personal data in the same script: its Redis key and its
   * data without the deal. Written only while the job exists, as BullMQ's own
   * updateData does (commands/updateData-1.lua).
   */
  job?: { key: string; data: string } | undefined;
  /**
   * The row's deal in the ledger. A docflow (queued, suspended) becomes the deal's;
   * any other outcome ends the row's claim (the deal goes back to its earlier docflow,
   * or to none), unless the try may still have made one (`keepClaim`: ERR_UNCERTAIN).
   */
  ledger?:
    | {
        bank: string;
        requestId?: string;
        resubmit: boolean;
        via?: Via;
        keepClaim?: boolean;
        /** The property the row is for: another property's docflow is never this row's instead (src/ledger/lua.ts). */
        property?: PropertyKey;
      }
    | undefined;
  /** Write only when the row has no outcome yet (the net under jobs BullMQ fails by itself). */
  ifAbsent?: boolean;
}

export type RecordResult =
  | { kind: 'written' }
  /** `ifAbsent`, and the row had an outcome: nothing written. */
  | { kind: 'exists' }
  /**
   * Not written: the ledger says the deal has a docflow (the feed found a lost answer,
   * or another row made it). The row records that instead: its own docflow, or
   * already_submitted.
   */
  | { kind: 'submitted'; own: boolean; deal: SubmittedDeal; via: Via }
  /** Written, but the deal already had another docflow: the gateway now holds two. */
  | { kind: 'conflict'; deal: Pick<SubmittedDeal, 'docflowId' | 'batch' | 'row'> };

export interface OutcomeStore {
  record(batch: string, record: OutcomeRecord, options?: RecordOptions): Promise<RecordResult>;
  /** Rows `from`..`to` (inclusive), `undefined` where a row has no outcome yet. */
  range(batch: string, from: number, to: number): Promise<Array<OutcomeRecord | undefined>>;
  count(batch: string): Promise<number>;
}

/**
 * KEYS: outcomes, ledger entry (or outcomes when none), checkpoints, job (or outcomes),
 * batch hash, row index. ARGV: row, the outcome (src/outcomes/outcome-codec.ts), ledger mode ('' | submitted | release | keep), docflowId,
 * outcome, at, via, job data ('' to leave the job be), ledger ms, batch, if absent ('1'),
 * resubmit ('1'), requestId (for an entry the deal does not have yet), the row's property: its
 * cadastral number and its address's digest ('' for none: propertyArgs).
 */
const RECORD = luaScript(`${LEDGER_LUA}
local now = now_ms()
if ARGV[11] == '1' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'exists'} end
local reply = {'written'}
if ARGV[3] ~= '' then
  -- What the modes read; the rest of the entry stays where it is.
  local v = redis.call('HMGET', KEYS[2], 'state', 'docflowId', 'batch', 'row', 'prev', 'outcome', 'at', 'via', 'cn', 'addr')
  local e = {state = v[1] or nil, docflowId = v[2] or nil, batch = v[3] or nil, row = v[4] or nil, prev = v[5] or nil, outcome = v[6] or nil, at = v[7] or nil, via = v[8] or nil, cn = v[9] or nil, addr = v[10] or nil}
  -- (A docflow the feed found with no row to hold it is the first asking row's.)
  local own = (e.batch == ARGV[10] and e.row == ARGV[1]) or (e.state == 'submitted' and e.batch == '')
  if ARGV[3] == 'submitted' then
    if e.state == 'submitted' and e.docflowId ~= ARGV[4] then
      reply = {'conflict', e.docflowId, e.batch, e.row}
    else
      if not e.state then
        local n = string.match(ARGV[13], '^%d+:(%d+):') or '0'
        redis.call('HSET', KEYS[2], 'n', n)
      end
      if e.batch ~= ARGV[10] or e.row ~= ARGV[1] then redis.call('HSET', KEYS[2], 'batch', ARGV[10], 'row', ARGV[1]) end
      submit(KEYS[2], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[9])
    end
  elseif e.state == 'submitted' and (own or (ARGV[3] == 'release' and ARGV[12] ~= '1' and same_property(e, ARGV[14], ARGV[15]))) then
    return {'submitted', own and '1' or '0', e.docflowId, e.outcome, e.batch, e.row, e.at or '', e.via or 'answer'}
  elseif ARGV[3] == 'release' and own and e.state == 'idle' then
    release(KEYS[2], e, ARGV[9])
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
extend(KEYS[1], KEYS[5], now)
redis.call('HDEL', KEYS[3], ARGV[1])
-- The outcome names the row's deal now: its row-index entry (about 60 bytes a row) goes.
if KEYS[6] then redis.call('HDEL', KEYS[6], ARGV[1]) end
if ARGV[8] ~= '' and redis.call('EXISTS', KEYS[4]) == 1 then redis.call('HSET', KEYS[4], 'data', ARGV[8]) end
return reply`);

const SUBMITTED_OUTCOMES = new Set(['queued', 'suspended']);

export interface OutcomeStoreOptions {
  /** Send the scripts of one turn of the event loop together (a worker with many jobs at once). */
  batched?: boolean;
  /** Runs the scripts (wins over `batched`): a worker's one batcher, shared with its ledger. */
  run?: ScriptRunner;
  /** How long a ledger entry is kept after its last change. */
  ledgerMs?: number;
}

/** What RECORD does to the deal's ledger entry: nothing, note its docflow, keep the claim, or release it. */
function ledgerMode(record: OutcomeRecord, ledger: RecordOptions['ledger']): '' | 'submitted' | 'keep' | 'release' {
  if (!ledger || record.outcome === 'already_submitted') return '';
  if (SUBMITTED_OUTCOMES.has(record.outcome) && record.docflowId) return 'submitted';
  // `keep`: the claim stays (the try may have made a docflow), unless the feed already found it.
  return ledger.keepClaim ? 'keep' : 'release';
}

/** RECORD's reply, read. */
function recordResult([kind, a, b, c, d, e, f, g]: string[]): RecordResult {
  if (kind === 'exists') return { kind };
  if (kind === 'conflict') return { kind, deal: { docflowId: a!, batch: b!, row: Number(c) } };
  if (kind === 'submitted') {
    return {
      kind,
      own: a === '1',
      deal: { docflowId: b!, outcome: c === 'suspended' ? 'suspended' : 'queued', batch: d!, row: Number(e), at: f! },
      via: g === 'feed' || g === 'operator' ? g : 'answer',
    };
  }
  return { kind: 'written' };
}

/** 400 days, unless REALTY_LEDGER_DAYS says otherwise. */
export const DEFAULT_LEDGER_MS = DEFAULTS.ledgerDays * DAY;

export function createOutcomeStore(redis: Redis, keys: Keys, options: OutcomeStoreOptions = {}): OutcomeStore {
  const run: ScriptRunner = options.run ?? (options.batched ? createScriptBatcher(redis) : (script, k, args) => script.run(redis, k, args));
  const ledgerMs = options.ledgerMs ?? DEFAULT_LEDGER_MS;
  return {
    async record(batch, record, options = {}) {
      const outcomes = keys.outcomes(batch);
      const { job, ledger } = options;
      const mode = ledgerMode(record, ledger);
      const reply = (await run(
        RECORD,
        [
          outcomes,
          ledger ? keys.ledgerEntry(ledger.bank, record.dealId) : outcomes,
          keys.checkpoints(batch),
          job?.key ?? outcomes,
          keys.batch(batch),
          keys.rows(batch),
        ],
        [
          record.row,
          encodeOutcome(record),
          mode,
          record.docflowId ?? '',
          record.outcome,
          record.finishedAt,
          ledger?.via ?? 'answer',
          job?.data ?? '',
          ledgerMs,
          batch,
          options.ifAbsent ? '1' : '',
          ledger?.resubmit ? '1' : '',
          ledger?.requestId ?? '',
          ...propertyArgs(ledger?.property),
        ],
      )) as string[];
      return recordResult(reply.map(String));
    },
    async range(batch, from, to) {
      if (to < from) return [];
      const fields: string[] = [];
      for (let row = from; row <= to; row++) fields.push(String(row));
      const raw = await redis.hmget(keys.outcomes(batch), ...fields);
      return raw.map((r, i) => (r ? decodeOutcome(r, from + i) : undefined));
    },
    async count(batch) {
      return redis.hlen(keys.outcomes(batch));
    },
  };
}
