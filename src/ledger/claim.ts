/**
 * The ledger's claim, one Lua script: the one place that decides whether a row may ask the
 * gateway for a docflow (ledger.ts runs it), and its reply read as a verdict.
 */
import { storedProperty } from '../input/property-key.js';
import { decodeOutcome } from '../outcomes/outcome-codec.js';
import type { OutcomeRecord } from '../outcomes/types.js';
import { luaScript } from '../redis/lua.js';
import { propertyOf, type PropertyKey, type SubmittedDeal, type Via } from './entry.js';
import { LEDGER_LUA } from './lua.js';

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

/**
 * KEYS: entry, feed, outcomes, checkpoints, batch hash (the row's own).
 * ARGV: batch, row, job, dealId, bank, resubmit ('1'), timeoutMs, feedLagMs, ledgerMs,
 * cadastral number ('' for none), mode, key tag, nonce (this run's claim), the row's property:
 * its cadastral number and its address's digest ('' for none: propertyArgs), the persons' name
 * filter ('' for none).
 */
export const CLAIM = luaScript(`${LEDGER_LUA}
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

/** A row's property as a script's two arguments, as the ledger keeps it (storedProperty); '' for what it has not. */
export function propertyArgs(property: PropertyKey | undefined): [string, string] {
  const stored = property && storedProperty(property);
  return [stored?.cadastralNumber ?? '', stored?.address ?? ''];
}

/** CLAIM's reply, read. */
export function claimVerdict([kind, a, b, c, d, e, f, g]: string[], row: number): ClaimVerdict {
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
