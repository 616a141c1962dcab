/**
 * `realty-batch payments` against the real sandbox, Redis and SQLite: the payer the gateway gives
 * as `{name, inn}` (the bank's own organization, from its profile) is printed as given, not as
 * initials; and the command says how old the docflows' states are, and when no follower seems
 * to run, which command runs one (a deal paid a moment ago is still listed until a follower
 * reads the feed).
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect } from 'vitest';
import { startFeedFollower, type FeedFollower } from '../../../src/feed/follower.js';
import { createLogger } from '../../../src/logger.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import { waitingPayments, writePayments, type PaymentLine } from '../../../src/results/payments.js';
import { readStatesAge } from '../../../src/feed/states-age.js';
import { runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { batchHarness, BY_SUGGEST, runDashboardBatch, SESSION, WITH_NUMBER, type DashboardBatch } from '../../helpers/dashboard-batch.js';
import { REDIS_URL } from '../../helpers/redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { waitFor } from '../../helpers/wait-for.js';

/** The sample profile's organization: the first encumbrancer, who pays the duty in the sandbox. */
const BANK = 'АО «Банк Пример», INN 7701934587';

// Every sent docflow stops on the state duty, a few ms after its creation.
const it = batchHarness({ label: 'payments', sandbox: { lifecycleMs: 20, payment: 1, seed: 3 } });

describe('the payments file', () => {
  let store: UsedDatabase;
  let night: DashboardBatch;
  let client: RealtyClient;
  let follower: FeedFollower | undefined;
  const silent = createLogger({ level: 'silent', destination: new PassThrough() });

  const payments = async (): Promise<PaymentLine[]> => {
    const lines: PaymentLine[] = [];
    for await (const line of waitingPayments(night.redis, night.keys, store.db, night.batch, 2)) lines.push(line);
    return lines;
  };

  it.beforeAll(async ({ redis, keys, prefix, db, dir, sandbox, profile }) => {
    store = db;
    night = await runDashboardBatch({ redis, keys, prefix, db, dir, sandbox, profile }, [BY_SUGGEST, WITH_NUMBER], 'pay');
    client = createRealtyClient({ baseUrl: night.sandbox.url, sessionId: SESSION, timeoutMs: 5000 });
    follower = startFeedFollower({ redis: night.redis, keys: night.keys, db: store.db, client, logger: silent, pollMs: 20 });
    await waitFor(async () => (await payments()).length === 2, {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'both deals to wait for the duty',
    });
  });
  afterAll(async () => {
    await follower?.close();
    await client?.close();
  });

  it("prints an organization payer's name and INN as the gateway gave them, not as initials", async () => {
    const out = join(night.dir, 'pay.payments.csv');
    const summary = await writePayments({ redis: night.redis, keys: night.keys, db: store.db, batch: night.batch, total: 2, out });
    expect(summary.rows).toBe(2);
    const rows = readCsvFile(out);
    expect(rows.map((r) => r.payer)).toEqual([BANK, BANK]);
    expect(rows.map((r) => r.dealId)).toEqual([BY_SUGGEST, WITH_NUMBER]);
  });

  it('says the states are fresh while a follower reads the feed', async () => {
    const age = await readStatesAge(store.db);
    expect(age.stale).toBe(false);
    expect(Date.parse(age.asOf!)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('says how old the states are, and that no follower seems to run, on stderr and in --json', async () => {
    await follower?.close();
    follower = undefined;
    // The feed's last complete read 12 minutes ago, as when every follower stopped then.
    const before = Number((await store.db.kysely.selectFrom('feed').select('covered_at').executeTakeFirstOrThrow()).covered_at);
    const coveredAt = before - 12 * 60_000;
    await store.db.kysely.updateTable('feed').set({ covered_at: coveredAt }).where('id', '=', 1).execute();
    const env = { REDIS_URL, REALTY_PREFIX: night.prefix, DATABASE_URL: store.url, LOG_LEVEL: 'silent' };
    const out = join(night.dir, 'stale.payments.csv');
    const cli = await runCli(['payments', night.batch, '--out', out, '--json'], env);
    expect(cli.code).toBe(0);
    expect(cli.stderr).toMatch(/^payments: states as of .*, 12 min ago: no follower seems to run, .*`realty-batch track`/);
    const summary = JSON.parse(cli.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ batch: 'pay', file: out, rows: 2, statesAsOf: new Date(coveredAt).toISOString(), statesStale: true });
    expect(summary.statesAgeMs).toBeGreaterThanOrEqual(12 * 60_000);

    const text = await runCli(['payments', night.batch, '--out', out], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('2 deals wait for the state duty');
    expect(text.stderr).toBe(
      `payments: states as of ${new Date(coveredAt).toISOString()}, 12 min ago: no follower seems to run, so a deal paid since may still be listed; start one with \`realty-batch track\` (or \`realty-batch work\`, which follows the feed unless --no-track).\n`,
    );
    expect(readCsvFile(out).map((r) => r.payer)).toEqual([BANK, BANK]);
  });
});
