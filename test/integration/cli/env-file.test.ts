/**
 * A command run from another folder reads another `.env` (or none): `--env-file` names the
 * deployment's, and a batch that is not found says which deployment's database was searched and where to look.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { ROOT, runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';

// One prefix and folder for the file: its tests read the batch the first load left.
const it = harness({ per: 'file', label: 'env-file' });

describe('--env-file and where a missing batch was looked for', () => {
  // The file's fixtures, named once for the tests below.
  let prefix: string;
  let dir: string;
  let envFile: string;
  // The test's own environment does not say where to look (no REALTY_PREFIX): only the file does.
  const bare = {};

  it.beforeAll(async ({ prefix: p, dir: d }) => {
    [prefix, dir] = [p, d];
    envFile = join(dir, 'realty.env');
    writeFileSync(envFile, `REDIS_URL=${REDIS_URL}\nREALTY_PREFIX=${prefix}\nREALTY_API_URL=http://127.0.0.1:9\nREALTY_SESSION_ID=s\n`);
    const load = await runCli(
      ['load', 'samples/deals.csv', '--profile', 'samples/bank-profile.json', '--batch', 'found', '--rejects', join(dir, 'rejects.csv')],
      {
        REDIS_URL,
        REALTY_PREFIX: prefix,
      },
    );
    expect(load.code).toBe(3);
  });

  it("finds the deployment's batch through the file's REDIS_URL and REALTY_PREFIX", async () => {
    const status = await runCli(['--env-file', envFile, 'status', 'found'], bare);
    expect(status.stderr).toBe('');
    expect(status.stdout).toContain('batch found: 24 rows');
  });

  it('names the deployment whose database it searched when a batch is not there, and where that is said', async () => {
    const status = await runCli(['--env-file', envFile, 'status', 'elsewhere'], bare);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain(`realty-batch: There is no batch elsewhere in the database of the deployment ${prefix} (`);
    expect(status.stderr).toContain('DATABASE_URL and REALTY_PREFIX');
    expect(status.stderr).toContain('--env-file <file>');
    expect(status.stderr.trim().split('\n')).toHaveLength(1);
  });

  it("writes a batch's results beside its input without --out, as run does", async () => {
    const input = join(dir, 'night.csv');
    copyFileSync(join(ROOT, 'samples/deals.csv'), input);
    const load = await runCli(['--env-file', envFile, 'load', input, '--profile', 'samples/bank-profile.json', '--batch', 'beside'], bare);
    expect(load.code).toBe(3);
    const results = await runCli(['--env-file', envFile, 'results', 'beside'], bare);
    // Loaded, not processed: its valid rows are pending, so the command could not finish (exit 1).
    expect(results.code).toBe(1);
    expect(results.stdout).toContain(`results: ${join(dir, 'night.results.csv')} (24 rows)`);
    expect(readFileSync(join(dir, 'night.results.csv'), 'utf8').split('\n')[0]).toBe(
      'row,dealId,outcome,docflowId,cadastralNumber,httpStatus,attempts,errorCode,errorMessage,finishedAt,state,stateAt,requirement,paymentUin,paymentAmount,registryError,requestId,type,otherDocflowId',
    );
  });

  it('refuses a file that is not there, naming it, before anything runs', async () => {
    const status = await runCli(['--env-file', join(dir, 'nope.env'), 'status', 'found'], bare);
    // Node 20 reads an --env-file anywhere on its command line itself (exit 9, "node: <file>: not
    // found") before realty-batch can (exit 2, "--env-file <file>: there is no such file").
    expect([2, 9]).toContain(status.code);
    expect(status.stderr).toContain(join(dir, 'nope.env'));
    expect(status.stdout).toBe('');
  });
});
