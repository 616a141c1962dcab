/**
 * upload-ratio: bytes/s of the project's upload path (uploadDocuments, as the worker runs
 * it: once per sha256, streamed from disk) against bare undici streaming of the same files
 * to the same sandbox `POST /contents` with one sha256 pass of the bytes it sends (issue 43:
 * the integrity check the product needs; a baseline without it cannot be reached by any upload
 * that checks what it sends). Each side runs in a process of its own
 * (upload-child.ts), so that its peak RSS is its own; the sandbox runs in a third. Paired
 * runs, the bare one right after the project's; each project run has an empty content store
 * (a new prefix), so every file really goes up.
 */
import { fork } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import type { CheckedDocumentFile } from '../src/domain/deal.js';
import { settledChangeTimeMs } from '../src/files/regular-file.js';
import type { BenchContext } from './context.js';
import { median, progress, ratioFigure, round, type Figure } from './measure.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox.js';
import type { UploadJob, UploadReply } from './upload-child.js';

/** The 200 files of 2 MB; the quick profile sends half of them (the ratio holds: bench/README.md). */
const FILES = { quick: 100, full: 200 };
const FILE_BYTES = 2 * 1024 * 1024;
/** Uploads in flight at once, each side. */
const CONCURRENCY = 10;

/**
 * `count` distinct PDF-headed files of random bytes, with what the load would keep of each: a
 * night's files are there long before their load, so it is taken once their change times have
 * settled (CHANGE_TIME_SETTLED_MS; waited for), as the load takes it.
 */
async function writeFiles(dir: string, count: number): Promise<CheckedDocumentFile[]> {
  await mkdir(dir, { recursive: true });
  const written: Array<{ path: string; bytes: Buffer }> = [];
  for (let i = 0; i < count; i++) {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(FILE_BYTES - 9)]);
    const path = join(dir, `agreement-${i}.pdf`);
    await writeFile(path, bytes);
    written.push({ path, bytes });
  }
  const last = (await stat(written.at(-1)!.path)).ctimeMs;
  while (settledChangeTimeMs({ ctimeMs: last }, Date.now()) === undefined) await setTimeout(100);
  const files: CheckedDocumentFile[] = [];
  for (const { path, bytes } of written) {
    const stats = await stat(path);
    files.push({
      path,
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      inode: stats.ino,
      changedAtMs: settledChangeTimeMs(stats, Date.now())!,
    });
  }
  return files;
}

function sideRun(job: UploadJob): Promise<UploadReply> {
  return new Promise((resolve, reject) => {
    const child = fork(join(import.meta.dirname, 'upload-child.js'), [JSON.stringify(job)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let reply: UploadReply | undefined;
    child.once('message', (m: UploadReply) => (reply = m));
    child.once('error', reject);
    child.once('exit', (code) =>
      reply && code === 0 ? resolve(reply) : reject(new Error(`upload ${job.side}: the child exited ${code}`)),
    );
  });
}

async function checkedRun(ctx: BenchContext, sandbox: SandboxProcess, job: UploadJob): Promise<UploadReply> {
  const before = (await sandbox.stats()).contents;
  const reply = await sideRun(job);
  const after = (await sandbox.stats()).contents;
  await ctx.redis.clear(job.prefix);
  if (after.uploads - before.uploads !== job.files.length || after.bytes - before.bytes !== reply.bytes)
    throw new Error(`upload ${job.side}: the sandbox received ${after.uploads - before.uploads} of ${job.files.length} files`);
  return reply;
}

export async function uploadFigure(ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.full ? FILES.full : FILES.quick;
  const dir = join(ctx.dir, 'uploads');
  const files = await writeFiles(dir, count);
  const sandbox = await startSandboxProcess(0);
  const project: UploadReply[] = [];
  const baseline: UploadReply[] = [];
  const job = (side: UploadJob['side'], tag: string): UploadJob => ({
    side,
    url: sandbox.url,
    sessionId: sandbox.sessionId,
    redisUrl: ctx.redis.url,
    prefix: `bench-${tag}`,
    concurrency: CONCURRENCY,
    files,
  });
  const mbps = (r: UploadReply): string =>
    `${(r.bytes / r.seconds / 1e6).toFixed(0)} MB/s, CPU ${r.cpuMs.toFixed(0)} ms, peak RSS ${r.maxRssMb.toFixed(0)} MB`;
  try {
    progress(`upload: ${count} files of ${FILE_BYTES / 1024 / 1024} MB written`);
    // One untimed run each side: the sandbox's first uploads and the page cache.
    await checkedRun(ctx, sandbox, job('project', 'upw'));
    await checkedRun(ctx, sandbox, job('bare', 'ubw'));
    for (let run = 1; run <= ctx.runs; run++) {
      project.push(await checkedRun(ctx, sandbox, job('project', `up${run}`)));
      baseline.push(await checkedRun(ctx, sandbox, job('bare', `ub${run}`)));
      progress(
        `upload run ${run}/${ctx.runs}: uploadDocuments ${mbps(project.at(-1)!)}; bare undici + one sha256 ${mbps(baseline.at(-1)!)}`,
      );
    }
  } finally {
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const rate = (r: UploadReply): number => r.bytes / r.seconds / 1e6;
  const figure = ratioFigure(
    'upload-ratio',
    project.map(rate),
    baseline.map(rate),
    'MB/s',
    0.9,
    `${count} distinct files of ${FILE_BYTES / 1024 / 1024} MB, ${CONCURRENCY} at a time each side, each side in a process of its own: uploadDocuments (content store + client.uploadContent of a read stream) against undici request streaming the same files to the same sandbox POST /contents with one sha256 pass of the bytes sent; peak RSS and CPU of each side's process in details`,
  );
  return [
    {
      ...figure,
      details: {
        files: count,
        fileBytes: FILE_BYTES,
        concurrency: CONCURRENCY,
        projectPeakRssMb: project.map((r) => round(r.maxRssMb)),
        baselinePeakRssMb: baseline.map((r) => round(r.maxRssMb)),
        projectPeakRssMbMedian: round(median(project.map((r) => r.maxRssMb))),
        baselinePeakRssMbMedian: round(median(baseline.map((r) => r.maxRssMb))),
        // The CPU (user + system) of each side's process while its clock ran: on two shared
        // cores the MB/s follow the host's load, the CPU a file costs much less.
        projectCpuMs: project.map((r) => round(r.cpuMs)),
        baselineCpuMs: baseline.map((r) => round(r.cpuMs)),
      },
    },
  ];
}
