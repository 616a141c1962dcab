/**
 * `/batches`: every recent batch with its counts, and its results and attention
 * files to download. The files are written by the code `results` uses, into a
 * temporary directory, streamed, then removed.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import { InputError, UsageError } from '../errors.js';
import { parseReading } from '../input/reading-options.js';
import type { Logger } from '../logger.js';
import { createBatchStore, type BatchMeta } from '../batch/batch-store.js';
import { BATCH_ID, type Keys } from '../redis/keys.js';
import { writeAttention } from '../results/attention.js';
import { batchStatus, type BatchStatus } from '../batch/batch-status.js';
import { writeResults } from '../results/write-results.js';
import { renderBatchesPage } from './batches-page.js';
import { readStatesAge } from '../feed/states-age.js';
import type { Lang } from '../config.js';

/** The page lists at most this many batches, newest first. */
export const MAX_BATCHES = 100;
/** Batches whose status is read at once: each is a scan of its outcomes. */
const STATUS_CONCURRENCY = 4;

export interface BatchesRoutesOptions {
  redis: Redis;
  keys: Keys;
  /** The system of record: the docflows' states. */
  db: Database;
  /** Where Bull Board is mounted, for the links. */
  boardPath: string;
  /** The language of the attention file and of the results for Excel (`dashboard --lang`). */
  lang?: Lang;
  logger?: Logger;
}

/** An answer other than 200, with its one sentence. */
class PageError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** Fixed: an answer that repeated the query would let a link put any text on this origin. */
export const BAD_FORMAT = 'The format must be csv or jsonl.';

type BatchParams = { Params: { id: string } };
type ResultsQuery = BatchParams & { Querystring: { format?: string; excel?: string } };

const ATTENTION_TYPES = {
  csv: 'text/csv',
  json: 'application/json',
  jsonl: 'application/x-ndjson',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const;
const FORMAT_BY_EXTENSION: Record<string, keyof typeof ATTENTION_TYPES> = {
  '.csv': 'csv',
  '.txt': 'csv',
  '.json': 'json',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
};

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/**
 * Streams a file written into `dir` as a download, and removes `dir` once the stream is done.
 * `no-store`: neither the browser nor a proxy keeps a copy (the attention file holds the owners'
 * personal data; a results file is no one's to keep either).
 */
function sendDownload(reply: FastifyReply, dir: string, file: string, filename: string, contentType: string): FastifyReply {
  const stream = createReadStream(file);
  stream.once('close', () => void rm(dir, { recursive: true, force: true }));
  return reply
    .header('content-disposition', `attachment; filename="${filename}"`)
    .header('cache-control', 'no-store')
    .type(contentType)
    .send(stream);
}

export function batchesRoutes(options: BatchesRoutesOptions) {
  const { redis, keys, db, logger } = options;
  const store = createBatchStore(redis, keys, db);

  /** The batch of a download, loaded completely; one sentence otherwise. */
  async function loadedBatch(id: string): Promise<BatchMeta & { total: number }> {
    if (!BATCH_ID.test(id)) throw new PageError(404, 'There is no such batch.');
    const meta = await store.get(id);
    if (!meta) throw new PageError(404, `There is no batch ${id} (it may have passed its retention).`);
    if (meta.state === 'failed')
      throw new PageError(409, `Batch ${id} did not load completely (${meta.error ?? 'unknown error'}); nothing of it was sent.`);
    if (meta.total === undefined || meta.state !== 'loaded')
      throw new PageError(409, `Batch ${id} is still loading: its files exist once the whole input was read.`);
    return { ...meta, total: meta.total };
  }

  /** A temporary directory for one download, removed when writing fails (else after streaming). */
  async function writeInto<T>(write: (dir: string) => Promise<T>): Promise<{ dir: string; result: T }> {
    const dir = await mkdtemp(join(tmpdir(), 'realty-dashboard-'));
    try {
      return { dir, result: await write(dir) };
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- fastify waits for a plugin that is an async function
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler((err, request, reply) => {
      if (err instanceof PageError) return reply.code(err.status).type('text/plain; charset=utf-8').send(`${err.message}\n`);
      // The input is gone or changed: the attention file cannot be written until it is back.
      if (err instanceof InputError) return reply.code(409).type('text/plain; charset=utf-8').send(`${err.message}\n`);
      logger?.error({ err: { message: (err as Error).message }, url: request.url }, 'dashboard page failed');
      return reply.code(500).type('text/plain; charset=utf-8').send('The dashboard could not answer (see its log).\n');
    });

    app.get('/batches', async (_request, reply) => {
      const ids = (await store.list(MAX_BATCHES)).map((b) => b.id);
      const unreadable: string[] = [];
      const found = await mapLimit(ids, STATUS_CONCURRENCY, async (id): Promise<BatchStatus | undefined> => {
        try {
          return await batchStatus(redis, keys, db, id);
        } catch (err) {
          // Past its retention between the list and the read: gone.
          if (err instanceof UsageError) return undefined;
          logger?.warn({ batch: id, err: { message: (err as Error).message } }, 'could not read a batch for the dashboard');
          unreadable.push(id);
          return undefined;
        }
      });
      const statuses = found.filter((s): s is BatchStatus => s !== undefined);
      const html = renderBatchesPage(statuses, {
        boardPath: options.boardPath,
        queueName: keys.queueName,
        limit: MAX_BATCHES,
        unreadable,
        generatedAt: new Date(),
        statesAge: await readStatesAge(db, redis, keys),
      });
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
    });

    app.get<ResultsQuery>('/batches/:id/results.csv', async (request, reply) => {
      const format = request.query.format ?? 'csv';
      if (format !== 'csv' && format !== 'jsonl') throw new PageError(400, BAD_FORMAT);
      const excel = format === 'csv' && (request.query.excel === '1' || request.query.excel === 'true');
      const meta = await loadedBatch(request.params.id);
      const name = `${meta.id}.results${excel ? '.excel' : ''}.${format}`;
      const { dir } = await writeInto((d) =>
        writeResults({ redis, keys, db, batch: meta.id, total: meta.total, out: join(d, name), excel, lang: options.lang }),
      );
      return sendDownload(
        reply,
        dir,
        join(dir, name),
        name,
        format === 'jsonl' ? 'application/x-ndjson; charset=utf-8' : 'text/csv; charset=utf-8',
      );
    });

    app.get<BatchParams>('/batches/:id/attention.csv', async (request, reply) => {
      const meta = await loadedBatch(request.params.id);
      // In the input's own format and encoding, so it loads again as it is: the name says which.
      const format = parseReading(meta.reading).format ?? FORMAT_BY_EXTENSION[extname(meta.file).toLowerCase()] ?? 'csv';
      const name = `${meta.id}.attention.${format}`;
      const { dir } = await writeInto((d) => writeAttention({ redis, keys, db, batch: meta.id, out: join(d, name), lang: options.lang }));
      return sendDownload(reply, dir, join(dir, name), name, ATTENTION_TYPES[format]);
    });
  };
}
