/**
 * The only reader of the environment. Flags win over these values; defaults are
 * written with their units.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as z from 'zod';
import { databaseTargetOf, type DatabaseTarget } from './db/location.js';
import { ConfigError } from './errors.js';
import type { RedisTarget } from './redis/connection.js';
import type { Credentials } from './realty/session.js';
import { LANGS, type Lang } from './input/lang.js';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const DAY = 24 * 60 * MINUTE;

export const DEFAULTS = Object.freeze({
  redisUrl: 'redis://127.0.0.1:6379',
  prefix: 'realty',
  logLevel: 'info',
  attempts: 8,
  backoffMs: 30 * SECOND,
  timeoutMs: 30 * SECOND,
  concurrency: 20,
  retentionDays: 30,
  /** Five years: how long a deal's entry is kept after its last change (REALTY_LEDGER_DAYS, `db prune --ledger-days`). */
  ledgerDays: 1830,
});

/** The languages of the files for a person (`--lang`): kept below, where the loader takes them too. */
export { LANGS, type Lang };

/**
 * The language of the locale: `ru` when the first of LC_ALL, LC_MESSAGES and LANG that is
 * set (POSIX order) starts with `ru`, else `en`.
 */
export function langOfLocale(env: NodeJS.ProcessEnv): Lang {
  const locale = [env.LC_ALL, env.LC_MESSAGES, env.LANG].find((v) => v !== undefined && v.trim() !== '');
  return locale?.trim().toLowerCase().startsWith('ru') ? 'ru' : 'en';
}

/** pino's levels, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const envSchema = z.object({
  REDIS_URL: z.string().min(1).default(DEFAULTS.redisUrl),
  // Checked by databaseTargetOf, whose sentences name the forms it takes.
  DATABASE_URL: z.string().optional(),
  REDIS_CLUSTER_NODES: z.string().optional(),
  REDIS_SENTINELS: z.string().optional(),
  REDIS_SENTINEL_NAME: z.string().optional(),
  REDIS_SENTINEL_PASSWORD: z.string().optional(),
  REALTY_API_URL: z.url({ message: 'must be a URL such as https://host' }).optional(),
  REALTY_SESSION_ID: z.string().min(1).optional(),
  REALTY_LOGIN: z.string().min(1).optional(),
  REALTY_PASSWORD: z.string().min(1).optional(),
  REALTY_ACCOUNT_ID: z.string().min(1).optional(),
  // Checked by sessionKeyOf, whose sentences name the file and what to set.
  REALTY_SESSION_KEY: z.string().optional(),
  REALTY_SESSION_KEY_FILE: z.string().optional(),
  REALTY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,40}$/, 'must be 1 to 40 letters, digits, dots, dashes or underscores')
    .default(DEFAULTS.prefix),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  REALTY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(DEFAULTS.retentionDays),
  REALTY_LEDGER_DAYS: z.coerce.number().int().min(1).max(3650).default(DEFAULTS.ledgerDays),
  // The dashboard checks these itself when it starts (src/dashboard/auth.ts, security.ts), with
  // its own sentences: here they are only read, so a bad one never stops another command.
  DASHBOARD_USER: z.string().optional(),
  DASHBOARD_PASSWORD: z.string().optional(),
  DASHBOARD_PUBLIC_URL: z.string().optional(),
});

/** The operations page's settings from the environment (`realty-batch dashboard`); its flags win. */
export interface DashboardConfig {
  /** Basic auth of every route; both are required unless `--no-auth`. The password goes to the server only, never to a log. */
  readonly user: string | undefined;
  readonly password: string | undefined;
  /** The origin the page is opened at behind a proxy, as `--public-url`. */
  readonly publicUrl: string | undefined;
}

export interface Config {
  readonly redisUrl: string;
  /** Where Redis is: one server, a cluster or sentinels (src/queue/connection.ts). */
  readonly redis: RedisTarget;
  /**
   * The system of record (src/db): DATABASE_URL, or the embedded SQLite file
   * $XDG_STATE_HOME/realty-batch/<prefix>.db (~/.local/state without it), never the working folder.
   */
  readonly database: DatabaseTarget;
  readonly apiUrl: string | undefined;
  readonly sessionId: string | undefined;
  /** REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID, when all three are set: the fleet logs in itself. */
  readonly credentials: Credentials | undefined;
  /**
   * REALTY_SESSION_KEY, or the contents of REALTY_SESSION_KEY_FILE (0600 or stricter): the secret the
   * fleet's session is sealed with in Redis (src/redis/fleet-session.ts). Never written anywhere.
   */
  readonly sessionKey: string | undefined;
  readonly prefix: string;
  readonly logLevel: LogLevel;
  /** LOG_LEVEL was given (the environment, .env or --env-file): lines go to stderr as they are, even on a terminal. */
  readonly logLevelGiven: boolean;
  /** Where a command on a terminal writes its log file: $XDG_STATE_HOME/realty-batch/logs (~/.local/state without it). */
  readonly logDir: string;
  /** How long a batch's outcomes, rows and metadata stay in Redis after its load. */
  readonly retentionMs: number;
  /** How long a deal's ledger entry stays after its last change: far longer than batches. */
  readonly ledgerMs: number;
  readonly dashboard: DashboardConfig;
  /** The hints' language when no `--lang` is given: from the locale (LC_ALL, LC_MESSAGES, LANG). */
  readonly lang: Lang;
}

let dotenvLoaded = false;

/** Reads `.env` from the working directory once, when present; real environment variables win. */
function loadDotenv(): void {
  if (dotenvLoaded) return;
  dotenvLoaded = true;
  if (existsSync('.env')) process.loadEnvFile('.env');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  if (env === process.env) loadDotenv();
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ');
    throw new ConfigError(`The environment is not valid: ${problems}.`);
  }
  const e = parsed.data;
  const credentials = credentialsOf(e);
  if (credentials && e.REALTY_SESSION_ID) {
    throw new ConfigError(
      'REALTY_SESSION_ID and REALTY_LOGIN are both set: give either the session id or the login (REALTY_LOGIN, REALTY_PASSWORD, REALTY_ACCOUNT_ID), not both.',
    );
  }
  if (e.REALTY_LEDGER_DAYS < e.REALTY_RETENTION_DAYS) {
    throw new ConfigError(
      `REALTY_LEDGER_DAYS (${e.REALTY_LEDGER_DAYS}) is shorter than REALTY_RETENTION_DAYS (${e.REALTY_RETENTION_DAYS}): the ledger must outlive the batches, or a batch loaded again would send its deals twice.`,
    );
  }
  const list = (v: string | undefined) =>
    v
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined;
  const redis: RedisTarget = { url: e.REDIS_URL };
  const clusterNodes = list(e.REDIS_CLUSTER_NODES);
  const sentinels = list(e.REDIS_SENTINELS);
  if (clusterNodes) redis.clusterNodes = clusterNodes;
  if (sentinels) redis.sentinels = sentinels;
  if (e.REDIS_SENTINEL_NAME) redis.sentinelName = e.REDIS_SENTINEL_NAME;
  if (e.REDIS_SENTINEL_PASSWORD) redis.sentinelPassword = e.REDIS_SENTINEL_PASSWORD;
  return Object.freeze({
    redisUrl: e.REDIS_URL,
    redis,
    database: Object.freeze(databaseTargetOf(e.DATABASE_URL, e.REALTY_PREFIX, env)),
    apiUrl: e.REALTY_API_URL?.replace(/\/+$/, ''),
    sessionId: e.REALTY_SESSION_ID,
    credentials,
    sessionKey: sessionKeyOf(e.REALTY_SESSION_KEY, e.REALTY_SESSION_KEY_FILE),
    prefix: e.REALTY_PREFIX,
    logLevel: e.LOG_LEVEL,
    logLevelGiven: env.LOG_LEVEL !== undefined,
    logDir: logDirOf(env),
    retentionMs: e.REALTY_RETENTION_DAYS * DAY,
    ledgerMs: e.REALTY_LEDGER_DAYS * DAY,
    dashboard: Object.freeze({ user: e.DASHBOARD_USER, password: e.DASHBOARD_PASSWORD, publicUrl: e.DASHBOARD_PUBLIC_URL }),
    lang: langOfLocale(env),
  });
}

const LOGIN_VARIABLES = ['REALTY_LOGIN', 'REALTY_PASSWORD', 'REALTY_ACCOUNT_ID'] as const;

/** The login's three variables: all or none; a missing one is named (the password's value never is). */
function credentialsOf(e: Partial<Record<(typeof LOGIN_VARIABLES)[number], string>>): Credentials | undefined {
  const missing = LOGIN_VARIABLES.filter((name) => e[name] === undefined);
  if (missing.length === LOGIN_VARIABLES.length) return undefined;
  if (missing.length > 0) {
    const given = LOGIN_VARIABLES.filter((name) => !missing.includes(name));
    throw new ConfigError(
      `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set: ${given.join(' and ')} ${given.length === 1 ? 'is' : 'are'} set, and a login to the gateway needs REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID.`,
    );
  }
  return Object.freeze({ login: e.REALTY_LOGIN!, password: e.REALTY_PASSWORD!, accountId: e.REALTY_ACCOUNT_ID! });
}

/** A session key shorter than this is refused: `openssl rand -base64 32` gives 44 characters. */
export const SESSION_KEY_MIN_LENGTH = 32;

/**
 * REALTY_SESSION_KEY, or REALTY_SESSION_KEY_FILE's contents (trailing line breaks dropped): not
 * both; the file only when no one but its owner may read or write it (0600, 0400), as ssh
 * refuses a private key others may read. The key's value is never put in a sentence.
 */
function sessionKeyOf(value: string | undefined, file: string | undefined): string | undefined {
  if (value !== undefined && file !== undefined)
    throw new ConfigError('REALTY_SESSION_KEY and REALTY_SESSION_KEY_FILE are both set: give the session key one way, not both.');
  let key = value;
  if (file !== undefined) {
    let mode: number;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) throw new ConfigError(`REALTY_SESSION_KEY_FILE ${file} is not a regular file.`);
      mode = stat.mode & 0o777;
      key = readFileSync(file, 'utf8').replace(/[\r\n]+$/, '');
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new ConfigError(`REALTY_SESSION_KEY_FILE ${file} cannot be read (${reason}).`, { cause: err });
    }
    if ((mode & 0o077) !== 0)
      throw new ConfigError(
        `REALTY_SESSION_KEY_FILE ${file} may be read or written by others (mode ${mode.toString(8).padStart(4, '0')}): make it 0600 (chmod 600), owned by the user that runs realty-batch.`,
      );
  }
  if (key !== undefined && key.length < SESSION_KEY_MIN_LENGTH)
    throw new ConfigError(
      `${file !== undefined ? `REALTY_SESSION_KEY_FILE ${file}` : 'REALTY_SESSION_KEY'} holds a key shorter than ${SESSION_KEY_MIN_LENGTH} characters: make one with openssl rand -base64 32.`,
    );
  return key;
}

/** The XDG base directory spec's state home ("logs, history"); a relative XDG_STATE_HOME is ignored, as the spec says. */
function logDirOf(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME;
  const stateHome = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'state');
  return join(stateHome, 'realty-batch', 'logs');
}

/**
 * `LOG_LEVEL` alone, for a command's last words: the rest of the environment may be
 * what failed. Undefined when it is not a level.
 */
export function logLevelOf(env: NodeJS.ProcessEnv = process.env): LogLevel | undefined {
  if (env === process.env) loadDotenv();
  const parsed = envSchema.shape.LOG_LEVEL.safeParse(env.LOG_LEVEL);
  return parsed.success ? parsed.data : undefined;
}

/** The gateway's url and how to be let in: a fixed session id, or the login the fleet logs in with. */
export type Gateway = { apiUrl: string } & (
  | { sessionId: string; credentials?: undefined }
  | { credentials: Credentials; sessionId?: undefined; /** REALTY_SESSION_KEY: seals the fleet's session in Redis. */ sessionKey?: string }
);

/** What a worker needs to talk to the gateway; a missing value is a configuration error. */
export function requireGateway(config: Config, flags: { apiUrl?: string; sessionId?: string } = {}): Gateway {
  const apiUrl = (flags.apiUrl ?? config.apiUrl)?.replace(/\/+$/, '');
  const sessionId = flags.sessionId ?? config.sessionId;
  if (!apiUrl) throw new ConfigError('REALTY_API_URL is not set: give the gateway base url, e.g. REALTY_API_URL=https://host.');
  if (sessionId) return { apiUrl, sessionId };
  if (config.credentials)
    return { apiUrl, credentials: config.credentials, ...(config.sessionKey !== undefined && { sessionKey: config.sessionKey }) };
  throw new ConfigError(
    'REALTY_SESSION_ID is not set: give the session id that goes after auth.sid, or REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID to log in.',
  );
}

// --- The loader's tunables (src/batch/load-batch.ts, src/batch/enqueue.ts) and its webhook's (src/schedule/notify.ts) ---

/** How a load paces its work against Redis. Constants, not read from the environment; each name ends in its unit. */
export const LOADER = Object.freeze({
  /** Rows per chunk, i.e. jobs per `addBulk` (one round trip each): as fast as 1,000 here, and half the rows held (and promoted by the GC) per round trip. */
  chunkRows: 500,
  /**
   * An input of this many bytes or more is read and validated in a thread of its own beside the
   * enqueueing (src/batch/read-rows.ts); a smaller one in the load's own thread. A thread costs a
   * new V8 isolate and its own copy of the reading code: about 0.1 s of CPU and 20 MB of peak RSS,
   * which a small file never earns back (`load` of the CLI, `farm-bench -n 8`, in-thread over
   * threaded: 24 rows CPU 0.75, wall 0.73; 1,000 rows, 0.55 MB, 0.93 and 0.89; 3,000 rows, 1.6 MB,
   * 0.97 and 1.00; from 50,000 rows the thread reads about a third faster: docs/performance.md).
   */
  threadMinBytes: 2 * 1024 * 1024,
  /**
   * How far a load's JS heap may grow past what the last full GC kept, in percent (V8's
   * `--heap-growing-percent`): V8's own factor lets it reach up to 4 times, and a load keeps
   * little alive while promoting the rows in flight at each scavenge, so the heap would swing
   * far above what it holds, garbage for the most part; below 40 the peak hardly moves and the
   * CPU does not either (docs/performance.md). The setting is the process's, so it holds the
   * load's reading thread too.
   */
  heapGrowthPercent: 20,
  /**
   * V8's parallel scavenge while a load runs (the CLI: src/cli/heap-growth.ts). Off: a 200,000-row
   * CLI load 12.3-14.0 s → 11.6-11.8 s here, V8's helper threads 214-230 → 143-145 ticks in five
   * seconds of it, the main and reading threads getting the CPU they gave up.
   */
  parallelScavenge: false,
  /** The batch's `loadingUntil` is pushed on at most this often while it loads (it lasts `claimMs`). */
  heartbeatEveryMs: 1 * SECOND,
  /** A loader renews its claim on a loading batch at every chunk; one silent this long has died. */
  claimMs: 1 * MINUTE,
  /** Entries per HSCAN/ZSCAN page when a load walks a batch's row index or the delayed jobs (Redis' COUNT hint). */
  scanCount: 1000,
  /** Passes over a batch's jobs when taking them back while a worker holds some of them ... */
  takeBackPasses: 50,
  /** ... with this pause between two passes: a few seconds at most in all. */
  takeBackPauseMs: 100,
});

/** `--notify-url`: how the run's summary is POSTed to the webhook. */
export const NOTIFY = Object.freeze({
  /** Tries after the first one. */
  retries: 4,
  /** Wait before the first retry, doubled (`backoffFactor`) for each next one. */
  firstRetryMs: 1 * SECOND,
  backoffFactor: 2,
  /** One POST's deadline, its answer's body included. */
  timeoutMs: 10 * SECOND,
});

// --- end of the loader's tunables ---

/*
 * The deal worker's tunables (issue 22), each with its unit; read once, here. Flags that
 * override one (`--lock-ms`, `--grace-ms`, `--breaker-*`, `--feed-lag-ms`,
 * `--reconcile-timeout-ms`) take these as their defaults.
 */
export const TUNABLES = Object.freeze({
  /** How long a job stays locked to a worker that stopped answering before another takes it over (`--lock-ms`). */
  jobLockMs: 30 * SECOND,
  /** How often a job may be taken over from a worker that died before BullMQ fails it. */
  maxStalls: 5,
  /** How long a stopping worker waits for its active jobs: a gateway call's timeout and some (`--grace-ms`). */
  graceMs: 45 * SECOND,
  /** The circuit breaker: a share (0..1), a count of calls, durations, a count of probes (`--breaker-*`). */
  breaker: Object.freeze({ threshold: 0.5, minCalls: 20, windowMs: 30 * SECOND, cooldownMs: 30 * SECOND, maxProbes: 10 }),
  /** A batch's profile is read again this often, so a corrected profile reaches long-running workers. */
  profileTtlMs: 60 * SECOND,
  /** Batches whose profile a worker keeps at once (more: the cache starts afresh). */
  profileCacheSize: 100,
  /** Batches a worker remembers as loaded (more: the cache starts afresh). */
  loadedCacheSize: 1000,
  /** How long after a try's end its docflow may take to show in the news feed (`--feed-lag-ms`). */
  feedLagMs: 60 * SECOND,
  /** A read of the news feed waits at least this long, whatever `--timeout-ms` says. */
  feedTimeoutMs: 30 * SECOND,
  /** How long past the feed lag a row waits for the feed before it ends ERR_UNCERTAIN (`--reconcile-timeout-ms`). */
  reconcileTimeoutMs: 15 * MINUTE,
  /**
   * A row the news feed just answered for is woken (its delayed job promoted). A job still
   * running may be about to sleep on what it read before the page was stored: it is looked
   * at again after `wakeRetryMs`, at most `wakeTries` times (5 s in all); past that it sleeps
   * its wait out, as without a wake.
   */
  wakeRetryMs: 250,
  wakeTries: 20,
  /** A job of a batch still loading looks again after this, doubled per look, at most `loadingRecheckMaxMs`. */
  loadingRecheckMs: 2 * SECOND,
  loadingRecheckMaxMs: 5 * MINUTE,
  /** A row whose deal another row holds looks again after this, doubled per look, at most `claimRecheckMaxMs`. */
  claimRecheckMs: 2 * SECOND,
  claimRecheckMaxMs: MINUTE,
  /**
   * The slowest upload link a file upload is given time for (bytes a second): `POST /contents`
   * waits `--timeout-ms` plus a second per this many bytes, since its one deadline covers the
   * whole body (undici's own timers do not count the time a body takes to send). 256 KiB/s:
   * a 50 MB agreement gets 200 s more.
   */
  uploadFloorBytesPerSecond: 256 * 1024,
  /** Writes of an outcome retried after a failed one (a passing Redis error), the first after this. */
  outcomeWriteRetries: 5,
  outcomeWriteRetryMs: 200,
  /**
   * What the deal worker keeps of finished jobs (BullMQ's worker options `removeOnComplete` and
   * `removeOnFail`, for every job that names none itself). A finished job need not outlive its
   * outcome: the outcome store keeps every row's (REALTY_RETENTION_DAYS), and `status`, `results`,
   * `retry` and the dashboard's batches page read it, never a job. So only the last `completed`
   * jobs stay, across all batches, for Bull Board's "completed" tab (about 1 KB each, personal
   * data already stripped), instead of a week of them (about 1.3 KB a row: 1.8 GB for a week of
   * 200,000-row nights). Failed jobs (BullMQ failed them by itself, stalled too often: their rows
   * have their outcome, their data no personal data) stay for inspection, at most `failed` of
   * them and `failedMaxAgeMs`.
   */
  keptJobs: Object.freeze({ completed: 1000, failed: 10_000, failedMaxAgeMs: 30 * DAY }),
});
