/**
 * For the dashboard tests: a small batch of sample rows run to its end against the sandbox, on
 * the parts of a test's harness (its Redis prefix, database, folder and sandbox, cleaned up by
 * the harness), and HTTP calls with basic auth.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Redis } from 'ioredis';
import { runBatch, type RunOptions, type RunResult } from '../../src/pipeline/run-batch.js';
import type { Database } from '../../src/db/database.js';
import { createDealProcessor } from '../../jobs/deal.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import type { Deal } from '../../src/domain/deal.js';
import { createLogger } from '../../src/logger.js';
import type { Keys } from '../../src/redis/keys.js';
import type { RunningSandbox, SandboxOptions } from '../../src/sandbox/index.js';
import { csvText, HEADER, ROWS } from './fixtures.js';
import { harness, type Harness, type HarnessOptions } from './harness.js';

export const SESSION = 'dashboard-test-session';
export const CRIMEA = 'Республика Крым';
/** Queued through suggest (Новосибирская область). */
export const BY_SUGGEST = 'NSK-2026-000123';
/** Queued, with its cadastral number (Москва). */
export const WITH_NUMBER = 'MSK-2026-004511';
/** Invalid: its SNILS checksum does not match. */
export const INVALID = 'NSK-2026-000127';
/** Unavailable while Республика Крым is an EGRON region. */
export const EGRON = 'CRM-2026-000017';

export const sampleRow = (dealId: string): string[] => ROWS.find((r) => r[0] === dealId)!;

/** A sample row as the worker sees it: validated and normalised. */
export function sampleDeal(dealId: string): Deal {
  const record = Object.fromEntries(HEADER.map((h, i) => [h, sampleRow(dealId)[i] ?? '']));
  const validated = createDealValidator()(record);
  if (!validated.ok) throw new Error(`sample ${dealId} is not valid`);
  return validated.deal;
}

/** What a batch runs on: the parts of a harness that `batchHarness` made (the sandbox knows SESSION; the Redis client suits BullMQ). */
export type BatchParts = Pick<Harness, 'redis' | 'keys' | 'prefix' | 'db' | 'dir' | 'sandbox' | 'profile'>;

/**
 * A harness for a file whose tests read a batch: once for the file unless told, its sandbox with
 * the session SESSION (and `sandbox`'s options), its Redis client with `maxRetriesPerRequest: null`
 * (BullMQ's workers block).
 */
export function batchHarness(options: Omit<HarnessOptions, 'sandbox'> & { sandbox?: SandboxOptions } = {}) {
  return harness({
    per: 'file',
    ...options,
    redis: { maxRetriesPerRequest: null, ...options.redis },
    sandbox: { sessions: [SESSION], ...options.sandbox },
  });
}

export interface DashboardBatch {
  redis: Redis;
  keys: Keys;
  /** The batch's database (the ledger, the feed, the docflows' states): the harness's. */
  db: Database;
  prefix: string;
  dir: string;
  sandbox: RunningSandbox;
  batch: string;
  /** The batch's input file. */
  file: string;
  result: RunResult;
}

export interface DashboardInput {
  /** Whole rows in the samples' columns, after those of `dealIds`. */
  rows?: string[][];
  /** The input file's name; default `<batch>.csv`. */
  fileName?: string;
  /**
   * Deals whose claim in the ledger Redis refuses at every try (READONLY, as a replica does
   * after a failover): a failure of the machinery. Their rows end `failed` ERR_INTERNAL, and
   * their jobs fail: what Bull Board's failed list shows.
   */
  refusedClaims?: string[];
}

/** jobs/deal.ts, with the ledger's claim of `refused` deals answered by a Redis error. */
function refusingClaims(refused: ReadonlySet<string>): RunOptions['processor'] {
  return (ctx) =>
    createDealProcessor({
      ...ctx,
      ledger: {
        ...ctx.ledger,
        claim: (request) =>
          refused.has(request.dealId)
            ? Promise.reject(new Error("READONLY You can't write against a read only replica."))
            : ctx.ledger.claim(request),
      },
    });
}

/** A sample row with some of its fields replaced (by their column names). */
export function changedRow(dealId: string, fields: Record<string, string>): string[] {
  const row = [...sampleRow(dealId)];
  for (const [field, value] of Object.entries(fields)) row[HEADER.indexOf(field)] = value;
  return row;
}

/** Runs `dealIds` as batch `batch` (attempts 2, backoff 50 ms) on the harness's parts, which keep it until the harness cleans up. */
export async function runDashboardBatch(
  parts: BatchParts,
  dealIds: string[],
  batch = 'night',
  input: DashboardInput = {},
): Promise<DashboardBatch> {
  const { redis, keys, prefix, dir, sandbox } = parts;
  const db = parts.db.db;
  const file = join(dir, input.fileName ?? `${batch}.csv`);
  await writeFile(file, csvText([...dealIds.map(sampleRow), ...(input.rows ?? [])]));
  const result = await runBatch({
    file,
    profile: await parts.profile.load(),
    batch,
    redis,
    keys,
    db,
    logger: createLogger({ level: 'silent', destination: new PassThrough() }),
    apiUrl: sandbox.url,
    sessionId: SESSION,
    processor: input.refusedClaims ? refusingClaims(new Set(input.refusedClaims)) : createDealProcessor,
    worker: { concurrency: 4, attempts: 2, backoffMs: 50, timeoutMs: 2000 },
    waiting: { pollMs: 20 },
    output: { out: join(dir, `${batch}.results.csv`), rejects: join(dir, `${batch}.rejects.csv`) },
  });
  return { redis, keys, db, prefix, dir, sandbox, batch, file, result };
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The body's bytes (text() drops a BOM). */
  bytes: Buffer;
}

export async function call(url: string, init: { method?: string; authorization?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.authorization) headers.authorization = init.authorization;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    redirect: 'manual',
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, text: bytes.toString('utf8'), bytes };
}
