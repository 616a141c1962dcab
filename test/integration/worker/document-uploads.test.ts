/**
 * Documents by path (issue 25, point 1): rows that name their agreement and signature files
 * instead of content ids, through the built CLI, the real sandbox and Redis. The sandbox runs
 * with strictContents: a docflow it accepts names only contents it received.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Redis } from 'ioredis';
import { describe, expect, afterEach } from 'vitest';
import type { Keys } from '../../../src/redis/keys.js';
import type { RunningSandbox, SandboxOptions } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';
import { storedOutcomes } from '../../helpers/outcomes.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';

/** Valid sample deals that carry their cadastral numbers (no suggest call). */
const SAMPLE_IDS = ['MSK-2026-004511', 'SPB-2026-010078', 'EKB-2026-000312'];
const FILE_HEADER = [...HEADER, 'agreementFile', 'agreementSignatureFiles'];
const MADE_UP_CONTENT_ID = '0b5e9c1e-6a51-4c37-9d0e-2f8b7c6a5d41';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const SIGNATURE = TEST_SIGNATURE;
const POLL = { timeoutMs: 60_000, intervalMs: 100 };

/** A sample row with its content ids replaced by files (or kept, when `files` is undefined). */
function fileRow(dealId: string, files?: { agreement: string; signatures?: string }, newId?: string): string[] {
  const row = [...ROWS.find((r) => r[0] === dealId)!];
  if (newId) row[0] = newId;
  if (!files) return [...row, '', ''];
  row[HEADER.indexOf('agreementContentId')] = '';
  row[HEADER.indexOf('agreementSignatureIds')] = '';
  return [...row, files.agreement, files.signatures ?? ''];
}

// Everything of each test's own; each test starts its sandbox, with options of its own.
const it = harness({ label: 'uploads' });

describe('documents by path', () => {
  let store: UsedDatabase;
  let sandbox: RunningSandbox;
  let openSandbox: (options: SandboxOptions) => Promise<RunningSandbox>;
  let dir: string;
  let prefix: string;
  let keys: Keys;
  let redis: Redis;
  const workers: ChildProcess[] = [];
  const env = () => ({
    REDIS_URL,
    REALTY_API_URL: sandbox.url,
    REALTY_SESSION_ID: 's',
    REALTY_PREFIX: prefix,
    DATABASE_URL: store.url,
    LOG_LEVEL: 'silent',
  });
  const startWorker = (extra: string[] = []) => {
    const child = spawn(process.execPath, [CLI, 'work', '--concurrency', '4', '--lock-ms', '1500', ...extra], {
      cwd: ROOT,
      env: childEnv(env()),
      stdio: 'ignore',
    });
    workers.push(child);
    return child;
  };
  const outcomes = (batch: string) => storedOutcomes(store.db, batch);
  const uploadsRemembered = (batch: string) => redis.hgetall(keys.contents(batch));
  const load = (file: string, batch: string, extra: string[] = []) =>
    runCli(['load', file, '--profile', 'samples/bank-profile.json', '--batch', batch, '--rejects', join(dir, 'r.csv'), ...extra], env());

  it.beforeEach(async ({ db, prefix: made, keys: madeKeys, redis: client, dir: folder, openSandbox: open }) => {
    store = db;
    prefix = made;
    keys = madeKeys;
    redis = client;
    dir = folder;
    openSandbox = open;
    await mkdir(join(dir, 'docs'));
    await writeFile(join(dir, 'docs', 'agreement.pdf'), PDF);
    await writeFile(join(dir, 'docs', 'agreement.pdf.sig'), SIGNATURE);
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterEach(() => {
    for (const w of workers.splice(0)) if (w.exitCode === null) w.kill('SIGKILL');
  });

  it('uploads an agreement and signature two rows share once; their docflows pass --strict-contents, a made-up content id is refused', async () => {
    sandbox = await openSandbox({ sessions: ['s'], strictContents: true });
    const files = { agreement: 'docs/agreement.pdf', signatures: 'docs/agreement.pdf.sig' };
    const rows = [fileRow(SAMPLE_IDS[0]!, files), fileRow(SAMPLE_IDS[1]!, files), fileRow(SAMPLE_IDS[2]!)];
    rows[2]![HEADER.indexOf('agreementContentId')] = MADE_UP_CONTENT_ID;
    rows[2]![HEADER.indexOf('agreementSignatureIds')] = '';
    await writeFile(join(dir, 'deals.csv'), csvText(rows, { header: FILE_HEADER }));
    const out = join(dir, 'out.csv');
    const run = await runCli(
      [
        'run',
        join(dir, 'deals.csv'),
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'shared',
        '--out',
        out,
        '--rejects',
        join(dir, 'r.csv'),
        '--concurrency',
        '4',
      ],
      env(),
    );
    expect(run.stderr).not.toContain('Error:');
    const done = await outcomes('shared');
    const byDeal = new Map(done.map((o) => [o.dealId, o]));
    // Signed agreements: queued (200). Each file went up once for the two rows.
    expect(byDeal.get(SAMPLE_IDS[0]!)?.outcome).toBe('queued');
    expect(byDeal.get(SAMPLE_IDS[1]!)?.outcome).toBe('queued');
    expect(byDeal.get(SAMPLE_IDS[2]!)).toMatchObject({ outcome: 'rejected', httpStatus: 400 });
    const stats = sandbox.stats();
    expect(stats.contents.uploads).toBe(2);
    expect(stats.contents.bytes).toBe(PDF.length + SIGNATURE.length);
    expect(stats.contents.refusedDocflows).toBe(1);
    // Strict: both accepted docflows name only the two contents received, the ids Redis remembers.
    expect(stats.docflowsCreated).toBe(2);
    expect(Object.keys(await uploadsRemembered('shared'))).toHaveLength(2);
  });

  it('refuses at load a missing, empty, non-PDF, outside-linked or over-50-MB file, naming the field', async () => {
    sandbox = await openSandbox({ sessions: ['s'] });
    const outside = await mkdtemp(join(tmpdir(), 'realty-outside-'));
    try {
      await writeFile(join(outside, 'secret.pdf'), PDF);
      await symlink(join(outside, 'secret.pdf'), join(dir, 'docs', 'link.pdf'));
      await writeFile(join(dir, 'docs', 'empty.pdf'), '');
      await writeFile(join(dir, 'docs', 'image.pdf'), Buffer.from('\x89PNG\r\n\x1a\n0000', 'latin1'));
      // Sparse: 50 MB and one byte without writing them.
      await writeFile(join(dir, 'docs', 'huge.pdf'), '%PDF-1.4\n');
      await truncate(join(dir, 'docs', 'huge.pdf'), 50 * 1024 * 1024 + 1);
      const cases: Array<[string, { agreement: string; signatures?: string }, string]> = [
        ['F-1', { agreement: 'docs/missing.pdf' }, 'agreementFile: names no file'],
        ['F-2', { agreement: 'docs/empty.pdf' }, 'agreementFile: is empty'],
        ['F-3', { agreement: 'docs/image.pdf' }, 'agreementFile: is neither a PDF (%PDF-) nor XML'],
        ['F-4', { agreement: 'docs/link.pdf' }, "agreementFile: leads out of the input's folder"],
        ['F-5', { agreement: 'docs/huge.pdf' }, 'agreementFile: is over 50 MB'],
        ['F-6', { agreement: 'docs/agreement.pdf', signatures: 'docs/none.sig' }, 'agreementSignatureFiles: file 1 names no file'],
        ['F-7', { agreement: join(dir, 'docs', 'agreement.pdf') }, 'agreementFile: is an absolute path: allowed only with --files-root'],
        ['F-8', { agreement: 'docs/agreement.pdf', signatures: 'docs/agreement.pdf.sig' }, ''],
      ];
      const rows = cases.map(([id, files]) => fileRow(SAMPLE_IDS[0]!, files, id));
      await writeFile(join(dir, 'deals.csv'), csvText(rows, { header: FILE_HEADER }));
      const loaded = await load(join(dir, 'deals.csv'), 'refused', ['--dry-run', '--json']);
      // 3: done, some rows need attention.
      expect(loaded.code).toBe(3);
      const rejects = parse(readFileSync(join(dir, 'r.csv')), { columns: true }) as Array<Record<string, string>>;
      const errors = new Map(rejects.map((r) => [r.dealId, r.errors]));
      for (const [id, , message] of cases) {
        if (message === '') expect(errors.has(id)).toBe(false);
        else expect(errors.get(id)).toContain(message);
      }
      // No path reaches a message.
      for (const e of errors.values()) expect(e).not.toContain('docs/');
      const summary = JSON.parse(loaded.stdout) as { valid: number; invalid: number; invalidByField: Record<string, number> };
      expect(summary).toMatchObject({ valid: 1, invalid: 7, invalidByField: { agreementFile: 6, agreementSignatureFiles: 1 } });
      // --files-root lets an absolute path in, and a file under it.
      const allowed = await load(join(dir, 'deals.csv'), 'refused', ['--dry-run', '--json', '--files-root', outside]);
      const widened = JSON.parse(allowed.stdout) as { valid: number };
      expect(widened.valid).toBe(3);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  // The restarted worker may find the try written ahead and the feed not yet followed (its lock is the dead worker's for 5 s):
  // its row then waits without spending a try, each wait twice the last (2, 4, 8, 16 s ...), so recovery may take a minute.
  it(
    're-uses an upload after a worker is killed between the upload and its docflow: one upload, one docflow',
    { timeout: 180_000 },
    async () => {
      // Every docflow creation answers 501 (nothing made, retried): the upload before it passes.
      sandbox = await openSandbox({ sessions: ['s'], strictContents: true, fault501: 1 });
      await writeFile(
        join(dir, 'deals.csv'),
        csvText([fileRow(SAMPLE_IDS[0]!, { agreement: 'docs/agreement.pdf', signatures: 'docs/agreement.pdf.sig' })], {
          header: FILE_HEADER,
        }),
      );
      expect((await load(join(dir, 'deals.csv'), 'crash')).code).toBe(0);
      // Killed at any moment, it may leave a try written ahead whose answer never came: the ledger then
      // waits for the feed to pass the try's end (its time-out) plus the feed's lag, the longer of this
      // worker's and the next one's (src/ledger/claim.ts). Short ones for both keep that wait within
      // the test's: the next one's default lag (60 s) made this test take a minute whenever the kill
      // came after a try was written.
      const lag = ['--feed-lag-ms', '500'];
      const doomed = startWorker(['--attempts', '100', '--backoff-ms', '200', '--timeout-ms', '3000', ...lag]);
      await waitFor(
        async () => Object.keys(await uploadsRemembered('crash')).length === 2 && (sandbox.stats().docflowCalls['501'] ?? 0) > 0,
        {
          ...POLL,
          what: 'the uploads recorded and a docflow call refused',
        },
      );
      doomed.kill('SIGKILL');
      await new Promise((resolve) => doomed.once('exit', resolve));
      sandbox.configure({ fault501: 0 });
      startWorker(['--attempts', '3', '--backoff-ms', '100', ...lag]);
      await waitFor(async () => (await outcomes('crash')).length === 1, {
        ...POLL,
        timeoutMs: 150_000,
        what: 'the row outcome after the restart',
      });
      expect((await outcomes('crash'))[0]?.outcome).toBe('queued');
      expect(sandbox.stats().contents.uploads).toBe(2);
      expect(sandbox.stats().docflowsCreated).toBe(1);
    },
  );

  it('retries a file row with its files checked again, re-using the batch upload', async () => {
    sandbox = await openSandbox({ sessions: ['s'], strictContents: true, fault501: 1 });
    await writeFile(
      join(dir, 'deals.csv'),
      csvText([fileRow(SAMPLE_IDS[0]!, { agreement: 'docs/agreement.pdf', signatures: 'docs/agreement.pdf.sig' })], {
        header: FILE_HEADER,
      }),
    );
    expect((await load(join(dir, 'deals.csv'), 'again')).code).toBe(0);
    startWorker(['--attempts', '2', '--backoff-ms', '50']);
    await waitFor(async () => (await outcomes('again')).length === 1, { ...POLL, what: 'the unavailable outcome' });
    expect((await outcomes('again'))[0]?.outcome).toBe('unavailable');
    sandbox.configure({ fault501: 0 });
    const retried = await runCli(['retry', 'again', '--outcome', 'unavailable'], env());
    expect(retried.code).toBe(0);
    await waitFor(async () => (await outcomes('again'))[0]?.outcome === 'queued', { ...POLL, what: 'the retried row queued' });
    expect(sandbox.stats().contents.uploads).toBe(2);
    expect(sandbox.stats().docflowsCreated).toBe(1);
  });

  it("retries a row whose files lie under the load's --files-root, named by absolute paths: the root goes with the batch", async () => {
    sandbox = await openSandbox({ sessions: ['s'], strictContents: true, fault501: 1 });
    const root = join(dir, 'docs');
    await writeFile(
      join(dir, 'deals.csv'),
      csvText([fileRow(SAMPLE_IDS[0]!, { agreement: join(root, 'agreement.pdf'), signatures: join(root, 'agreement.pdf.sig') })], {
        header: FILE_HEADER,
      }),
    );
    expect((await load(join(dir, 'deals.csv'), 'rooted', ['--files-root', root])).code).toBe(0);
    startWorker(['--attempts', '2', '--backoff-ms', '50']);
    await waitFor(async () => (await outcomes('rooted')).length === 1, { ...POLL, what: 'the unavailable outcome' });
    expect((await outcomes('rooted'))[0]?.outcome).toBe('unavailable');
    sandbox.configure({ fault501: 0 });
    // No --files-root here: the batch remembers its own.
    const retried = await runCli(['retry', 'rooted', '--outcome', 'unavailable'], env());
    expect(retried.stdout).toContain('1 row sent around again');
    await waitFor(async () => (await outcomes('rooted'))[0]?.outcome === 'queued', { ...POLL, what: 'the retried row queued' });
    expect(sandbox.stats().docflowsCreated).toBe(1);
  });

  it('runs samples/deals-with-files.csv: the shared agreement and signature go up once, the unsigned row ends suspended', async () => {
    sandbox = await openSandbox({ sessions: ['s'], strictContents: true });
    const out = join(dir, 'samples.results.csv');
    const run = await runCli(
      [
        'run',
        'samples/deals-with-files.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'samples',
        '--out',
        out,
        '--rejects',
        join(dir, 'r.csv'),
      ],
      env(),
    );
    expect(run.code).toBe(0);
    const results = parse(readFileSync(out), { columns: true }) as Array<{ outcome: string }>;
    expect(results.map((r) => r.outcome)).toEqual(['queued', 'queued', 'suspended']);
    expect(sandbox.stats().contents.uploads).toBe(3);
  });

  it('uploads a 50 MB agreement streamed, once (prints the worker peak RSS growth)', async () => {
    sandbox = await openSandbox({ sessions: ['s'], strictContents: true });
    const big = join(dir, 'docs', 'big.pdf');
    await writeFile(big, '%PDF-1.4\n');
    await truncate(big, 50 * 1024 * 1024);
    await writeFile(join(dir, 'deals.csv'), csvText([fileRow(SAMPLE_IDS[0]!, { agreement: 'docs/big.pdf' })], { header: FILE_HEADER }));
    const worker = startWorker(['--attempts', '3', '--backoff-ms', '100', '--timeout-ms', '60000']);
    const peak = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${worker.pid}/status`, 'utf8'))?.[1] ?? 0);
    // The worker idle (its Redis connections, the feed follower): its peak before any file.
    await waitFor(() => Promise.resolve(peak() > 0), { ...POLL, what: 'the worker started' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const before = peak();
    expect((await load(join(dir, 'deals.csv'), 'big')).code).toBe(0);
    await waitFor(async () => (await outcomes('big')).length === 1, { ...POLL, what: 'the big row outcome' });
    const after = peak();
    expect((await outcomes('big'))[0]?.outcome).toBe('suspended');
    expect(sandbox.stats().contents).toMatchObject({ uploads: 1, bytes: 50 * 1024 * 1024 });
    console.log(
      `50 MB upload: worker peak RSS ${Math.round(before / 1024)} MB before, ${Math.round(after / 1024)} MB after (growth ${Math.round((after - before) / 1024)} MB)`,
    );
  });
});
