/**
 * Lua functions shared by every script that reads or writes a ledger entry (the claim
 * here, the outcome's record in src/outcomes/store.ts, the feed follower's page in
 * src/feed/feed-store.ts). Prepended to each script's body: a script is one atomic step
 * on Redis, so a deal's entry never changes between a read and the write that depends on it.
 *
 * An entry is a hash (its key names the bank and the deal): n (resubmission number), rid
 * (the requestId of try n), state (idle | sending | submitted), batch and row (the row that holds the claim,
 * or made the docflow), job (that row's job key); when sending: tryAt and endAt (ms of
 * Redis' clock), timeoutMs, lagMs (the feed lag allowed, as the claiming worker had it),
 * nonce (the run that claimed); when submitted: docflowId, outcome, at, via (answer | feed);
 * cn and addr: the property the deal was claimed for (its cadastral number, a digest of its
 * canonical address: src/input/property-key.ts), absent in entries written before they were kept;
 * prev: the docflow a resubmission would replace (JSON), kept until the new one exists.
 */
export const LEDGER_LUA = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function entry_of(key)
  local flat = redis.call('HGETALL', key)
  local e = {}
  for i = 1, #flat, 2 do e[flat[i]] = flat[i + 1] end
  return e
end
-- Never shortens a key's life: it lives at least until its batch's expiresAt.
local function extend(key, batch_key, now)
  local exp = tonumber(redis.call('HGET', batch_key, 'expiresAt') or '')
  if not exp then return end
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or (ttl >= 0 and now + ttl < exp) then redis.call('PEXPIREAT', key, exp) end
end
-- An entry lives ttl ms after its last change, or longer if a host with a longer
-- REALTY_LEDGER_DAYS said so: never shorter.
local function live(key, ttl)
  if redis.call('PTTL', key) < tonumber(ttl) then redis.call('PEXPIRE', key, ttl) end
end
-- The try's own fields: when it began and ended, how long it may last, its lag allowance, its run.
local function forget_try(key)
  redis.call('HDEL', key, 'tryAt', 'endAt', 'timeoutMs', 'lagMs', 'nonce')
end
-- The deal reached the registry with this docflow (from the gateway's answer or the feed).
local function submit(key, docflow_id, outcome, at, via, ttl)
  redis.call('HDEL', key, 'tryAt', 'endAt', 'timeoutMs', 'lagMs', 'nonce', 'prev', 'job')
  redis.call('HSET', key, 'state', 'submitted', 'docflowId', docflow_id, 'outcome', outcome, 'at', at, 'via', via)
  live(key, ttl)
end
-- The holder's claim ends without a docflow: the deal is back to its earlier docflow, or to nothing.
local function release(key, e, ttl)
  redis.call('DEL', key)
  if not e.prev then return end
  local p = cjson.decode(e.prev)
  redis.call('HSET', key, 'n', p.n, 'rid', p.rid, 'batch', p.batch, 'row', p.row)
  if p.cn then redis.call('HSET', key, 'cn', p.cn) end
  if p.addr then redis.call('HSET', key, 'addr', p.addr) end
  submit(key, p.docflowId, p.outcome, p.at, p.via or 'answer', ttl)
end
-- Whether a docflow's entry (or its prev) was registered for another property than the one
-- asking (cn: its cadastral number). Only two cadastral numbers tell: an entry without one (written
-- before entries kept it) is taken as before, never a conflict on missing data.
-- Whether a docflow's entry is for the property a row names (its cadastral number cn, its canonical
-- address's digest addr): two cadastral numbers decide, else equal addresses. An entry that kept neither
-- (written before entries kept them), or a caller that names none, is taken as before: the same deal.
local function same_property(x, cn, addr)
  local xcn, xaddr = x.cn or '', x.addr or ''
  if (xcn == '' and xaddr == '') or (cn == '' and addr == '') then return true end
  if xcn ~= '' and cn ~= '' then return xcn == cn end
  return xaddr ~= '' and xaddr == addr
end
local function other_property(x, cn)
  return x.cn ~= nil and x.cn ~= '' and cn ~= '' and x.cn ~= cn
end
`;
