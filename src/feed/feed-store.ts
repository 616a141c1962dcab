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
import { LEDGER_LUA } from '../ledger/lua.js';

/** KEYS: feed. ARGV: the feed's newest token. Takes the cursor unless there is one. */
const INIT = luaScript(`${LEDGER_LUA}
if redis.call('HEXISTS', KEYS[1], 'since') == 1 then return 0 end
local now = now_ms()
redis.call('HSET', KEYS[1], 'since', now, 'cursor', ARGV[1], 'coveredAt', now)
return 1`);

/** KEYS: feed (it routes the call to the node that keeps the feed). */
const TIME = luaScript(`${LEDGER_LUA}
return tostring(now_ms())`);

/**
 * KEYS: feed, lock. ARGV: lock token, the cursor read after, the new cursor, the time the
 * read began, the key tag, ledger ms, then per item: requestId, docflowId, state, date.
 * Stored only while the lock is this follower's and the cursor has not moved: a follower
 * that lost its lock (a long pause) can never move the cursor back. The page size is the
 * gateway's own (it is not asked for one): a page as large as the largest seen may have
 * been cut short, any smaller one was all the feed had.
 */
const STORE = luaScript(`${LEDGER_LUA}
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return {'lost'} end
if redis.call('HGET', KEYS[1], 'cursor') ~= ARGV[2] then return {'moved'} end
local resolved, unknown, conflicts = 0, 0, {}
for i = 7, #ARGV, 4 do
  local rid, docflow_id, state, date = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local bank, n, deal_id = string.match(rid, '^(%d+):(%d+):(.+)$')
  local e = {}
  local key
  if bank then
    key = ARGV[5] .. ':ledger:' .. bank .. ':' .. deal_id
    -- Only what is needed here: most items are of docflows the ledger knows already.
    local v = redis.call('HMGET', key, 'state', 'rid', 'docflowId', 'batch', 'row')
    e = {state = v[1] or nil, rid = v[2] or nil, docflowId = v[3] or nil, batch = v[4] or nil, row = v[5] or nil}
  end
  if bank and not e.state then
    -- A docflow of one of our deals that the ledger does not know: its claim was lost (a Redis
    -- crash without fsync), or another fleet of the bank made it. Either way the deal has it;
    -- the first row that claims the deal takes it as its own.
    redis.call('HSET', key, 'n', n, 'rid', rid, 'batch', '', 'row', '')
    submit(key, docflow_id, state == 'suspended' and 'suspended' or 'queued', date, 'feed', ARGV[6])
    resolved = resolved + 1
  elseif not e.state or e.rid ~= rid then
    unknown = unknown + 1
  elseif e.state == 'submitted' then
    if e.docflowId ~= docflow_id then conflicts[#conflicts + 1] = rid .. ' ' .. e.docflowId .. ' ' .. docflow_id end
  else
    -- A try of ours whose answer has not come (or never will): the feed answers for it.
    local outcome = state == 'suspended' and 'suspended' or 'queued'
    submit(key, docflow_id, outcome, date, 'feed', ARGV[6])
    resolved = resolved + 1
    -- Its row may have ended ERR_UNCERTAIN meanwhile (the feed was late or down): now it knows.
    local okey = ARGV[5] .. ':batch:' .. e.batch .. ':outcomes'
    local raw = e.batch ~= '' and redis.call('HGET', okey, e.row)
    if raw then
      local o = cjson.decode(raw)
      if o.errorCode == 'ERR_UNCERTAIN' then
        o.outcome = outcome
        o.docflowId = docflow_id
        o.httpStatus = outcome == 'queued' and 200 or 201
        o.errorCode = nil
        o.errorMessage = "the gateway's answer was lost; its docflow was found in the news feed (" .. date .. ')'
        redis.call('HSET', okey, e.row, cjson.encode(o))
      end
    end
  end
end
redis.call('HSET', KEYS[1], 'cursor', ARGV[3])
local items = (#ARGV - 6) / 4
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
end
return {'ok', resolved, unknown, conflicts, complete and 1 or 0}`);

/**
 * Takes the feed's cursor (the feed from now) unless the deployment has one: before any
 * row claims a deal, so that a try's docflow can never come before the cursor.
 */
export async function ensureFeed(redis: Redis, keys: Keys, client: RealtyClient): Promise<void> {
  if ((await redis.hexists(keys.feed, 'since')) === 1) return;
  const page = await client.news();
  await INIT.run(redis, [keys.feed], [page.lastToken]);
}

/** Redis' clock, in ms. */
export async function feedTime(redis: Redis, keys: Keys): Promise<number> {
  return Number(await TIME.run(redis, [keys.feed], []));
}

export type StoreResult =
  | { kind: 'lost' }
  | { kind: 'moved' }
  /** `complete`: the page held all the feed had (the feed is known up to the read's time). */
  | { kind: 'stored'; resolved: number; unknown: number; conflicts: string[]; complete: boolean };

export async function storePage(
  redis: Redis,
  keys: Keys,
  page: { lockToken: string; after: string; lastToken: string; readAt: number; items: readonly NewsItem[]; ledgerMs: number },
): Promise<StoreResult> {
  const args: Array<string | number> = [page.lockToken, page.after, page.lastToken, page.readAt, keys.bullPrefix, page.ledgerMs];
  for (const item of page.items) args.push(item.docflow.requestId ?? '', item.docflow.docflowId, item.docflow.state, item.date);
  const [kind, resolved, unknown, conflicts, complete] = (await STORE.run(redis, [keys.feed, keys.feedLock], args)) as [
    string,
    number,
    number,
    string[],
    number,
  ];
  if (kind === 'lost' || kind === 'moved') return { kind };
  return { kind: 'stored', resolved: Number(resolved), unknown: Number(unknown), conflicts: conflicts ?? [], complete: complete === 1 };
}

export interface FeedState {
  cursor?: string;
  since?: number;
  coveredAt?: number;
  items: number;
  resolved: number;
  unknown: number;
  conflicts: number;
}

export async function readFeedState(redis: Redis, keys: Keys): Promise<FeedState> {
  const h = await redis.hgetall(keys.feed);
  const state: FeedState = {
    items: Number(h.items ?? 0),
    resolved: Number(h.resolved ?? 0),
    unknown: Number(h.unknown ?? 0),
    conflicts: Number(h.conflicts ?? 0),
  };
  if (h.cursor) state.cursor = h.cursor;
  if (h.since) state.since = Number(h.since);
  if (h.coveredAt) state.coveredAt = Number(h.coveredAt);
  return state;
}
