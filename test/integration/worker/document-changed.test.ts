/**
 * A file a row names that changes on disk between the load and its upload (issue 25, point 1):
 * the worker hashes the file as it streams it and compares with the load's size and sha256;
 * the row ends `invalid` with DOCUMENT_CHANGED naming the field, no docflow is made, and the
 * upload is not remembered. Through the built CLI, the real sandbox (strict contents) and Redis.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { describe, expect, afterEach, vi } from 'vitest';
import { CHANGE_TIME_SETTLED_MS } from '../../../src/files/regular-file.js';
import { dealJobId, dealOf, jobDataOf, type StoredJobData } from '../../../src/queue/job-data.js';
import { DEAL_QUEUE } from '../../../src/redis/keys.js';
import type { Keys } from '../../../src/redis/keys.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';
import { storedOutcomes } from '../../helpers/outcomes.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';

const DEAL_ID = 'MSK-2026-004511';
const FILE_HEADER = [...HEADER, 'agreementFile', 'agreementSignatureFiles'];
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const SIGNATURE = TEST_SIGNATURE;
const POLL = { timeoutMs: 60_000, intervalMs: 100 };

interface Outcome {
  dealId: string;
  attempts: number;
  outcome: string;
  errorCode?: string;
  errorMessage?: string;
}

const it = harness({ label: 'doc-changed', sandbox: { sessions: ['s'], strictContents: true } });

describe('a document that changed between the load and its upload', () => {
  let store: UsedDatabase;
  let sandbox: RunningSandbox;
  let dir: string;
  let keys: Keys;
  let redis: Redis;
  /** The harness's Redis, database, sandbox, session and prefix, for the commands. */
  let given: Record<string, string>;
  const workers: ChildProcess[] = [];
  const env = () => given;
  const outcomes = (batch: string) => storedOutcomes(store.db, batch);
  const remembered = (batch: string) => redis.hgetall(keys.contents(batch));
  /** Loads the one row (no worker runs yet), changes its files with `change`, then lets a worker take it. */
  const loadChangeWork = async (batch: string, change: () => Promise<void>): Promise<Outcome> => {
    const row = [...ROWS.find((r) => r[0] === DEAL_ID)!];
    row[HEADER.indexOf('agreementContentId')] = '';
    row[HEADER.indexOf('agreementSignatureIds')] = '';
    await writeFile(join(dir, 'deals.csv'), csvText([[...row, 'docs/agreement.pdf', 'docs/agreement.pdf.sig']], { header: FILE_HEADER }));
    const loaded = await runCli(
      ['load', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--batch', batch, '--rejects', join(dir, 'r.csv')],
      env(),
    );
    expect(loaded.code).toBe(0);
    await change();
    workers.push(
      spawn(process.execPath, [CLI, 'work', '--concurrency', '2', '--attempts', '3', '--backoff-ms', '50'], {
        cwd: ROOT,
        env: childEnv(env()),
        stdio: 'ignore',
      }),
    );
    await waitFor(async () => (await outcomes(batch)).length === 1, { ...POLL, what: `the outcome of batch ${batch}` });
    return (await outcomes(batch))[0]!;
  };

  it.beforeEach(async ({ db, sandbox: started, dir: folder, keys: made, redis: client, env: madeEnv }) => {
    store = db;
    sandbox = started;
    dir = folder;
    keys = made;
    redis = client;
    given = madeEnv;
    await mkdir(join(dir, 'docs'));
    await writeFile(join(dir, 'docs', 'agreement.pdf'), PDF);
    await writeFile(join(dir, 'docs', 'agreement.pdf.sig'), SIGNATURE);
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterEach(() => {
    for (const w of workers.splice(0)) if (w.exitCode === null) w.kill('SIGKILL');
  });

  it('ends the row invalid (DOCUMENT_CHANGED, agreementFile) when the agreement changed in place, same size: nothing uploaded, no docflow', async () => {
    const outcome = await loadChangeWork('same-size', async () => {
      const changed = Buffer.from(PDF);
      changed[changed.length - 3] = 0x21; // one byte of the trailer, the size kept
      await writeFile(join(dir, 'docs', 'agreement.pdf'), changed);
    });
    expect(outcome).toMatchObject({ outcome: 'invalid', errorCode: 'DOCUMENT_CHANGED' });
    expect(outcome.errorMessage).toMatch(/^agreementFile: changed on disk after the load/);
    // The field, never the path.
    expect(outcome.errorMessage).not.toContain('docs/');
    expect(outcome.errorMessage).not.toContain(dir);
    const stats = sandbox.stats();
    expect(stats.docflowsCreated).toBe(0);
    // The last bytes were held back: the gateway never had the whole changed content.
    expect(stats.contents.uploads).toBe(0);
    expect(await remembered('same-size')).toEqual({});
    // What the hint says works: retry checks the files again and sends the file as it is now.
    const retried = await runCli(['retry', 'same-size', '--outcome', 'invalid', '--force'], env());
    expect(retried.code).toBe(0);
    await waitFor(async () => (await outcomes('same-size'))[0]?.outcome === 'queued', { ...POLL, what: 'the retried row queued' });
    expect(sandbox.stats()).toMatchObject({ docflowsCreated: 1, contents: { uploads: 2 } });
  });

  it('refuses a settled agreement (its change time kept by the load) changed in place with its mtime set back: nothing sent', async () => {
    const path = join(dir, 'docs', 'agreement.pdf');
    // A night's file: there well before its load, so the load keeps its change time.
    await vi.waitFor(async () => expect(Date.now() - (await stat(path)).ctimeMs).toBeGreaterThanOrEqual(CHANGE_TIME_SETTLED_MS), {
      timeout: CHANGE_TIME_SETTLED_MS * 3,
      interval: 100,
    });
    const outcome = await loadChangeWork('settled', async () => {
      const queue = new Queue(DEAL_QUEUE, { connection: redis, prefix: keys.bullPrefix });
      const job = await queue.getJob(dealJobId('settled', DEAL_ID));
      await queue.close();
      const file = dealOf(jobDataOf(job!.id, job!.data as StoredJobData))!.agreement!.file!;
      expect(file.changedAtMs).toBe((await stat(path)).ctimeMs);
      // The same size and modification time as the load saw: only the change time tells.
      const { atime, mtime } = await stat(path);
      const changed = Buffer.from(PDF);
      changed[changed.length - 3] = 0x21;
      await writeFile(path, changed);
      await utimes(path, atime, mtime);
    });
    expect(outcome).toMatchObject({ outcome: 'invalid', errorCode: 'DOCUMENT_CHANGED', attempts: 1 });
    expect(outcome.errorMessage).toMatch(/^agreementFile: changed on disk after the load \(its sha256 .*nothing was sent/);
    expect(sandbox.stats()).toMatchObject({ docflowsCreated: 0, contents: { uploads: 0 } });
  });

  it('ends the row invalid (DOCUMENT_CHANGED, agreementSignatureFiles) when a signature file grew: the agreement stays uploaded, no docflow', async () => {
    const outcome = await loadChangeWork('grown', () => appendFile(join(dir, 'docs', 'agreement.pdf.sig'), 'more'));
    expect(outcome).toMatchObject({ outcome: 'invalid', errorCode: 'DOCUMENT_CHANGED' });
    expect(outcome.errorMessage).toMatch(/^agreementSignatureFiles: file 1 changed on disk after the load \(its size/);
    const stats = sandbox.stats();
    expect(stats.docflowsCreated).toBe(0);
    expect(stats.contents.uploads).toBe(1);
    // Only the agreement, which had not changed, is remembered as uploaded.
    expect(Object.values(await remembered('grown'))).toHaveLength(1);
  });

  it('ends the row invalid (DOCUMENT_CHANGED) when the agreement was swapped for a link to a file outside the folder: nothing sent, and it says so', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'realty-outside-'));
    try {
      const outcome = await loadChangeWork('linked', async () => {
        // A secret of the same size: only the link gives the swap away.
        await writeFile(join(outside, 'secret'), Buffer.alloc(PDF.length, 0x41));
        await unlink(join(dir, 'docs', 'agreement.pdf'));
        await symlink(join(outside, 'secret'), join(dir, 'docs', 'agreement.pdf'));
      });
      expect(outcome).toMatchObject({ outcome: 'invalid', errorCode: 'DOCUMENT_CHANGED', attempts: 1 });
      expect(outcome.errorMessage).toBe(
        'agreementFile: changed on disk after the load (it is no longer the file the load checked: another file or a link stands in its place); nothing was sent for this row: check the file, then load the row again',
      );
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 0, contents: { uploads: 0 } });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('ends the row invalid at once when a FIFO was put in the agreement’s place, and the worker still stops when asked', async () => {
    const outcome = await loadChangeWork('fifo', async () => {
      await unlink(join(dir, 'docs', 'agreement.pdf'));
      execFileSync('mkfifo', [join(dir, 'docs', 'agreement.pdf')]);
    });
    expect(outcome).toMatchObject({ outcome: 'invalid', errorCode: 'DOCUMENT_CHANGED', attempts: 1 });
    expect(outcome.errorMessage).toMatch(/^agreementFile: changed on disk after the load \(it is no longer a regular file/);
    expect(sandbox.stats()).toMatchObject({ docflowsCreated: 0, contents: { uploads: 0 } });
    // No file thread is held by the pipe: the worker shuts down on SIGTERM by itself.
    const worker = workers.at(-1)!;
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('ends the row invalid (DOCUMENT_CHANGED) at once when the agreement was deleted after the load, not failed after every try', async () => {
    const outcome = await loadChangeWork('deleted', () => unlink(join(dir, 'docs', 'agreement.pdf')));
    expect(outcome).toMatchObject({ outcome: 'invalid', errorCode: 'DOCUMENT_CHANGED', attempts: 1 });
    expect(outcome.errorMessage).toMatch(/^agreementFile: changed on disk after the load \(it can no longer be read/);
    expect(outcome.errorMessage).not.toContain(dir);
    expect(sandbox.stats()).toMatchObject({ docflowsCreated: 0, contents: { uploads: 0 } });
  });
});
