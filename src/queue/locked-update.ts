/**
 * A job's data written only while the writer holds the job's lock (BullMQ's
 * `<job key>:lock` holds the token of the worker running it). BullMQ's own updateData
 * checks no lock: a run whose job was taken over by another worker (it stalled, then
 * came back) would otherwise write its stale data, a deal with personal data included,
 * over a job the other worker has finished and stripped.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import { luaFile } from '../redis/lua.js';

/** src/redis/lua/job-data-update.lua: 1 when written. */
const UPDATE = luaFile('job-data-update');

export async function updateLockedJobData(redis: Redis, jobKey: string, token: string, data: unknown): Promise<boolean> {
  return (await UPDATE.run(redis, [jobKey, `${jobKey}:lock`], [token, JSON.stringify(data)])) === 1;
}
