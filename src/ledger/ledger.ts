/**
 * Claims on deals: the one place that decides whether a row may ask the gateway for a
 * docflow, atomically (one Lua script), so two rows, batches or hosts with one deal
 * send it once. A claim is written ahead of each try ("sending", with the time of
 * Redis' clock): a try whose answer never came (a timeout, a reset, a crash) leaves it
 * so, and before the deal is sent again the news feed must have passed that try and
 * not shown its requestId (src/feed/). Nothing here trusts the gateway to refuse a
 * repeated requestId.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { luaScript, type ScriptRunner } from '../redis/lua.js';
import type { OutcomeRecord } from '../outcomes/types.js';
import { decodeOutcome } from '../outcomes/outcome-codec.js';
import { CLAIM, claimVerdict, propertyArgs, type ClaimVerdict } from './claim.js';
import { parseLedgerEntry, submittedDeal, SUBMITTED_FIELDS, type LedgerEntry, type PropertyKey } from './entry.js';
import { LEDGER_LUA } from './lua.js';

export { propertyArgs, type ClaimVerdict };

export interface ClaimRequest {
  bank: string;
  dealId: string;
  batch: string;
  row: number;
  /** The row's job key: another row judges this one alive while it exists unfinished. */
  job: string;
  /** The batch was loaded with --resubmit: a deal submitted by another row is sent again, as n + 1. */
  resubmit: boolean;
  /** `send` claims and writes the try ahead; `check` only reconciles (the row has no tries left). */
  mode: 'send' | 'check';
  /** A cadastral number suggest just found: checkpointed in the same step. */
  cadastralNumber?: string;
  /**
   * The property the row is for (its cadastral number, the row's or the one suggest found, and
   * its address): kept in the entry it claims, and checked against the one a docflow was made for.
   */
  property?: PropertyKey;
  /** This run's claim, unique: run again (a lost reply) it is the same claim; only it may settle it. */
  nonce: string;
  /**
   * The filter of the deal's persons' names (src/privacy/name-filter.ts), kept in the entry: the
   * news feed masks a registry error about the deal with it, days after the deal's data is gone.
   */
  personFilter?: string;
}

export interface LedgerOptions {
  /** The gateway's per-request timeout: a try that died without an end is over after it. */
  timeoutMs: number;
  /** How long after a try's end its docflow may take to show in the feed (`--feed-lag-ms`). */
  feedLagMs: number;
  /** How long a ledger entry is kept after its last change (REALTY_LEDGER_DAYS). */
  ledgerMs: number;
  /** Runs the scripts (a worker sends those of one event-loop turn together). */
  run?: ScriptRunner;
}

/** What a job learns before it asks suggest: its outcome, its checkpoint, its deal's entry. */
export interface Lookup {
  earlier: OutcomeRecord | undefined;
  cadastralNumber: string | undefined;
  entry: LedgerEntry | undefined;
}

export interface Ledger {
  claim(request: ClaimRequest): Promise<ClaimVerdict>;
  /**
   * After a try that made no docflow (`definite`: an answer that says so) or may have
   * (`uncertain`: no answer, or one that cannot be read): the claim stays the row's.
   */
  settle(
    bank: string,
    dealId: string,
    requestId: string,
    batch: string,
    row: number,
    nonce: string,
    how: 'definite' | 'uncertain',
  ): Promise<void>;
  lookup(bank: string, dealId: string, batch: string, row: number): Promise<Lookup>;
  /** Keeps the cadastral number suggest found until the row's outcome (a job put back before its claim). */
  checkpoint(batch: string, row: number, cadastralNumber: string): Promise<void>;
  read(bank: string, dealId: string): Promise<LedgerEntry | undefined>;
  /**
   * An operator's answer for a try the feed could not tell about (`realty-batch ledger
   * --resolve`): the gateway has this docflow for it (the row holding the claim gets it in
   * place of ERR_UNCERTAIN), or it has none (the deal may be sent again). `not-waiting` when the
   * deal has no try waiting for an answer; `in-flight` while its try may still be answered (it
   * began less than its time-out ago and did not end): nothing is changed then.
   */
  resolve(
    bank: string,
    dealId: string,
    answer: { docflowId: string; outcome: 'queued' | 'suspended' } | 'none',
  ): Promise<'resolved' | 'not-waiting' | 'in-flight'>;
}

/**
 * KEYS: entry. ARGV: requestId, batch, row, 'definite' | 'uncertain', ledgerMs, nonce, bank, dealId. Only
 * the run that made the claim settles it: a run whose job was taken over (it lost its
 * lock, then came back) can never mark another run's try as done.
 */
const SETTLE = luaScript(`${LEDGER_LUA}
local e = entry_of(KEYS[1])
if e.state ~= 'sending' or rid_of(e, ARGV[7], ARGV[8]) ~= ARGV[1] or e.batch ~= ARGV[2] or e.row ~= ARGV[3] or e.nonce ~= ARGV[6] then return 0 end
if ARGV[4] == 'definite' then
  redis.call('HSET', KEYS[1], 'state', 'idle')
  forget_try(KEYS[1])
else
  redis.call('HSET', KEYS[1], 'endAt', now_ms())
end
live(KEYS[1], ARGV[5])
return 1`);

/**
 * KEYS: entry. ARGV: docflowId ('' for none), outcome, ISO time, ledger ms, key tag. Only a
 * deal whose try is waiting for an answer (sending, or idle) can be resolved by hand, and not
 * while that try may still be answered (-1). 1 when resolved, 0 when nothing waits.
 */
const RESOLVE = luaScript(`${LEDGER_LUA}
local e = entry_of(KEYS[1])
if e.state ~= 'sending' and e.state ~= 'idle' then return 0 end
if e.state == 'sending' and not e.endAt and now_ms() < tonumber(e.tryAt or '0') + tonumber(e.timeoutMs or '0') then return -1 end
if ARGV[1] == '' then
  redis.call('HSET', KEYS[1], 'state', 'idle')
  forget_try(KEYS[1])
  return 1
end
submit(KEYS[1], ARGV[1], ARGV[2], ARGV[3], 'operator', ARGV[4])
if e.batch ~= '' then
  settle_uncertain(ARGV[5] .. ':batch:' .. e.batch .. ':outcomes', e.row, ARGV[2], ARGV[1],
    'its docflow was named by an operator (' .. ARGV[3] .. ') after the gateway was checked')
end
return 1`);

/** KEYS: checkpoints, batch hash. ARGV: row, cadastral number. */
const CHECKPOINT = luaScript(`${LEDGER_LUA}
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
extend(KEYS[1], KEYS[2], now_ms())
return 0`);

/** KEYS: outcomes, checkpoints, entry. ARGV: row. */
const LOOKUP = luaScript(`
return {redis.call('HGET', KEYS[1], ARGV[1]) or '', redis.call('HGET', KEYS[2], ARGV[1]) or '', redis.call('HGETALL', KEYS[3])}`);

/** KEYS: entries. Each entry's SUBMITTED_FIELDS, flat. */
const SUBMITTED = luaScript(`
local out = {}
for i = 1, #KEYS do
  local v = redis.call('HMGET', KEYS[i], ${SUBMITTED_FIELDS.map((f) => `'${f}'`).join(', ')})
  for j = 1, #v do out[#out + 1] = v[j] or '' end
end
return out`);

const pairs = (flat: string[]): Record<string, string> => {
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return hash;
};

export function createLedger(redis: Redis, keys: Keys, options: LedgerOptions): Ledger {
  const run: ScriptRunner = options.run ?? ((script, k, args) => script.run(redis, k, args));
  const tag = keys.bullPrefix;
  return {
    async claim(r) {
      const reply = (await run(
        CLAIM,
        [keys.ledgerEntry(r.bank, r.dealId), keys.feed, keys.outcomes(r.batch), keys.checkpoints(r.batch), keys.batch(r.batch)],
        [
          r.batch,
          r.row,
          r.job,
          r.dealId,
          r.bank,
          r.resubmit ? '1' : '',
          options.timeoutMs,
          options.feedLagMs,
          options.ledgerMs,
          r.cadastralNumber ?? '',
          r.mode,
          tag,
          r.nonce,
          ...propertyArgs(r.property),
          r.personFilter ?? '',
        ],
      )) as Array<string | number>;
      return claimVerdict(reply.map(String), r.row);
    },
    async settle(bank, dealId, requestId, batch, row, nonce, how) {
      await run(SETTLE, [keys.ledgerEntry(bank, dealId)], [requestId, batch, row, how, options.ledgerMs, nonce, bank, dealId]);
    },
    async lookup(bank, dealId, batch, row) {
      const [earlier, checkpoint, flat] = (await run(
        LOOKUP,
        [keys.outcomes(batch), keys.checkpoints(batch), keys.ledgerEntry(bank, dealId)],
        [row],
      )) as [string, string, string[]];
      return {
        earlier: earlier ? decodeOutcome(earlier, row) : undefined,
        cadastralNumber: checkpoint || undefined,
        entry: parseLedgerEntry(pairs(flat), bank, dealId),
      };
    },
    async checkpoint(batch, row, cadastralNumber) {
      await run(CHECKPOINT, [keys.checkpoints(batch), keys.batch(batch)], [row, cadastralNumber]);
    },
    async read(bank, dealId) {
      return parseLedgerEntry(await redis.hgetall(keys.ledgerEntry(bank, dealId)), bank, dealId);
    },
    async resolve(bank, dealId, answer) {
      const [docflowId, outcome] = answer === 'none' ? ['', ''] : [answer.docflowId, answer.outcome];
      const done = Number(
        await RESOLVE.run(redis, [keys.ledgerEntry(bank, dealId)], [docflowId, outcome, new Date().toISOString(), options.ledgerMs, tag]),
      );
      return done === 1 ? 'resolved' : done === -1 ? 'in-flight' : 'not-waiting';
    },
  };
}

/** For the load: each deal's docflow when it has one (one command for a whole chunk). */
export async function readSubmittedDeals(
  redis: Redis,
  keys: Keys,
  bank: string,
  dealIds: readonly string[],
): Promise<Array<ReturnType<typeof submittedDeal>>> {
  if (dealIds.length === 0) return [];
  const flat = (await SUBMITTED.run(
    redis,
    dealIds.map((d) => keys.ledgerEntry(bank, d)),
    [],
  )) as string[];
  const n = SUBMITTED_FIELDS.length;
  return dealIds.map((_, i) => submittedDeal(flat.slice(i * n, i * n + n).map((v) => v || null)));
}
