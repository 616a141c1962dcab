/**
 * A batch: one input file's rows, with the bank profile they are submitted under. Its row is in
 * the database (the table `batches`: src/batch/sql/batch-row.ts), so a Redis emptied at any
 * moment leaves it, and `retry --missing --profile` remakes its rows' jobs from it. The profile
 * (the representative's SNILS and passport) is in Redis only, with the batch's work: workers on
 * any host read it from there, so `work` needs none, and it expires with the batch.
 *
 * Its jobs are not sent until the whole file was read (`state` loaded). A load that fails
 * part-way takes its jobs back and leaves `state` failed: loading the input again starts afresh.
 * A load that died (killed, its heartbeat run out) leaves `state` loading: loading the same input
 * again resumes it, and counts the jobs it finds as already enqueued. Every Redis key of a batch
 * (the profile is personal data) expires when its row says (`expires_at`).
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import { UsageError } from '../errors.js';
import type { BankProfile } from '../input/profile.js';
import type { Keys } from '../redis/keys.js';
import { luaFile } from '../redis/lua.js';
import type { Database } from '../db/database.js';
import type { BatchRow } from '../db/schema.js';
import { loaderMayLive } from './batch-open.js';
import { readBatchRow } from './sql/batch-row.js';
import { openBatch } from './sql/open-batch.js';
import { heartbeatBatch } from './sql/heartbeat-batch.js';
import { markLoaded } from './sql/mark-loaded.js';
import { markFailed } from './sql/mark-failed.js';
import { readBatchField } from './sql/read-batch-field.js';
import { listBatches } from './sql/list-batches.js';
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
  /** The bank's INN (its profile's organization), the docflow type, the profile's path and sha256: what `retry --missing` checks a profile against. */
  bank?: string;
  type?: string;
  profilePath?: string;
  profileSha256?: string;
}

export interface BatchStore {
  /**
   * Creates the batch for this file, or reopens it for the same content (a load
   * run again); refuses other content. The profile is refreshed either way.
   * `fresh`: the batch starts from nothing (new, or an earlier load of it failed: the caller clears what it left).
   * The batch keeps `retentionMs` (REALTY_RETENTION_DAYS): its keys expire that long after the
   * loader's last heartbeat while it loads, after its load, or after its failure.
   */
  open(
    meta: Pick<
      BatchMeta,
      'id' | 'file' | 'fingerprint' | 'reading' | 'resubmit' | 'filesRoot' | 'database' | 'type' | 'profilePath' | 'profileSha256'
    >,
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
  /** The newest batches first, at most `limit`, leaving out those past their expiry. */
  list(limit: number): Promise<Array<{ id: string; createdMs: number }>>;
  /** Gives a batch whose profile Redis lost its profile back (`retry --missing --profile`), with the batch's expiry. */
  restoreProfile(id: string, profile: BankProfile): Promise<void>;
}

/**
 * The batch's Redis keys (its profile, row index, checkpoints) live until `exp` (ms since epoch),
 * never less than they would have; the profile dropped now for a batch that never loaded (no job
 * is left to read it): src/redis/lua/batch-expire.lua.
 */
const EXPIRE = luaFile('batch-expire');

function metaOf(row: BatchRow): BatchMeta {
  const meta: BatchMeta = {
    id: row.id,
    file: row.file,
    fingerprint: row.fingerprint,
    createdAt: row.created_at,
    state: row.state as BatchState,
  };
  if (meta.state === 'loading' && !(Number(row.loading_until) > Date.now() && loaderMayLive(row.loader))) meta.loaderDied = true;
  if (row.total !== null) meta.total = Number(row.total);
  if (row.loaded_at) meta.loadedAt = row.loaded_at;
  if (row.error) meta.error = row.error;
  if (row.reading) meta.reading = row.reading;
  if (row.resubmit === 1) meta.resubmit = true;
  if (row.files_root) meta.filesRoot = row.files_root;
  if (row.database_id) meta.database = row.database_id;
  if (row.expires_at !== null) meta.expiresAt = Number(row.expires_at);
  if (row.bank) meta.bank = row.bank;
  if (row.type) meta.type = row.type;
  if (row.profile_path) meta.profilePath = row.profile_path;
  if (row.profile_sha256) meta.profileSha256 = row.profile_sha256;
  return meta;
}

/** The batch's row in the database (src/batch/sql/, one operation a file), its profile and its keys' expiry in Redis. */
export function createBatchStore(redis: Redis, keys: Keys, db: Database): BatchStore {
  const redisKeys = (id: string): string[] => [keys.batch(id), keys.rows(id), keys.checkpoints(id)];
  const expire = (id: string, exp: number, dropProfile = false) => EXPIRE.run(redis, redisKeys(id), [exp, dropProfile ? '1' : '']);
  return {
    async open(meta, profile, retentionMs = DEFAULT_RETENTION_MS) {
      const opened = await openBatch(db, meta, profile.organization?.inn ?? '', retentionMs);
      // The profile, then its expiry: a profile never outlives the batch it came with.
      // The database's id beside it: a worker on another database finds no batch row, and must
      // leave the jobs to that database's workers rather than drop them.
      await redis.hset(keys.batch(meta.id), 'profile', JSON.stringify(profile), 'database', meta.database ?? '');
      await expire(meta.id, opened.expiresAt);
      return { fresh: opened.fresh };
    },
    async heartbeat(id) {
      const expiresAt = await heartbeatBatch(db, id);
      if (expiresAt !== undefined) await expire(id, expiresAt);
    },
    async setTotal(id, total, retentionMs = DEFAULT_RETENTION_MS) {
      await expire(id, await markLoaded(db, id, total, retentionMs));
    },
    async fail(id, error) {
      const failed = await markFailed(db, id, error);
      if (failed) await expire(id, failed.expiresAt, failed.dropProfile);
    },
    async get(id) {
      const row = await readBatchRow(db.kysely, id, false);
      return row && metaOf(row);
    },
    async state(id) {
      return (await readBatchField(db, id, 'state')) as BatchState | undefined;
    },
    async database(id) {
      const database = await readBatchField(db, id, 'database_id');
      // No row here: the batch may be another database's, which its hash in Redis names.
      return database || (database === undefined ? (await redis.hget(keys.batch(id), 'database')) || undefined : undefined);
    },
    async expiresAt(id) {
      const expiresAt = await readBatchField(db, id, 'expires_at');
      return expiresAt != null ? Number(expiresAt) : undefined;
    },
    async profile(id) {
      const raw = await redis.hget(keys.batch(id), 'profile');
      return raw ? (JSON.parse(raw) as BankProfile) : undefined;
    },
    list: (limit) => listBatches(db, limit),
    async restoreProfile(id, profile) {
      const exp = await this.expiresAt(id);
      await redis.hset(keys.batch(id), 'profile', JSON.stringify(profile));
      if (exp !== undefined) await expire(id, exp);
    },
  };
}

/**
 * The refusal for a batch id the database does not hold, naming where to look: a command run
 * from another folder may read another `.env`, and so another database or prefix.
 */
export function noSuchBatch(_redis: Redis, keys: Keys, batch: string): UsageError {
  return new UsageError(
    `There is no batch ${batch} in the database of the deployment ${keys.prefix} (realty-batch status lists the batches; DATABASE_URL and REALTY_PREFIX say where to look: the environment, .env in the working directory, or --env-file <file>; realty-batch db status names the database).`,
  );
}
