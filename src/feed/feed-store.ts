/**
 * The news feed's state in Redis, one hash per deployment (`{prefix}:feed`):
 * - `cursor`: the token the follower reads after;
 * - `since`: when the cursor was first taken (ms of Redis' clock); a try older than it
 *   can never be reconciled from the feed (its docflow may have come before the cursor);
 * - `coveredAt`: every docflow the gateway created before `coveredAt` minus its feed lag
 *   is in the ledger: a read that began at that time came back with less than a full page
 *   (nothing, or fewer items than the largest page the feed ever gave, `pageMax`), so the
 *   feed held nothing more after the cursor then. A busy feed (every page some items)
 *   still moves it on; a backlog (full pages) does not, until it is read;
 * - counters: items read, resolved (a docflow of ours the ledger did not have yet: a lost
 *   answer found), unknown (not a deal of ours, or known already), conflicts (a requestId
 *   with two docflows).
 * Every time is Redis' own (TIME inside a script on this key), so the hosts' clocks
 * never meet.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { luaScript } from '../redis/lua.js';
import type { RealtyClient } from '../realty/client.js';
import type { NewsItem } from '../realty/types.js';
import { LEDGER_FILTER_FIELD, LEDGER_LUA } from '../ledger/lua.js';
import { parseRequestId } from '../ledger/entry.js';
import { filterMatcher, type NameMatcher } from '../privacy/name-filter.js';
import { hasRegistryError, statusOfItem } from './item-status.js';

/** KEYS: feed. ARGV: the feed's newest token. Takes the cursor unless there is one. */
const INIT = luaScript(`${LEDGER_LUA}
if redis.call('HEXISTS', KEYS[1], 'since') == 1 then return 0 end
local now = now_ms()
redis.call('HSET', KEYS[1], 'since', now, 'cursor', ARGV[1], 'coveredAt', now)
return 1`);

/**
 * KEYS: feed (it routes the call to the node that keeps the feed). Where a read begins, in
 * one round trip: the cursor (false without one), Redis' clock (ms) and the largest page seen.
 */
const BEGIN = luaScript(`${LEDGER_LUA}
local v = redis.call('HMGET', KEYS[1], 'cursor', 'pageMax')
return {v[1], tostring(now_ms()), tonumber(v[2] or '0')}`);

/**
 * KEYS: feed, lock, docflow states. ARGV: lock token, the cursor read after, the new cursor,
 * the time the read began, the key tag, ledger ms, the number of items, then the items packed
 * in one argument (a JSON array of arrays of strings, `itemFields`): per item, requestId,
 * docflowId, state, date, requirement, payment uin, payment amount, payer (masked),
 * registry error (masked), result files.
 * Stored only while the lock is this follower's and the cursor has not moved: a follower
 * that lost its lock (a long pause) can never move the cursor back. The page size is the
 * gateway's own (it is not asked for one): a page as large as the largest seen may have
 * been cut short, any smaller one was all the feed had.
 *
 * A docflow of ours (the one its deal's ledger entry names, or found for a deal of ours here)
 * gets its state from every item, in the feed's order, in that entry (src/ledger/lua.ts); one
 * followed in a hash of its own (`{prefix}:docflow:<id>`: replaced by a resubmission, or followed
 * by an earlier version) keeps it there, and an entry's docflow moves its state from there into
 * the entry at its next item. An item is matched to its deal by its requestId, which every item
 * carries (docs/gateway.md, "The news feed"): an item without one is followed only when its
 * docflow keeps its state in its own hash; others are counted `unknown`, never guessed at. Others'
 * docflows are counted and ignored. Returns the counts, the
 * conflicts, whether the page was complete, and the job keys of the rows it resolved that have
 * no outcome yet.
 */
const STORE = luaScript(`${LEDGER_LUA}
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return {'lost'} end
if redis.call('HGET', KEYS[1], 'cursor') ~= ARGV[2] then return {'moved'} end
local resolved, unknown, conflicts, followed = 0, 0, {}, 0
-- The jobs of rows still waiting for the feed to find their try: the follower wakes them.
local wake = {}
local optional = {'req', 'uin', 'amt', 'payer', 'rerr', 'files'}
-- The gauge's moves, summed per state and written once at the end (a page moves a few states).
local gauge = {}
-- What an item's docflow holds now, as each HMGET below reads it: st, req, reqAt, uin, amt,
-- payer, rerr, files, rid (a docflow hash of an earlier version kept its requestId).
local HELD = {'st', 'req', 'reqAt', 'uin', 'amt', 'payer', 'rerr', 'files', 'rid'}
-- Where each optional field is in HELD.
local held = {2, 4, 5, 6, 7, 8}
-- The docflow's state as this item shows it, in tkey (its entry, time field 'sat', or its own
-- hash, 'at'); v: what tkey (or the hash it moves from) holds now. One HSET of what the item
-- has, and an HDEL only of fields the key holds that the item has not.
local function follow(tkey, in_entry, state, date, f, v)
  local old, old_req = v[1] or nil, v[2] or nil
  if old ~= state then
    if old then gauge[old] = (gauge[old] or 0) - 1 end
    gauge[state] = (gauge[state] or 0) + 1
  end
  local set, del = {'st', state, in_entry and 'sat' or 'at', date}, {}
  -- (A docflow hash of an earlier version loses its unread 'rid' at its next item.)
  if v[9] and not in_entry then del[1] = 'rid' end
  for k = 1, #optional do
    local value = f[4 + k]
    if value ~= '' then set[#set + 1] = optional[k]; set[#set + 1] = value
    elseif v[held[k]] then del[#del + 1] = optional[k] end
  end
  local req = f[5]
  if req == '' then
    if v[3] then del[#del + 1] = 'reqAt' end
  elseif req ~= old_req or not v[3] then set[#set + 1] = 'reqAt'; set[#set + 1] = date end
  redis.call('HSET', tkey, unpack(set))
  if #del > 0 then redis.call('HDEL', tkey, unpack(del)) end
  -- A docflow's own hash lives the ledger's time after its last change. An entry keeps the life its
  -- claim and its docflow's creation gave it (400 days): a state a few days later need not push it
  -- on, and the check cost a PTTL an item (about 10 % of a page's time in Redis).
  if not in_entry then redis.call('PEXPIRE', tkey, ARGV[6]) end
  followed = followed + 1
end
-- The page's items as one JSON argument: cjson decodes a 100-item page in about 0.07 ms, where
-- reading length-prefixed fields in Lua took 0.23 (a third of the page's time in Redis).
local list = cjson.decode(ARGV[8])
local items = tonumber(ARGV[7])
for i = 1, items do
  local f = list[i]
  local rid, docflow_id, state, date = f[1], f[2], f[3], f[4]
  local dkey = ARGV[5] .. ':docflow:' .. docflow_id
  local bank, n, deal_id = string.match(rid, '^(%d+):(%d+):(.+)$')
  -- v: what the entry holds of its docflow, in HELD's order but for its docflowId (9) and state (10).
  local key, v = nil, {}
  if bank then
    key = ARGV[5] .. ':ledger:' .. bank .. ':' .. deal_id
    v = redis.call('HMGET', key, 'st', 'req', 'reqAt', 'uin', 'amt', 'payer', 'rerr', 'files', 'docflowId', 'state')
  end
  -- Where the item's state goes: the entry (in_entry) or the docflow's own hash; nil: not ours.
  local tkey, in_entry, hv = nil, false, v
  if key and v[10] == 'submitted' and v[9] == docflow_id then
    -- Most items: a docflow its entry names.
    tkey, in_entry = key, true
  else
    -- The rest of the entry, only now: a docflow the entry does not name yet, or not ours.
    local e = {}
    if key and v[10] then
      local w = redis.call('HMGET', key, 'rid', 'batch', 'row', 'job', 'n')
      e = {state = v[10], docflowId = v[9] or nil, rid = w[1] or nil, batch = w[2] or nil, row = w[3] or nil,
        job = w[4] or nil, n = w[5] or nil}
      e.rid = rid_of(e, bank, deal_id)
    end
    local dv = redis.call('HMGET', dkey, unpack(HELD))
    if dv[1] then
      -- Followed in its own hash (only this script writes it, always with its state: 'st' says it exists).
      tkey, hv = dkey, dv
    elseif not bank then
      unknown = unknown + 1
    elseif not e.state then
      -- A docflow of one of our deals that the ledger does not know: its claim was lost (a Redis
      -- crash without fsync), or another fleet of the bank made it. Either way the deal has it;
      -- the first row that claims the deal takes it as its own.
      redis.call('HSET', key, 'n', n, 'batch', '', 'row', '')
      submit(key, docflow_id, state == 'suspended' and 'suspended' or 'queued', date, 'feed', ARGV[6])
      resolved = resolved + 1
      tkey, in_entry = key, true
    elseif e.rid ~= rid then
      unknown = unknown + 1
    elseif e.state == 'submitted' then
      conflicts[#conflicts + 1] = rid .. ' ' .. e.docflowId .. ' ' .. docflow_id
    else
      -- A try of ours whose answer has not come (or never will): the feed answers for it.
      local outcome = state == 'suspended' and 'suspended' or 'queued'
      submit(key, docflow_id, outcome, date, 'feed', ARGV[6])
      resolved = resolved + 1
      -- Its row may have ended ERR_UNCERTAIN meanwhile (the feed was late or down): now it knows.
      local has_outcome = e.batch ~= '' and settle_uncertain(ARGV[5] .. ':batch:' .. e.batch .. ':outcomes', e.row,
        outcome, docflow_id, "the gateway's answer was lost; its docflow was found in the news feed (" .. date .. ')')
      if not has_outcome and e.job then
        -- No outcome yet: its job sleeps until the try's end plus the feed lag, or is about to.
        wake[#wake + 1] = e.job
      end
      tkey, in_entry = key, true
    end
  end
  if in_entry and not v[1] then
    -- The entry holds no state yet: one its docflow's own hash kept (an earlier version followed
    -- it there, or a resubmission that made nothing gave the deal back its docflow) moves in.
    -- (EXISTS first: the hash is there only after an upgrade or a resubmission that made nothing.)
    if redis.call('EXISTS', dkey) == 1 then
      hv = redis.call('HMGET', dkey, unpack(HELD))
      -- (Its requirement's start comes too: follow writes reqAt only when the requirement changes.)
      if hv[3] then redis.call('HSET', key, 'reqAt', hv[3]) end
      redis.call('DEL', dkey)
    end
  end
  if tkey then follow(tkey, in_entry, state, date, f, hv) end
end
for state, moved in pairs(gauge) do
  if moved ~= 0 then redis.call('HINCRBY', KEYS[3], state, moved) end
end
redis.call('HSET', KEYS[1], 'cursor', ARGV[3])
local page_max = tonumber(redis.call('HGET', KEYS[1], 'pageMax') or '0')
local complete = items == 0 or items < page_max
if complete and tonumber(ARGV[4]) > tonumber(redis.call('HGET', KEYS[1], 'coveredAt') or '0') then
  redis.call('HSET', KEYS[1], 'coveredAt', ARGV[4])
end
if items > page_max then redis.call('HSET', KEYS[1], 'pageMax', items) end
if items > 0 then
  redis.call('HINCRBY', KEYS[1], 'items', items)
  redis.call('HINCRBY', KEYS[1], 'resolved', resolved)
  redis.call('HINCRBY', KEYS[1], 'unknown', unknown)
  redis.call('HINCRBY', KEYS[1], 'conflicts', #conflicts)
  redis.call('HINCRBY', KEYS[1], 'followed', followed)
end
return {'ok', resolved, unknown, conflicts, complete and 1 or 0, wake, tostring(now_ms())}`);

/**
 * Takes the feed's cursor (the feed from now) unless the deployment has one: before any
 * row claims a deal, so that a try's docflow can never come before the cursor.
 */
export async function ensureFeed(redis: Redis, keys: Keys, client: RealtyClient): Promise<void> {
  if ((await redis.hexists(keys.feed, 'since')) === 1) return;
  const page = await client.news();
  await INIT.run(redis, [keys.feed], [page.lastToken]);
}

export interface ReadStart {
  /** The token to read after; undefined before the feed has a cursor (ensureFeed). */
  cursor: string | undefined;
  /** Redis' clock (ms) as the read begins. */
  now: number;
  /** The largest page the feed ever gave (items). */
  pageMax: number;
}

/** The cursor, Redis' clock and the largest page seen, in one call. */
export async function beginRead(redis: Redis, keys: Keys): Promise<ReadStart> {
  const [cursor, now, pageMax] = (await BEGIN.run(redis, [keys.feed], [])) as [string | null, string, number];
  return { cursor: cursor ?? undefined, now: Number(now), pageMax: Number(pageMax) };
}

/** Redis' clock, in ms. */
export async function feedTime(redis: Redis, keys: Keys): Promise<number> {
  return (await beginRead(redis, keys)).now;
}

export type StoreResult =
  | { kind: 'lost' }
  | { kind: 'moved' }
  /**
   * `complete`: the page held all the feed had (the feed is known up to the read's time).
   * `wake`: the job keys of rows whose try this page resolved and that have no outcome yet
   * (each sleeps until its try's end plus `--feed-lag-ms`): wakeRows runs them now.
   */
  | { kind: 'stored'; resolved: number; unknown: number; conflicts: string[]; complete: boolean; wake: string[] };

export interface PageToStore {
  lockToken: string;
  after: string;
  lastToken: string;
  readAt: number;
  items: readonly NewsItem[];
  ledgerMs: number;
}

/**
 * What STORE reads of an item, in its order (strings, '' for none). A page's items go to Redis
 * as one JSON argument: ioredis spent about 0.4 ms of CPU a 100-item page encoding 1,000
 * arguments, 0.02 one; JSON.stringify of a page takes about 0.02 ms.
 */
/** The text with each lone surrogate as U+FFFD (String.prototype.toWellFormed: Node 20 has it, the ES2023 lib not yet). */
const wellFormed = (text: string): string => (text as string & { toWellFormed(): string }).toWellFormed();

function itemFields(item: NewsItem, names?: NameMatcher): string[] {
  const status = statusOfItem(item.docflow, item.date, names);
  return [
    item.docflow.requestId ?? '',
    item.docflow.docflowId,
    item.docflow.state,
    item.date,
    status.requirement ?? '',
    status.paymentUin ?? '',
    status.paymentAmount ?? '',
    status.payer ?? '',
    status.registryError ?? '',
    status.resultFiles === undefined ? '' : String(status.resultFiles),
  ];
}

/**
 * For each item with a registry error, the names of its deal's persons, from the filter the
 * deal's claim kept in its ledger entry (src/privacy/name-filter.ts): a registry's text masked
 * with them, however it spells them. One round trip for a page's errors; none for a page
 * without one. An item of no deal of ours, or whose entry has no filter, is masked without.
 */
async function personsOfErrors(redis: Redis, keys: Keys, items: readonly NewsItem[]): Promise<Map<NewsItem, NameMatcher>> {
  const asked: Array<{ item: NewsItem; key: string }> = [];
  for (const item of items) {
    const ours = hasRegistryError(item.docflow) && item.docflow.requestId ? parseRequestId(item.docflow.requestId) : undefined;
    if (ours) asked.push({ item, key: keys.ledgerEntry(ours.bank, ours.dealId) });
  }
  const names = new Map<NewsItem, NameMatcher>();
  if (asked.length === 0) return names;
  const pipeline = redis.pipeline();
  for (const { key } of asked) pipeline.hget(key, LEDGER_FILTER_FIELD);
  const replies = (await pipeline.exec()) ?? [];
  asked.forEach(({ item }, i) => {
    const [err, filter] = replies[i] ?? [];
    if (err) throw err;
    const matcher = filterMatcher(typeof filter === 'string' ? filter : undefined);
    if (matcher) names.set(item, matcher);
  });
  return names;
}

export async function storePage(redis: Redis, keys: Keys, page: PageToStore): Promise<StoreResult> {
  return (await storeRead(redis, keys, page)).result;
}

/**
 * storePage, and Redis' clock (ms) when the page was stored (undefined when it was not): a
 * time before any read that begins after this call returns, so the next read needs no
 * clock of its own.
 */
export async function storeRead(redis: Redis, keys: Keys, page: PageToStore): Promise<{ result: StoreResult; now?: number }> {
  const names = await personsOfErrors(redis, keys, page.items);
  const fields = (item: NewsItem): string[] => itemFields(item, names.get(item));
  let packed = JSON.stringify(page.items.map(fields));
  // JSON.stringify writes a lone UTF-16 surrogate (half an emoji, from any text of the gateway's)
  // as its escape, which Redis' cjson refuses: the whole page, and every read after it, would
  // fail for ever. Such a page is written again with each lone surrogate as U+FFFD, as the bytes
  // of an argument always carried it. (A text holding a real backslash and `ud` comes here too.)
  if (packed.includes('\\ud')) packed = JSON.stringify(page.items.map((item) => fields(item).map(wellFormed)));
  const args = [page.lockToken, page.after, page.lastToken, page.readAt, keys.bullPrefix, page.ledgerMs, page.items.length, packed];
  const [kind, resolved, unknown, conflicts, complete, wake, now] = (await STORE.run(
    redis,
    [keys.feed, keys.feedLock, keys.docflowStates],
    args,
  )) as [string, number, number, string[], number, string[], string];
  if (kind === 'lost' || kind === 'moved') return { result: { kind } };
  return {
    result: {
      kind: 'stored',
      resolved: Number(resolved),
      unknown: Number(unknown),
      conflicts: conflicts ?? [],
      complete: complete === 1,
      wake: wake ?? [],
    },
    now: Number(now),
  };
}

export interface FeedState {
  cursor?: string;
  since?: number;
  coveredAt?: number;
  items: number;
  resolved: number;
  unknown: number;
  conflicts: number;
  /** Items that moved a docflow of ours (its state). */
  followed: number;
}

export async function readFeedState(redis: Redis, keys: Keys): Promise<FeedState> {
  const h = await redis.hgetall(keys.feed);
  const state: FeedState = {
    items: Number(h.items ?? 0),
    resolved: Number(h.resolved ?? 0),
    unknown: Number(h.unknown ?? 0),
    conflicts: Number(h.conflicts ?? 0),
    followed: Number(h.followed ?? 0),
  };
  if (h.cursor) state.cursor = h.cursor;
  if (h.since) state.since = Number(h.since);
  if (h.coveredAt) state.coveredAt = Number(h.coveredAt);
  return state;
}
