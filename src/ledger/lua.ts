/**
 * Lua functions shared by every script that reads or writes a ledger entry (the claim
 * here, the outcome's record in src/outcomes/store.ts, the feed follower's page in
 * src/feed/feed-store.ts). Prepended to each script's body: a script is one atomic step
 * on Redis, so a deal's entry never changes between a read and the write that depends on it.
 *
 * An entry is a hash (its key names the bank and the deal): n (resubmission number), rid
 * (the requestId of try n; only entries of earlier versions write it out: it is always
 * `<bank>:<n>:<dealId>`, rid_of, and cost about 35 bytes an entry), state (idle | sending | submitted), batch and row (the row that holds the claim,
 * or made the docflow), job (that row's job key); when sending: tryAt and endAt (ms of
 * Redis' clock), timeoutMs, lagMs (the feed lag allowed, as the claiming worker had it),
 * nonce (the run that claimed); when submitted: docflowId, outcome, at, via (feed | operator; absent: answer);
 * cn and addr: the property the deal was claimed for (its cadastral number, a digest of its
 * canonical address: src/input/property-key.ts), absent in entries written before they were kept;
 * prev: the docflow a resubmission would replace (JSON), kept until the new one exists;
 * pf: the filter of the deal's persons' names a registry error is masked with (LEDGER_FILTER_FIELD,
 * src/privacy/name-filter.ts: short hashes, no name can be read back from it);
 * the docflow's life at the registry as the news feed showed it (src/feed/feed-store.ts):
 * st (its state), sat (when), req, reqAt, uin, amt, payer, rerr, files (ENTRY_STATE_FIELDS).
 * A docflow's state lives in its deal's entry (one key a deal, not two: about 200 bytes a
 * finished row); a docflow that is not its entry's (one a resubmission replaced), and those
 * an earlier version followed, keep theirs in `{prefix}:docflow:<id>` with the same fields,
 * `at` for `sat`.
 */
/** A docflow's state fields in its own hash, in the order parseDocflowStatus (docflows.ts) reads them. */
export const OWN_STATE_FIELDS = ['st', 'at', 'req', 'uin', 'amt', 'payer', 'rerr', 'reqAt', 'files'] as const;
/** The same fields in its deal's ledger entry, pair by pair (the entry's own `at` is when the docflow was known). */
export const ENTRY_STATE_FIELDS = ['st', 'sat', 'req', 'uin', 'amt', 'payer', 'rerr', 'reqAt', 'files'] as const;

/** The entry's field that keeps its persons' name filter (src/privacy/name-filter.ts). */
export const LEDGER_FILTER_FIELD = 'pf';

/** Field names as the items of a Lua table or a command's arguments: `'st', 'sat', ...`. */
export const luaNames = (fields: readonly string[]): string => fields.map((f) => `'${f}'`).join(', ');

export const LEDGER_LUA = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The requestId of the entry's try n: written out only by earlier versions.
local function rid_of(e, bank, deal_id)
  return e.rid or (bank .. ':' .. (e.n or '0') .. ':' .. deal_id)
end
-- A docflow's state fields in an entry, and the same in its own hash (time: sat there, at here).
local STATE_FIELDS = {${luaNames(ENTRY_STATE_FIELDS)}}
local OWN_FIELDS = {${luaNames(OWN_STATE_FIELDS)}}
-- Before an entry is made again for a resubmission: the state of the docflow it held moves to
-- the docflow's own hash, which the feed and the readers look at for a docflow not its entry's.
local function park_state(e, tag, ttl)
  if not e.st or not e.docflowId then return end
  local dkey = tag .. ':docflow:' .. e.docflowId
  local set = {}
  for i = 1, #STATE_FIELDS do
    local v = e[STATE_FIELDS[i]]
    if v then set[#set + 1] = OWN_FIELDS[i]; set[#set + 1] = v end
  end
  redis.call('HSET', dkey, unpack(set))
  redis.call('PEXPIRE', dkey, ttl)
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
-- A docflow known from the gateway's answer, the common case, keeps no 'via' ('answer' when absent):
-- the 14 bytes took a finished entry into Redis' next allocation size, 64 bytes more.
local function submit(key, docflow_id, outcome, at, via, ttl)
  redis.call('HDEL', key, 'tryAt', 'endAt', 'timeoutMs', 'lagMs', 'nonce', 'prev', 'job')
  redis.call('HSET', key, 'state', 'submitted', 'docflowId', docflow_id, 'outcome', outcome, 'at', at)
  if via == 'answer' then redis.call('HDEL', key, 'via') else redis.call('HSET', key, 'via', via) end
  live(key, ttl)
end
-- The holder's claim ends without a docflow: the deal is back to its earlier docflow, or to nothing.
local function release(key, e, ttl)
  redis.call('DEL', key)
  if not e.prev then return end
  local p = cjson.decode(e.prev)
  redis.call('HSET', key, 'n', p.n, 'batch', p.batch, 'row', p.row)
  if p.cn then redis.call('HSET', key, 'cn', p.cn) end
  if p.addr then redis.call('HSET', key, 'addr', p.addr) end
  if p.pf then redis.call('HSET', key, 'pf', p.pf) end
  -- (Nothing of the earlier docflow may be nil here: a nil argument fails the whole script.)
  submit(key, p.docflowId, p.outcome or 'queued', p.at or '', p.via or 'answer', ttl)
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
-- A row's stored outcome (src/outcomes/outcome-codec.ts): an array by position, or an object
-- an earlier version wrote. Its outcome's name:
local function outcome_of(raw)
  local o = cjson.decode(raw)
  if o[1] ~= nil then return o[2] end
  return o.outcome
end
-- A row that ended ERR_UNCERTAIN learns its try's docflow (the feed found it, or an operator
-- named it): rewritten in the form it was written in. False when the row has no outcome yet.
local function settle_uncertain(okey, row, outcome, docflow_id, message)
  local raw = redis.call('HGET', okey, row)
  if not raw then return false end
  local o = cjson.decode(raw)
  local status = outcome == 'queued' and 200 or 201
  if o[1] ~= nil then
    if o[8] ~= 'ERR_UNCERTAIN' then return true end
    o[2], o[3], o[5], o[8], o[9] = outcome, docflow_id, status, cjson.null, message
  else
    if o.errorCode ~= 'ERR_UNCERTAIN' then return true end
    o.outcome, o.docflowId, o.httpStatus, o.errorCode, o.errorMessage = outcome, docflow_id, status, nil, message
  end
  redis.call('HSET', okey, row, cjson.encode(o))
  return true
end
local function other_property(x, cn)
  return x.cn ~= nil and x.cn ~= '' and cn ~= '' and x.cn ~= cn
end
`;
