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
import {
  parseLedgerEntry,
  propertyOf,
  submittedDeal,
  SUBMITTED_FIELDS,
  type LedgerEntry,
  type PropertyKey,
  type SubmittedDeal,
  type Via,
} from './entry.js';
import { storedProperty } from '../input/property-key.js';
import { LEDGER_LUA } from './lua.js';
import { decodeOutcome } from '../outcomes/outcome-codec.js';

/** What a row may do about its deal now. */
export type ClaimVerdict =
  /** The row has its outcome already (its job ran again). */
  | { kind: 'done'; record: OutcomeRecord }
  /** The feed has no cursor yet: start it (`ensureFeed`), then claim again. */
  | { kind: 'nofeed' }
  /** This row made the deal's docflow before (its answer, or the feed, said so). */
  | { kind: 'own'; docflowId: string; outcome: 'queued' | 'suspended'; at: string; via: Via }
  /**
   * Another row or batch made it: nothing is sent. `stands`: the row asked to resubmit, and the
   * deal's docflow was not refused by the registry (its state as the feed last showed it, '' for
   * none yet): a deal is sent again only once the registry refused it.
   */
  | { kind: 'elsewhere'; deal: SubmittedDeal; stands?: string }
  /**
   * Another row made the deal's docflow for another property (another cadastral number):
   * the dealId is another deal's, nothing is sent, --resubmit or not.
   */
  | { kind: 'conflict'; deal: SubmittedDeal; property: PropertyKey }
  /** Another row holds the deal and is still alive: look again later. */
  | { kind: 'wait'; batch: string; row: number }
  /**
   * A try of the deal may have reached the gateway: wait until the feed has passed
   * `due` (ms of Redis' clock, `now` is its time now). `resolvable` is false when the
   * try is older than the feed's cursor: the feed can never tell.
   */
  | { kind: 'reconcile'; due: number; now: number; resolvable: boolean }
  /** (mode `check`) the feed passed the try and did not show it: it made nothing. */
  | { kind: 'notfound' }
  /** Go: the try is written ahead; send with this requestId. */
  | { kind: 'send'; requestId: string };

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
 * KEYS: entry, feed, outcomes, checkpoints, batch hash (the row's own).
 * ARGV: batch, row, job, dealId, bank, resubmit ('1'), timeoutMs, feedLagMs, ledgerMs,
 * cadastral number ('' for none), mode, key tag, nonce (this run's claim), the row's property:
 * its cadastral number and its address's digest ('' for none: propertyArgs), the persons' name
 * filter ('' for none).
 */
const CLAIM = luaScript(`${LEDGER_LUA}
local now = now_ms()
local earlier = redis.call('HGET', KEYS[3], ARGV[2])
if earlier then
  local o = outcome_of(earlier)
  if o == 'queued' or o == 'suspended' or o == 'already_submitted' then return {'done', earlier} end
end
if ARGV[10] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[10])
  extend(KEYS[4], KEYS[5], now)
end
local since = tonumber(redis.call('HGET', KEYS[2], 'since') or '')
if not since then return {'nofeed'} end
local e = entry_of(KEYS[1])
local own = e.batch == ARGV[1] and e.row == ARGV[2]
-- This very claim, run again (its answer lost with a connection): nothing was sent yet.
if own and e.state == 'sending' and e.nonce == ARGV[13] and not e.endAt then return {'send', rid_of(e, ARGV[5], ARGV[4])} end
-- A docflow the feed found for the deal with no row to hold it: the first row to ask takes it.
if e.state == 'submitted' and e.batch == '' then
  redis.call('HSET', KEYS[1], 'batch', ARGV[1], 'row', ARGV[2])
  if ARGV[16] ~= '' then redis.call('HSET', KEYS[1], 'pf', ARGV[16]) end
  own = true
end
local function claim(n, prev)
  local rid = ARGV[5] .. ':' .. n .. ':' .. ARGV[4]
  if e.state then
    -- A resubmission: the docflow it would replace keeps its state in its own hash.
    park_state(e, ARGV[12], ARGV[9])
    redis.call('DEL', KEYS[1])
  end
  redis.call('HSET', KEYS[1], 'n', n, 'state', 'sending', 'batch', ARGV[1], 'row', ARGV[2], 'job', ARGV[3],
    'tryAt', now, 'timeoutMs', ARGV[7], 'lagMs', ARGV[8], 'nonce', ARGV[13])
  if ARGV[14] ~= '' then redis.call('HSET', KEYS[1], 'cn', ARGV[14]) end
  if ARGV[15] ~= '' then redis.call('HSET', KEYS[1], 'addr', ARGV[15]) end
  if ARGV[16] ~= '' then redis.call('HSET', KEYS[1], 'pf', ARGV[16]) end
  if prev then redis.call('HSET', KEYS[1], 'prev', prev) end
  -- A new key has no life to keep; an entry made again keeps the longer of the two.
  if e.state then live(KEYS[1], ARGV[9]) else redis.call('PEXPIRE', KEYS[1], ARGV[9]) end
  return {'send', rid}
end
local function elsewhere(x) return {'elsewhere', x.docflowId, x.outcome, x.batch, x.row, x.at or ''} end
local function conflict(x) return {'conflict', x.docflowId, x.outcome, x.batch, x.row, x.at or '', x.cn or '', x.addr or ''} end
-- The holder runs still: its job exists unfinished and its row has no outcome.
local function alive(x)
  if not x.job or redis.call('EXISTS', x.job) == 0 then return false end
  if redis.call('HEXISTS', x.job, 'finishedOn') == 1 then return false end
  return redis.call('HEXISTS', ARGV[12] .. ':batch:' .. x.batch .. ':outcomes', x.row) == 0
end
if not e.state then
  if ARGV[11] == 'check' then return {'notfound'} end
  return claim(0, nil)
end
if e.state == 'submitted' then
  -- The dealId's docflow is another property's: this row is another deal, --resubmit or not, even
  -- on the row that made it (its batch expired and its id was loaded again with another file).
  if other_property(e, ARGV[14]) then return conflict(e) end
  if own then return {'own', e.docflowId, e.outcome, e.at or '', e.via or 'answer'} end
  if ARGV[6] ~= '1' or ARGV[11] == 'check' then return elsewhere(e) end
  -- --resubmit makes try n + 1 only of a deal the registry refused: a docflow that is queued, sent,
  -- waits for signatures or a payment, or completed stands (the feed shows where it is).
  if e.st ~= 'error' then
    local r = elsewhere(e)
    r[#r + 1] = e.st or ''
    return r
  end
  local prev = cjson.encode({n = tonumber(e.n), docflowId = e.docflowId, outcome = e.outcome,
    batch = e.batch, row = e.row, at = e.at, via = e.via, cn = e.cn, addr = e.addr, pf = e.pf})
  return claim(tonumber(e.n) + 1, prev)
end
-- (check) Another row took the claim over: this row's last try was judged before it did.
if ARGV[11] == 'check' and not own then return {'notfound'} end
if not own and alive(e) then return {'wait', e.batch, e.row} end
if e.state == 'sending' then
  local tryAt = tonumber(e.tryAt)
  -- The lag the claiming worker allowed, never a shorter one of whoever asks now.
  local lag = math.max(tonumber(e.lagMs or '0'), tonumber(ARGV[8]))
  local due = (tonumber(e.endAt) or (tryAt + tonumber(e.timeoutMs))) + lag
  local covered = tonumber(redis.call('HGET', KEYS[2], 'coveredAt') or '0')
  if tryAt < since then return {'reconcile', due, now, 0} end
  if covered < due then return {'reconcile', due, now, 1} end
  -- The feed passed the try (and its lag) without its requestId: it made nothing.
  redis.call('HSET', KEYS[1], 'state', 'idle')
  forget_try(KEYS[1])
end
if ARGV[11] == 'check' then return {'notfound'} end
-- A resubmission that made nothing yet: the docflow it would replace is the one that counts.
if not own and e.prev then
  local p = cjson.decode(e.prev)
  if other_property(p, ARGV[14]) then return conflict(p) end
end
if own or ARGV[6] == '1' or not e.prev then return claim(tonumber(e.n), e.prev) end
-- A resubmission that made nothing, met by a row that does not resubmit: the earlier docflow stands.
release(KEYS[1], e, ARGV[9])
return elsewhere(entry_of(KEYS[1]))`);

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

/** A row's property as a script's two arguments, as the ledger keeps it (storedProperty); '' for what it has not. */
export function propertyArgs(property: PropertyKey | undefined): [string, string] {
  const stored = property && storedProperty(property);
  return [stored?.cadastralNumber ?? '', stored?.address ?? ''];
}

/** CLAIM's reply, read. */
function claimVerdict([kind, a, b, c, d, e, f, g]: string[], row: number): ClaimVerdict {
  const deal = (): SubmittedDeal => ({
    docflowId: a!,
    outcome: b === 'suspended' ? 'suspended' : 'queued',
    batch: c!,
    row: Number(d),
    at: e ?? '',
  });
  switch (kind) {
    case 'done':
      return { kind, record: decodeOutcome(a!, row) };
    case 'own':
      return {
        kind,
        docflowId: a!,
        outcome: b === 'suspended' ? 'suspended' : 'queued',
        at: c!,
        via: d === 'feed' || d === 'operator' ? d : 'answer',
      };
    case 'elsewhere':
      return f === undefined ? { kind, deal: deal() } : { kind, deal: deal(), stands: f };
    case 'conflict':
      return { kind, deal: deal(), property: propertyOf(f, g) ?? {} };
    case 'wait':
      return { kind, batch: a!, row: Number(b) };
    case 'reconcile':
      return { kind, due: Number(a), now: Number(b), resolvable: c === '1' };
    case 'send':
      return { kind, requestId: a! };
    case 'nofeed':
    case 'notfound':
      return { kind };
    default:
      throw new Error(`the ledger's claim answered ${String(kind)}`);
  }
}

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
