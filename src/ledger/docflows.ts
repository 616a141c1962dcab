/**
 * Where our docflows stand at the registry, as the news feed follower stored them
 * (src/feed/feed-store.ts, one hash per docflow): read for many rows at once, in one
 * round trip, by the results file, `status`, `payments`, `documents` and the dashboard.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { DOCFLOW_STATES, type DocflowStatus } from '../outcomes/types.js';

const FIELDS = ['st', 'at', 'req', 'uin', 'amt', 'payer', 'rerr', 'reqAt', 'files'] as const;

/** A docflow's status from its hash's FIELDS values; undefined when the feed never showed it. */
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

/** The status of each docflow named (in order), undefined where the feed has not shown it. */
export async function readDocflowStatuses(
  redis: Redis,
  keys: Keys,
  docflowIds: ReadonlyArray<string | undefined>,
): Promise<Array<DocflowStatus | undefined>> {
  const named = docflowIds.flatMap((id, i) => (id ? [{ id, i }] : []));
  const statuses: Array<DocflowStatus | undefined> = new Array<DocflowStatus | undefined>(docflowIds.length).fill(undefined);
  if (named.length === 0) return statuses;
  const pipeline = redis.pipeline();
  for (const { id } of named) pipeline.hmget(keys.docflow(id), ...FIELDS);
  const replies = (await pipeline.exec()) ?? [];
  named.forEach(({ i }, k) => {
    const [err, values] = replies[k] ?? [];
    if (err) throw err;
    statuses[i] = parseDocflowStatus(values as Array<string | null>);
  });
  return statuses;
}

/** How many of our docflows the feed last showed in each state (the `realty_docflows` gauge). */
export async function docflowStateCounts(redis: Redis, keys: Keys): Promise<Record<string, number>> {
  const raw = await redis.hgetall(keys.docflowStates);
  const counts: Record<string, number> = Object.fromEntries(DOCFLOW_STATES.map((s) => [s, 0]));
  for (const [state, n] of Object.entries(raw)) counts[state] = Math.max(0, Number(n));
  return counts;
}
