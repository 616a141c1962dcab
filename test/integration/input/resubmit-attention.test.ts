/**
 * The morning's attention file loaded again with `--resubmit`, as its hints say for the rows the
 * registry refused. It also holds rows whose docflows wait for the applicants' signatures or
 * for the state duty: on the earlier code `--resubmit` filed those a second time (a review saw 7
 * deals filed twice). Now only a deal whose docflow the registry refused is sent again. With
 * the built CLI (`run`, `track`, `results`, `run --resubmit`), the real sandbox and Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

// Seeded as the deal-life test: among the lives, payments, a registry error, and the four docflows that wait for signatures.
// No database of the test's own: the commands use their default place, as they did.
const it = harness({
  per: 'file',
  label: 'resubmit',
  sandbox: { sessions: ['s'], lifecycleMs: 150, payment: 0.3, faultRegistry: 0.2, seed: 7 },
  engine: 'none',
});

describe('the attention file loaded again with --resubmit', { timeout: 120_000 }, () => {
  let tracker: ChildProcess | undefined;

  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(() => {
    tracker?.kill('SIGKILL');
  });

  it('sends again only the deals whose docflow the registry refused; the rows waiting for signatures or the duty stand', async ({
    dir,
    sandbox,
    env,
    profile,
  }) => {
    const night = await runCli(
      ['run', 'samples/deals.csv', '--profile', 'samples/bank-profile.json', '--batch', 'night', '--out', join(dir, 'night.csv')],
      env,
    );
    expect(night.code).toBe(3);
    tracker = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], { cwd: ROOT, env: childEnv(env), stdio: 'ignore' });
    // Every docflow settles: completed, error, or suspended on what the bank must do.
    await waitFor(
      async () => {
        const s = JSON.parse((await runCli(['status', 'night', '--json'], env)).stdout) as { states: Record<string, number> };
        return (s.states.queued ?? 0) + (s.states.sent ?? 0) + (s.states.unknown ?? 0) === 0;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'every docflow settled' },
    );
    const attention = join(dir, 'attention.csv');
    expect((await runCli(['results', 'night', '--out', join(dir, 'results.csv'), '--attention', attention], env)).code).toBe(3);
    const rows = readCsvFile(join(dir, 'results.csv'));
    // The samples repeat some dealIds on a second row (a duplicate, or another property's: invalid):
    // the checks below look deals up by dealId, so they take the deals of one row only. Which deals
    // the registry refuses depends on the order the docflows were made in.
    const once = (id: string) => rows.filter((r) => r.dealId === id).length === 1;
    const refused = rows.filter((r) => r.state === 'error' && once(r.dealId!)).map((r) => r.dealId!);
    const waiting = rows.filter((r) => r.state === 'suspended' && once(r.dealId!)).map((r) => r.dealId!);
    expect(refused.length).toBeGreaterThan(0);
    expect(waiting.length).toBeGreaterThanOrEqual(4);
    // Both kinds are in the attention file, each with its hint.
    const needy = new Map(readCsvFile(attention).map((r) => [r.dealId, r]));
    for (const id of refused) expect(needy.get(id)?.hint).toContain('--resubmit');
    for (const id of waiting) expect(needy.get(id)).toBeDefined();

    const made = sandbox.stats().docflowsCreated;
    const again = await runCli(
      ['run', attention, '--profile', 'samples/bank-profile.json', '--resubmit', '--batch', 'again', '--out', join(dir, 'again.csv')],
      env,
    );
    expect([0, 3]).toContain(again.code);
    const inn = (await profile.load()).organization.inn;
    const docflowsOf = (id: string) => sandbox.docflows().filter((d) => d.requestId?.endsWith(`:${id}`));
    // The refused deals: a second docflow each, under resubmission number 1.
    for (const id of refused)
      expect(
        docflowsOf(id)
          .map((d) => d.requestId)
          .sort(),
      ).toEqual([`${inn}:reg:0:${id}`, `${inn}:reg:1:${id}`]);
    // The waiting ones: their one docflow stands, and their rows say so.
    for (const id of waiting) expect(docflowsOf(id)).toHaveLength(1);
    // Every refused deal is sent again once, a dealId of two rows included (the checks above leave those out).
    const refusedDeals = new Set(rows.filter((r) => r.state === 'error').map((r) => r.dealId));
    expect(sandbox.stats().docflowsCreated).toBe(made + refusedDeals.size);
    const resent = new Map(readCsvFile(join(dir, 'again.csv')).map((r) => [r.dealId, r]));
    for (const id of waiting) {
      expect(resent.get(id)).toMatchObject({ outcome: 'already_submitted' });
      expect(resent.get(id)!.errorMessage).toContain(
        'not sent again: --resubmit sends a deal again only once the registry refused its docflow (state error), and this one is suspended',
      );
    }
    expect(sandbox.stats().requestIdsWithSeveralDocflows).toBe(0);
  });
});
