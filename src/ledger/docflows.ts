/**
 * Where our docflows stand at the registry, as the news feed follower stored them
 * (src/feed/feed-store.ts): in the deal's ledger entry for the docflow it names, else in the
 * docflow's own hash (one a resubmission replaced, or one an earlier version followed).
 * Read for many rows at once, in one round trip, by the results file, `status`, `payments`,
 * `documents` and the dashboard.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { luaScript } from '../redis/lua.js';
import type { BankProfile } from '../input/profile.js';
import { DOCFLOW_STATES, SUBMITTED_OUTCOMES, type DocflowStatus, type Outcome } from '../outcomes/types.js';
import { ENTRY_STATE_FIELDS, luaNames, OWN_STATE_FIELDS } from './lua.js';

/**
 * KEYS: per docflow, its deal's ledger entry and its own hash. ARGV: the docflowIds. Each
 * docflow's fields (OWN_STATE_FIELDS' order), flat: from the entry when it names the docflow and
 * holds its state, else from the docflow's hash.
 */
const READ = luaScript(`
local out = {}
for i = 1, #ARGV do
  local v = redis.call('HMGET', KEYS[2 * i - 1], 'docflowId', ${luaNames(ENTRY_STATE_FIELDS)})
  if v[1] ~= ARGV[i] or not v[2] then
    v = redis.call('HMGET', KEYS[2 * i], 'st', ${luaNames(OWN_STATE_FIELDS.slice(1))})
    table.insert(v, 1, false)
  end
  for j = 2, #v do out[#out + 1] = v[j] or '' end
end
return out`);

/** A docflow's status from its FIELDS values (OWN_STATE_FIELDS' order); undefined when the feed never showed it. */
export function parseDocflowStatus(values: ReadonlyArray<string | null>): DocflowStatus | undefined {
  const [st, at, req, uin, amt, payer, rerr, reqAt, files] = values;
  if (!st) return undefined;
  const status: DocflowStatus = { state: st, stateAt: at ?? '' };
  if (req === 'signature' || req === 'payment') status.requirement = req;
  if (uin) status.paymentUin = uin;
  if (amt) status.paymentAmount = amt;
  if (payer) status.payer = payer;
  if (rerr) status.registryError = rerr;
  if (reqAt) status.requirementAt = reqAt;
  if (files) status.resultFiles = Number(files);
  return status;
}

/** A docflow of one of the bank's deals. */
export interface DealDocflow {
  /** The bank: its profile's INN. */
  bank: string;
  dealId: string;
  docflowId: string;
}

/** The bank (its profile's INN) that loaded a batch; '' once its profile is gone. */
export async function batchBank(redis: Redis, keys: Keys, batch: string): Promise<string> {
  const raw = await redis.hget(keys.batch(batch), 'profile');
  return raw ? ((JSON.parse(raw) as Partial<BankProfile>).organization?.inn ?? '') : '';
}

/** The docflow of each submitted row (undefined for the others), for readDocflowStatuses. */
export function rowDocflows(
  bank: string,
  records: ReadonlyArray<{ outcome: string; dealId: string; docflowId?: string } | undefined>,
): Array<DealDocflow | undefined> {
  return records.map((r) =>
    r?.docflowId && SUBMITTED_OUTCOMES.has(r.outcome as Outcome) ? { bank, dealId: r.dealId, docflowId: r.docflowId } : undefined,
  );
}

/** Per docflow, at most this many in one script: Redis is busy while it runs. */
const READ_CHUNK = 1000;

/** The status of each docflow named (in order), undefined where the feed has not shown it. */
export async function readDocflowStatuses(
  redis: Redis,
  keys: Keys,
  docflows: ReadonlyArray<DealDocflow | undefined>,
): Promise<Array<DocflowStatus | undefined>> {
  const statuses: Array<DocflowStatus | undefined> = new Array<DocflowStatus | undefined>(docflows.length).fill(undefined);
  const named = docflows.flatMap((d, i) => (d?.docflowId ? [{ d, i }] : []));
  const n = OWN_STATE_FIELDS.length;
  for (let from = 0; from < named.length; from += READ_CHUNK) {
    const chunk = named.slice(from, from + READ_CHUNK);
    const flat = (await READ.run(
      redis,
      chunk.flatMap(({ d }) => [keys.ledgerEntry(d.bank, d.dealId), keys.docflow(d.docflowId)]),
      chunk.map(({ d }) => d.docflowId),
    )) as string[];
    chunk.forEach(({ i }, k) => {
      statuses[i] = parseDocflowStatus(flat.slice(k * n, k * n + n).map((v) => v || null));
    });
  }
  return statuses;
}

/** How many of our docflows the feed last showed in each state (the `realty_docflows` gauge). */
export async function docflowStateCounts(redis: Redis, keys: Keys): Promise<Record<string, number>> {
  const raw = await redis.hgetall(keys.docflowStates);
  const counts: Record<string, number> = Object.fromEntries(DOCFLOW_STATES.map((s) => [s, 0]));
  for (const [state, n] of Object.entries(raw)) counts[state] = Math.max(0, Number(n));
  return counts;
}
