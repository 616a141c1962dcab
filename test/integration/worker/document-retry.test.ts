/**
 * `retry --input` of a row that names its files by relative path, once its input alone was
 * moved (as a nightly tick moves it to `<inbox>/.realty/processed/`): the paths still start at
 * the folder the batch was loaded from, where the documents stayed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, afterEach } from 'vitest';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';
import { storedOutcomes } from '../../helpers/outcomes.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';

const FILE_HEADER = [...HEADER, 'agreementFile', 'agreementSignatureFiles'];
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const SIGNATURE = TEST_SIGNATURE;
const POLL = { timeoutMs: 60_000, intervalMs: 100 };

const it = harness({ label: 'doc-retry', sandbox: { sessions: ['s'], strictContents: true, fault501: 1 } });

describe('retry of a file row whose input was moved', () => {
  let worker: ChildProcess | undefined;

  // Before the harness closes the sandbox and deletes the prefix the worker works on.
  afterEach(() => {
    if (worker?.exitCode === null) worker.kill('SIGKILL');
  });

  it('resolves relative document paths from the folder the batch was loaded from, not from the moved input', async ({
    sandbox,
    env,
    dir,
    db: store,
  }) => {
    await mkdir(join(dir, 'docs'));
    await mkdir(join(dir, '.realty', 'processed'), { recursive: true });
    await writeFile(join(dir, 'docs', 'agreement.pdf'), PDF);
    await writeFile(join(dir, 'docs', 'agreement.pdf.sig'), SIGNATURE);
    const row = [...ROWS.find((r) => r[0] === 'MSK-2026-004511')!];
    row[HEADER.indexOf('agreementContentId')] = '';
    row[HEADER.indexOf('agreementSignatureIds')] = '';
    await writeFile(join(dir, 'deals.csv'), csvText([[...row, 'docs/agreement.pdf', 'docs/agreement.pdf.sig']], { header: FILE_HEADER }));
    const outcome = async () => (await storedOutcomes(store.db, 'moved'))[0]?.outcome;
    const loaded = await runCli(
      ['load', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--batch', 'moved', '--rejects', join(dir, 'r.csv')],
      env,
    );
    expect(loaded.code).toBe(0);
    worker = spawn(process.execPath, [CLI, 'work', '--concurrency', '2', '--attempts', '2', '--backoff-ms', '50'], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: 'ignore',
    });
    await waitFor(async () => (await outcome()) === 'unavailable', { ...POLL, what: 'the row unavailable' });
    // The input alone moves, as a tick moves a done file; the documents stay where the load found them.
    const moved = join(dir, '.realty', 'processed', 'deals.csv');
    await rename(join(dir, 'deals.csv'), moved);
    sandbox.configure({ fault501: 0 });
    const retried = await runCli(['retry', 'moved', '--outcome', 'unavailable', '--input', moved], env);
    expect(retried.stdout).toContain('1 row sent around again');
    await waitFor(async () => (await outcome()) === 'queued', { ...POLL, what: 'the retried row queued' });
    expect(sandbox.stats()).toMatchObject({ docflowsCreated: 1, contents: { uploads: 2 } });
  });
});
