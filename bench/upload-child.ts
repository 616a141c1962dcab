/**
 * One side of upload-ratio in a process of its own (`fork`ed by bench/upload.ts), so that
 * its peak RSS (peakRssMb) is that side's alone: a Node process, its
 * connections and whatever the upload holds in memory. The clock runs from the first
 * upload to the last answer; the process start and the Redis connection are outside it.
 *
 * - `project`: each file as a deal's agreement, through `uploadDocuments` as the worker runs
 *   it (the batch's content store: known? claim, `client.uploadContent` of a read stream,
 *   remember), `concurrency` deals at a time.
 * - `bare`: undici's `request` streaming each file (`createReadStream`, Content-Length) to
 *   the same `POST /contents` on a keep-alive Agent, the same number at a time, with one
 *   sha256 pass over the bytes it sends, compared with the load's at the end: the integrity
 *   check the product needs (issue 43), and nothing more.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { Transform } from 'node:stream';
import { Agent, request } from 'undici';
import type { CheckedDocumentFile, Deal } from '../src/domain/deal.js';
import { createLogger } from '../src/logger.js';
import { createRealtyClient } from '../src/realty/client.js';
import { createRedis } from '../src/redis/connection.js';
import { createKeys } from '../src/redis/keys.js';
import { CONTENTS_PATH } from '../src/domain/gateway.js';
import { createContentStore } from '../src/worker/content-store.js';
import { DealRun, type DealJob } from '../src/worker/deal/run.js';
import type { DealProcessorContext } from '../src/worker/deal/context.js';
import { uploadDocuments } from '../src/worker/upload-documents.js';

export interface UploadJob {
  side: 'project' | 'bare';
  url: string;
  sessionId: string;
  redisUrl: string;
  prefix: string;
  concurrency: number;
  files: CheckedDocumentFile[];
}

export interface UploadReply {
  seconds: number;
  bytes: number;
  maxRssMb: number;
  /** CPU (user + system) of this side's process over the clock: a figure the host's load moves less than MB/s. */
  cpuMs: number;
}

const job = JSON.parse(process.argv[2]!) as UploadJob;

/** Runs `work` on every index, `concurrency` at a time. */
async function pool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

async function project(): Promise<() => Promise<void>> {
  const redis = createRedis(job.redisUrl);
  await redis.connect();
  const keys = createKeys(job.prefix);
  const client = createRealtyClient({
    baseUrl: job.url,
    sessionId: job.sessionId,
    timeoutMs: 30_000,
    // As createDealWorker sizes its pool.
    connections: Math.max(8, job.concurrency),
  });
  // What uploadDocuments reads of the worker's context; the rest of it is never touched here.
  const ctx = { client, contents: createContentStore(redis, keys), timeoutMs: 30_000, logger: createLogger({ level: 'silent' }) };
  return async () => {
    await pool(job.files.length, job.concurrency, async (i) => {
      const deal = { dealId: `U-${i}`, agreement: { file: job.files[i]! } } as unknown as Deal;
      const dealJob = {
        data: { batch: 'bench', row: i + 1, dealId: deal.dealId, deal },
        attemptsMade: 0,
        queueQualifiedName: `${keys.bullPrefix}:deals`,
        id: String(i + 1),
      } as unknown as DealJob;
      const run = new DealRun(ctx as unknown as DealProcessorContext, dealJob, 'token');
      const step = await uploadDocuments(run);
      if (step !== undefined || !run.uploaded) throw new Error(`upload ${i}: ${JSON.stringify(step)}`);
    });
    await client.close();
    redis.disconnect();
  };
}

function bare(): () => Promise<void> {
  const agent = new Agent({ connections: Math.max(8, job.concurrency), keepAliveTimeout: 30_000 });
  const url = `${job.url}${CONTENTS_PATH}`;
  return async () => {
    await pool(job.files.length, job.concurrency, async (i) => {
      const file = job.files[i]!;
      const hash = createHash('sha256');
      const body = createReadStream(file.path).pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            hash.update(chunk);
            done(null, chunk);
          },
        }),
      );
      const response = await request(url, {
        method: 'POST',
        headers: {
          'content-type': file.contentType,
          'content-length': String(file.size),
          accept: 'application/json',
          authorization: `auth.sid ${job.sessionId}`,
        },
        body,
        dispatcher: agent,
      });
      const answer = (await response.body.json()) as { id?: string };
      if (response.statusCode !== 201 || !answer.id) throw new Error(`upload ${i}: ${response.statusCode}`);
      if (hash.digest('hex') !== file.sha256) throw new Error(`upload ${i}: the bytes sent are not the file's`);
    });
    await agent.close();
  };
}

/**
 * This process' peak RSS (MB): Linux's VmHWM, the high-water mark of its own memory since its
 * exec. Not `process.resourceUsage().maxRSS`: Linux keeps a forked child's maxrss across exec,
 * so a child of the bench (holding the files it wrote, over 200 MB) read the bench's peak, the
 * same on both sides (229–239 MB against this process' 40-odd, 2026-11-29).
 */
function peakRssMb(): number {
  try {
    const kib = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kib) return Number(kib) / 1024;
  } catch {
    // Not Linux: the rusage figure, which may hold the parent's.
  }
  return process.resourceUsage().maxRSS / 1024;
}

const upload = job.side === 'project' ? await project() : bare();
const cpu = process.cpuUsage();
const started = performance.now();
await upload();
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
const reply: UploadReply = {
  seconds,
  bytes: job.files.reduce((sum, f) => sum + f.size, 0),
  maxRssMb: peakRssMb(),
  cpuMs: (used.user + used.system) / 1000,
};
process.send?.(reply);
process.disconnect?.();
