import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { describe, expect, afterAll } from 'vitest';
import { defaultBatchId } from '../../../src/batch/batch-id.js';
import { createLogger } from '../../../src/logger.js';
import type { Keys } from '../../../src/redis/keys.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import type { TickData } from '../../../src/schedule/scheduler.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { ROOT } from '../../helpers/cli.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { batchRow } from '../../helpers/batch-rows.js';
import { waitFor } from '../../helpers/wait-for.js';

const deals = (tag: string, n = 3): string => csvText(ROWS.slice(0, n).map((r) => [`${tag}-${r[0]}`, ...r.slice(1)]));
const old = async (file: string): Promise<void> => {
  const past = new Date(Date.now() - 120_000);
  await utimes(file, past, past);
};

// One database for the file: the worker of the first test runs on into the second. One client for
// the ticks and the worker (which duplicates it for its blocking calls).
const it = harness({ per: 'file', label: 'schedule-links', redis: { maxRetriesPerRequest: null } });

describe('symbolic links in the inbox and the outbox', () => {
  let keys: Keys;
  let store: UsedDatabase;
  const lines: Array<{ msg: string; file?: string }> = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as { msg: string });
        done();
      },
    }),
  });
  let sandbox: RunningSandbox;
  let redis: Redis;
  let worker: DealWorker | undefined;
  let dir: string;

  const startWorker = (): void => {
    worker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: 's',
      concurrency: 10,
      attempts: 2,
      backoffMs: 50,
      timeoutMs: 2000,
      logger: createLogger({ level: 'silent' }),
    });
  };
  const folders = async (name: string): Promise<TickData> => {
    const inbox = join(dir, name, 'in');
    const outbox = join(dir, name, 'out');
    await mkdir(inbox, { recursive: true });
    await mkdir(outbox, { recursive: true });
    return { name, inbox, outbox, profile: join(ROOT, 'samples/bank-profile.json'), settleMs: 0 };
  };
  const tick = (data: TickData) => runTick(data, { redis, keys, db: store.db, logger, pollMs: 50 });
  const docflowsOf = (tag: string): number => sandbox.docflows().filter((d) => d.requestId?.includes(`:${tag}-`)).length;

  it.beforeAll(({ keys: made, db, sandbox: started, redis: client, dir: folder }) => {
    keys = made;
    store = db;
    sandbox = started;
    redis = client;
    dir = folder;
  });
  // Before the harness closes the sandbox and the client and deletes the prefix.
  afterAll(async () => {
    await worker?.close(1000);
  });

  it('never writes through a link planted in the outbox: the links stay, the files they point to are untouched, and the input is set aside unrun', async () => {
    startWorker();
    const data = await folders('outbox-links');
    const elsewhere = join(dir, 'outbox-links', 'elsewhere.txt');
    await writeFile(elsewhere, 'not the tool’s to write\n');
    await symlink('../elsewhere.txt', join(data.outbox, 'x.csv.summary.json'));
    // A link to a pipe outside: whatever is written through it reaches `captured`.
    const pipe = join(dir, 'outbox-links', 'pipe');
    const captured = join(dir, 'outbox-links', 'captured.txt');
    await new Promise<void>((resolve, reject) =>
      spawn('mkfifo', [pipe]).once('exit', (c) => (c === 0 ? resolve() : reject(new Error('mkfifo')))),
    );
    const out = openSync(captured, 'w');
    const reader = spawn('cat', [pipe], { stdio: ['ignore', out, 'ignore'] });
    closeSync(out);
    await symlink('../pipe', join(data.outbox, 'y.csv.results.csv'));
    for (const name of ['x.csv', 'y.csv']) {
      await writeFile(join(data.inbox, name), deals(name[0]!.toUpperCase()));
      await old(join(data.inbox, name));
    }
    try {
      const result = await tick(data);
      expect(result.files).toMatchObject([
        { file: 'x.csv', status: 'failed', exitStatus: 1 },
        { file: 'y.csv', status: 'failed', exitStatus: 1 },
      ]);
      expect(result.files[0]!.error).toMatch(/x\.csv\.summary\.json is a symbolic link/);
      expect(result.files[1]!.error).toMatch(/y\.csv\.results\.csv is a symbolic link/);
    } finally {
      reader.kill();
    }
    expect(await readFile(elsewhere, 'utf8')).toBe('not the tool’s to write\n');
    expect(await readlink(join(data.outbox, 'x.csv.summary.json'))).toBe('../elsewhere.txt');
    expect(await readlink(join(data.outbox, 'y.csv.results.csv'))).toBe('../pipe');
    expect(readFileSync(captured, 'utf8')).toBe('');
    // Nothing was sent; the summary of x went beside the link; both inputs are set aside.
    expect(docflowsOf('X') + docflowsOf('Y')).toBe(0);
    expect((await readdir(data.outbox)).filter((n) => /^x\.csv\..+\.summary\.json$/.test(n))).toHaveLength(1);
    expect((await readdir(join(data.inbox, '.realty', 'failed'))).sort()).toEqual(['x.csv', 'y.csv']);
    expect(lines.filter((l) => l.msg.includes('symbolic link') && l.file === join(data.outbox, 'x.csv.summary.json'))).toHaveLength(1);
  });

  it('refuses a link planted in the outbox while the batch runs, and writes nothing through it', async () => {
    await worker?.close(1000);
    worker = undefined;
    const data = await folders('late-link');
    const elsewhere = join(dir, 'late-link', 'elsewhere.csv');
    await writeFile(elsewhere, 'kept\n');
    const text = deals('L');
    await writeFile(join(data.inbox, 'late.csv'), text);
    await old(join(data.inbox, 'late.csv'));
    const batch = defaultBatchId(join(data.inbox, 'late.csv'), createHash('sha256').update(text).digest('hex'));
    const running = tick(data);
    await waitFor(async () => (await batchRow(store.db, batch))?.state === 'loaded', {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'the batch to load',
    });
    await symlink('../elsewhere.csv', join(data.outbox, 'late.csv.attention.csv'));
    startWorker();
    const result = await running;
    expect(result.files).toMatchObject([{ file: 'late.csv', status: 'failed', batch }]);
    expect(result.files[0]!.error).toMatch(/late\.csv\.attention\.csv is a symbolic link/);
    expect(await readFile(elsewhere, 'utf8')).toBe('kept\n');
    expect((await lstat(join(data.outbox, 'late.csv.attention.csv'))).isSymbolicLink()).toBe(true);
    expect(await readdir(join(data.inbox, '.realty', 'failed'))).toEqual(['late.csv']);
  });

  it('never reads a link in the inbox, and says so once, not at every tick', async () => {
    const data = await folders('inbox-link');
    const outside = join(dir, 'inbox-link', 'outside.csv');
    await writeFile(outside, deals('O'));
    await old(outside);
    await symlink('../outside.csv', join(data.inbox, 'linked.csv'));
    const seen = lines.length;
    for (let i = 0; i < 3; i++) expect(await tick(data)).toEqual({ waiting: [], files: [] });
    const said = lines.slice(seen).filter((l) => l.file === 'linked.csv');
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toMatch(/symbolic link in the inbox is never read/);
    expect(existsSync(outside)).toBe(true);
    expect((await lstat(join(data.inbox, 'linked.csv'))).isSymbolicLink()).toBe(true);
    expect(docflowsOf('O')).toBe(0);
  });

  it('moves inputs only into real folders of the inbox: a link in place of one stops the tick and nothing moves out', async () => {
    const data = await folders('aside-link');
    const elsewhere = join(dir, 'aside-link', 'elsewhere');
    await mkdir(elsewhere);
    // The old layout's folder and the new one, both links to a folder outside the inbox.
    await symlink('../elsewhere', join(data.inbox, 'processed'));
    await mkdir(join(data.inbox, '.realty'));
    await symlink('../../elsewhere', join(data.inbox, '.realty', 'processed'));
    await writeFile(join(data.inbox, 'z.csv'), deals('Z'));
    await old(join(data.inbox, 'z.csv'));
    await expect(tick(data)).rejects.toThrow(/\.realty\/processed is a symbolic link/);
    expect(await readdir(elsewhere)).toEqual([]);
    expect(existsSync(join(data.inbox, 'z.csv'))).toBe(true);
  });
});
