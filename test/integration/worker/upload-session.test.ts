/**
 * A file upload that meets an expired fleet session (issue 25, points 1 and 3): the fleet logs
 * in again and the upload is sent again at once, the file opened anew (a stream cannot be sent
 * twice), so the row spends no try on the expiry. The real sandbox with `--users` and
 * `--session-ttl-ms`, a worker process of the built CLI, and Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, afterEach } from 'vitest';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';
import { storedOutcomes } from '../../helpers/outcomes.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';

const LOGIN = 'bank-robot';
const PASSWORD = 'Upload-Pa55word-1c9d';
const ACCOUNT = 'acc-9';
const TTL_MS = 1500;
const FILE_HEADER = [...HEADER, 'agreementFile', 'agreementSignatureFiles'];
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const SIGNATURE = TEST_SIGNATURE;

const it = harness({
  label: 'upload-session',
  sandbox: { users: [`${LOGIN}:${PASSWORD}:${ACCOUNT}`], sessionTtlMs: TTL_MS, strictContents: true },
});

describe('an upload after the fleet session expired', () => {
  let worker: ChildProcess | undefined;
  let stderr = '';
  // The fleet logs in itself: its login, not a session id.
  const envOf = (sandbox: { url: string }, prefix: string, store: { url: string }) => ({
    REDIS_URL,
    REALTY_API_URL: sandbox.url,
    REALTY_LOGIN: LOGIN,
    REALTY_PASSWORD: PASSWORD,
    REALTY_ACCOUNT_ID: ACCOUNT,
    REALTY_PREFIX: prefix,
    DATABASE_URL: store.url,
    LOG_LEVEL: 'debug',
  });

  it.beforeEach(async ({ dir }) => {
    await mkdir(join(dir, 'docs'));
    await writeFile(join(dir, 'docs', 'agreement.pdf'), PDF);
    await writeFile(join(dir, 'docs', 'agreement.pdf.sig'), SIGNATURE);
    const row = [...ROWS.find((r) => r[0] === 'MSK-2026-004511')!];
    row[HEADER.indexOf('agreementContentId')] = '';
    row[HEADER.indexOf('agreementSignatureIds')] = '';
    await writeFile(join(dir, 'deals.csv'), csvText([[...row, 'docs/agreement.pdf', 'docs/agreement.pdf.sig']], { header: FILE_HEADER }));
  });
  // Before the harness closes the sandbox and deletes the prefix the worker works on.
  afterEach(() => {
    if (worker?.exitCode === null) worker.kill('SIGKILL');
  });

  it('logs in again and sends the file again, opened anew: the row queued on its first try, each file uploaded once', async ({
    sandbox,
    dir,
    prefix,
    db: store,
  }) => {
    const env = () => envOf(sandbox, prefix, store);
    const outcomes = (batch: string) => storedOutcomes(store.db, batch);
    // No follower: the upload is the row's first gateway call (its cadastral number is given), so it meets the expiry.
    worker = spawn(process.execPath, [CLI, 'work', '--concurrency', '2', '--attempts', '3', '--backoff-ms', '100', '--no-track'], {
      cwd: ROOT,
      env: childEnv(env()),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    stderr = '';
    worker.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor(() => sandbox.stats().logins >= 1, { timeoutMs: 30_000, intervalMs: 20, what: 'the first login' });
    const firstLoginSeen = Date.now();
    // The next login's session lives for the rest of the test.
    sandbox.configure({ sessionTtlMs: 0 });
    await new Promise((r) => setTimeout(r, Math.max(0, firstLoginSeen + TTL_MS + 100 - Date.now())));
    const loaded = await runCli(
      ['load', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--batch', 'renewed', '--rejects', join(dir, 'r.csv')],
      env(),
    );
    expect(loaded.code).toBe(0);
    await waitFor(async () => (await outcomes('renewed')).length === 1, { timeoutMs: 30_000, intervalMs: 50, what: 'the row outcome' });
    expect(await outcomes('renewed')).toEqual([expect.objectContaining({ outcome: 'queued', attempts: 1 })]);
    const stats = sandbox.stats();
    expect(stats.logins).toBe(2);
    expect(stats.contents.uploads).toBe(2);
    expect(stats.docflowsCreated).toBe(1);
    // The password never reaches the worker's log.
    expect(stderr).not.toContain(PASSWORD);
  });
});
