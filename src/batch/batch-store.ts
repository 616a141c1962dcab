/**
 * A batch: one input file's rows, with the bank profile they are submitted
 * under. Workers on any host read the profile from here, so `work` needs none.
 *
 * A batch belongs to one input: a file's bytes read with given options (its
 * fingerprint). Loading other content into it is refused, since its rows would
 * take the places of the first file's rows. Its jobs are not sent until the
 * whole file was read (`state` loaded). A load that fails part-way takes its
 * jobs back and leaves `state` failed: loading the input again starts afresh.
 * A load that died (killed, its heartbeat run out) leaves `state` loading:
 * loading the same input again resumes it, and counts the jobs it finds as
 * already enqueued.
 *
 * Every key of a batch expires, since its metadata holds the profile (the
 * representative's SNILS and passport): its retention after the loader's last
 * heartbeat while it loads, after its load, or after its failure.
 */
import { hostname } from 'node:os';
import { whereIs, type RedisClient as Redis } from '../redis/connection.js';
import { UsageError } from '../errors.js';
import type { BankProfile } from '../input/profile.js';
import type { Keys } from '../redis/keys.js';
import { luaScript } from '../redis/lua.js';
import { LEDGER_LUA } from '../ledger/lua.js';
import { DAY, DEFAULTS, LOADER as LOADER_TUNABLES } from '../config.js';

export type BatchState = 'loading' | 'loaded' | 'failed';

/** Outcomes are kept 30 days after the load unless REALTY_RETENTION_DAYS says otherwise. */
export const DEFAULT_RETENTION_MS = DEFAULTS.retentionDays * DAY;

/** A loader renews its claim on a loading batch at every chunk; one silent this long has died. */
export const LOAD_HEARTBEAT_MS = LOADER_TUNABLES.claimMs;

export interface BatchMeta {
  id: string;
  file: string;
  /** sha256 of the input's bytes, with the reading options when there were any. */
  fingerprint: string;
  /** The reading options the input was loaded with (JSON), to read it again for the attention file and retries. */
  reading?: string;
  createdAt: string;
  state: BatchState;
  /** Rows read from the input; set once the whole file has been read. */
  total?: number;
  loadedAt?: string;
  /** Why the load failed, when it did. */
  error?: string;
  /** A loading batch whose loader stopped (killed, crashed): loading the same input again resumes it. */
  loaderDied?: boolean;
  /** Loaded with --resubmit: a deal another row made is sent again, as its next resubmission (also on retry). */
  resubmit?: boolean;
  /** `--files-root` of the load (absolute): where its rows' documents may be besides the input's folder (also on retry). */
  filesRoot?: string;
  /** When its keys expire (ms since epoch): outcomes written later get the same expiry. */
  expiresAt?: number;
  /** The id of the database (the ledger) it was loaded into (src/db/deployment.ts): only workers on that database run its jobs. */
  database?: string;
}

export interface BatchStore {
  /**
   * Creates the batch for this file, or reopens it for the same content (a load
   * run again); refuses other content. The profile is refreshed either way.
   */
  /**
   * `fresh`: the batch starts from nothing (new, or an earlier load of it failed: the caller clears what it left).
   * The batch keeps `retentionMs` (REALTY_RETENTION_DAYS): its keys expire that long after the
   * loader's last heartbeat while it loads, after its load, or after its failure.
   */
  open(
    meta: Pick<BatchMeta, 'id' | 'file' | 'fingerprint' | 'reading' | 'resubmit' | 'filesRoot' | 'database'>,
    profile: BankProfile,
    retentionMs?: number,
  ): Promise<{ fresh: boolean }>;
  /** The loader is alive: workers keep holding the batch's jobs, and its keys' expiry moves on. */
  heartbeat(id: string): Promise<void>;
  /** The load is complete; the batch's keys expire `retentionMs` from now. */
  setTotal(id: string, total: number, retentionMs?: number): Promise<void>;
  /** The load failed or was abandoned: the batch's keys expire its retention from now, and a batch that never loaded loses its profile. */
  fail(id: string, error: string): Promise<void>;
  get(id: string): Promise<BatchMeta | undefined>;
  state(id: string): Promise<BatchState | undefined>;
  /** The id of the database the batch was loaded into (BatchMeta.database). */
  database(id: string): Promise<string | undefined>;
  profile(id: string): Promise<BankProfile | undefined>;
  /** When the batch's keys expire (ms since epoch), once it has loaded. */
  expiresAt(id: string): Promise<number | undefined>;
}

/**
 * KEYS: batch, outcomes, rows, checkpoints. ARGV: total, loadedAt, retention ms. The
 * batch is loaded; its expiry, and each key's, moves later, never earlier.
 */
const SET_TOTAL = luaScript(`${LEDGER_LUA}
local now = now_ms()
local exp = now + tonumber(ARGV[3])
local was = tonumber(redis.call('HGET', KEYS[1], 'expiresAt') or '0')
if was > exp then exp = was end
redis.call('HSET', KEYS[1], 'total', ARGV[1], 'state', 'loaded', 'loadedAt', ARGV[2], 'expiresAt', exp)
for i = 1, #KEYS do
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl == -1 or (ttl >= 0 and now + ttl < exp) then redis.call('PEXPIREAT', KEYS[i], exp) end
end
return exp`);

/**
 * The batch's personal data (its profile: the representative's SNILS, passport) must not
 * outlive it, whatever becomes of its load: every key of a batch gets an expiry from its
 * first heartbeat, pushed on by each, and kept by a failure. `push` moves a key's expiry
 * later, never earlier; `retention` is the one the batch was opened with.
 */
const PUSH_LUA = `${LEDGER_LUA}
local function push(now, exp)
  for i = 1, #KEYS do
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl == -1 or (ttl >= 0 and now + ttl < exp) then redis.call('PEXPIREAT', KEYS[i], exp) end
  end
end
local function retention(fallback)
  return tonumber(redis.call('HGET', KEYS[1], 'retentionMs') or '') or tonumber(fallback)
end
`;

/** KEYS: batch, outcomes, rows, checkpoints. ARGV: loadingUntil, retention ms when the batch names none. */
const HEARTBEAT = luaScript(`${PUSH_LUA}
local now = now_ms()
redis.call('HSET', KEYS[1], 'loadingUntil', ARGV[1])
push(now, now + retention(ARGV[2]))`);

/** What a batch's hash says before a load opens it (nulls where it says nothing). */
interface OpenedBefore {
  fingerprint: string | null | undefined;
  file: string | null | undefined;
  state: string | null | undefined;
  loadingUntil: string | null | undefined;
  loader: string | null | undefined;
  resubmit: string | null | undefined;
}

/**
 * Whether a load may open the batch, and whether it starts afresh: throws UsageError when
 * the batch holds other rows, is being loaded by a live process, or was loaded with
 * another --resubmit setting.
 */
function mayOpen(meta: Pick<BatchMeta, 'id' | 'fingerprint' | 'resubmit'>, created: boolean, before: OpenedBefore, now: number): boolean {
  const { fingerprint, file, state, loadingUntil, loader, resubmit } = before;
  if (!created && fingerprint !== meta.fingerprint) {
    throw new UsageError(
      `Batch ${meta.id} holds other rows (${file ?? 'another file'}, or the same file read with other --format/--encoding/--delimiter/--mapping); give this input a new --batch.`,
    );
  }
  const alive = state === 'loading' && Number(loadingUntil ?? 0) > now && loaderMayLive(loader);
  if (alive) throw new UsageError(`Batch ${meta.id} is being loaded by another process right now; wait for it, or give a new --batch.`);
  // A batch that loaded once stays loaded: the same input again adds no rows, and
  // its workers must not stop while it is read a second time. One whose loader
  // died resumes where it was; one whose load failed starts again.
  const fresh = created || state === 'failed' || !state;
  // Its rows' tries were made as it was first loaded: a second load may not change what they send.
  if (!fresh && (resubmit === '1') !== (meta.resubmit ?? false)) {
    throw new UsageError(
      meta.resubmit
        ? `Batch ${meta.id} was loaded without --resubmit; its rows cannot be sent again now: give this load a new --batch to resubmit its deals.`
        : `Batch ${meta.id} was loaded with --resubmit; load it again with --resubmit (or give a new --batch).`,
    );
  }
  return fresh;
}

/** KEYS: batch, outcomes, rows, checkpoints. ARGV: error, retention ms when the batch names none. */
const FAIL = luaScript(`${PUSH_LUA}
local now = now_ms()
local state = redis.call('HGET', KEYS[1], 'state')
redis.call('HSET', KEYS[1], 'state', 'failed', 'error', ARGV[1])
-- A batch that never loaded has no job left to read its profile: it goes now. (One that
-- loaded keeps it: its workers may still be finishing rows.)
if state ~= 'loaded' then redis.call('HDEL', KEYS[1], 'profile') end
local exp = now + retention(ARGV[2])
local was = tonumber(redis.call('HGET', KEYS[1], 'expiresAt') or '0')
if was > exp then exp = was end
redis.call('HSET', KEYS[1], 'expiresAt', exp)
push(now, exp)`);

export function createBatchStore(redis: Redis, keys: Keys): BatchStore {
  const batchKeys = (id: string): string[] => [keys.batch(id), keys.outcomes(id), keys.rows(id), keys.checkpoints(id)];
  const heartbeat = async (id: string): Promise<void> => {
    await HEARTBEAT.run(redis, batchKeys(id), [String(Date.now() + LOAD_HEARTBEAT_MS), DEFAULT_RETENTION_MS]);
  };
  return {
    async open(meta, profile, retentionMs = DEFAULT_RETENTION_MS) {
      const key = keys.batch(meta.id);
      const now = new Date();
      const replies =
        (await redis
          .multi()
          .hsetnx(key, 'fingerprint', meta.fingerprint)
          .hmget(key, 'fingerprint', 'file', 'state', 'loadingUntil', 'loader', 'resubmit')
          .exec()) ?? [];
      const created = replies[0]?.[1] === 1;
      const [fingerprint, file, state, loadingUntil, loader, resubmit] = (replies[1]?.[1] ?? []) as Array<string | null>;
      const fresh = mayOpen(meta, created, { fingerprint, file, state, loadingUntil, loader, resubmit }, now.getTime());
      const next = state === 'loaded' ? 'loaded' : 'loading';
      const written = await redis
        .multi()
        .hsetnx(key, 'createdAt', now.toISOString())
        .hset(
          key,
          'id',
          meta.id,
          'file',
          meta.file,
          'reading',
          meta.reading ?? '{}',
          'resubmit',
          meta.resubmit ? '1' : '0',
          'filesRoot',
          meta.filesRoot ?? '',
          'state',
          next,
          'profile',
          JSON.stringify(profile),
          'loadingUntil',
          String(now.getTime() + LOAD_HEARTBEAT_MS),
          'loader',
          LOADER,
          'retentionMs',
          String(retentionMs),
          'database',
          meta.database ?? '',
        )
        .hdel(key, 'error', 'total')
        // With the profile, in the same transaction, its expiry. (The script's text, once a load:
        // EVALSHA cannot fall back inside MULTI.)
        .eval(HEARTBEAT.source, 4, ...batchKeys(meta.id), String(now.getTime() + LOAD_HEARTBEAT_MS), retentionMs)
        .zadd(keys.batches, 'NX', now.getTime(), meta.id)
        .exec();
      for (const [err] of written ?? []) if (err) throw err;
      return { fresh };
    },
    heartbeat,
    async setTotal(id, total, retentionMs = DEFAULT_RETENTION_MS) {
      // A batch lives `retentionMs` after its load, or longer if an earlier load said so: its
      // keys never expire earlier than they would have. Outcomes written later read
      // `expiresAt` from here (the outcomes hash may not exist yet).
      await SET_TOTAL.run(redis, batchKeys(id), [total, new Date().toISOString(), retentionMs]);
    },
    async fail(id, error) {
      await FAIL.run(redis, batchKeys(id), [error, DEFAULT_RETENTION_MS]);
    },
    async get(id) {
      const h = await redis.hgetall(keys.batch(id));
      if (!h.id) return undefined;
      const meta: BatchMeta = {
        id: h.id,
        file: h.file ?? '',
        fingerprint: h.fingerprint ?? '',
        createdAt: h.createdAt ?? '',
        state: (h.state as BatchState | undefined) ?? 'failed',
      };
      if (meta.state === 'loading' && !(Number(h.loadingUntil ?? 0) > Date.now() && loaderMayLive(h.loader))) meta.loaderDied = true;
      if (h.total !== undefined) meta.total = Number(h.total);
      if (h.loadedAt) meta.loadedAt = h.loadedAt;
      if (h.error) meta.error = h.error;
      if (h.reading) meta.reading = h.reading;
      if (h.resubmit === '1') meta.resubmit = true;
      if (h.filesRoot) meta.filesRoot = h.filesRoot;
      if (h.database) meta.database = h.database;
      if (h.expiresAt) meta.expiresAt = Number(h.expiresAt);
      return meta;
    },
    async state(id) {
      return ((await redis.hget(keys.batch(id), 'state')) as BatchState | null) ?? undefined;
    },
    async database(id) {
      return (await redis.hget(keys.batch(id), 'database')) || undefined;
    },
    async expiresAt(id) {
      const raw = await redis.hget(keys.batch(id), 'expiresAt');
      return raw ? Number(raw) : undefined;
    },
    async profile(id) {
      const raw = await redis.hget(keys.batch(id), 'profile');
      return raw ? (JSON.parse(raw) as BankProfile) : undefined;
    },
  };
}

/** This process, as `<host>:<pid>`: who is loading a batch. */
const LOADER = `${hostname()}:${process.pid}`;

/**
 * False only when the loader was a process of this host that no longer exists
 * (killed, crashed): its batch need not wait for the heartbeat to run out.
 */
function loaderMayLive(loader: string | null | undefined): boolean {
  const at = loader?.lastIndexOf(':') ?? -1;
  if (!loader || at < 0 || loader.slice(0, at) !== hostname()) return true;
  const pid = Number(loader.slice(at + 1));
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The refusal for a batch id Redis does not hold, naming where it looked: a command run
 * from another folder may read another `.env`, and so another Redis or prefix.
 */
export function noSuchBatch(redis: Redis, keys: Keys, batch: string): UsageError {
  return new UsageError(
    `There is no batch ${batch} in Redis at ${whereIs(redis)} under the prefix ${keys.prefix} (realty-batch status lists the batches; REDIS_URL and REALTY_PREFIX say where to look: the environment, .env in the working directory, or --env-file <file>).`,
  );
}
