/**
 * The red team's spellings of a row's persons, each fed through the three ways a gateway's
 * text reaches the tool, with the built CLI as an operator runs it (`run`, `track`,
 * `results`), real Redis and the real sandbox behind a gateway that echoes:
 * - BullMQ's failed reason: the first creation call of every row answers 503 with the spelling;
 * - the creation error: the second call of a `c` row answers 400 with it (the row ends `rejected`);
 * - the news feed: a `f` row's docflow is made, and every feed item of it says `error` with the
 *   spelling, days after the deal's data left Redis (the follower masks it with the filter the
 *   claim kept). This reached results.csv, the attention file and the ledger entry unmasked.
 * The database (the ledger, the docflows' states, every table) is scanned as well as Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, describe, expect } from 'vitest';
import { filterMatcher } from '../../../src/privacy/name-filter.js';
import type { Keys } from '../../../src/redis/keys.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText } from '../../helpers/fixtures.js';
import { hostileRow, leftOf, registryText, SPELLINGS, type Spelling } from '../../helpers/hostile-spellings.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { docflowRow, ledgerRow } from '../../helpers/ledger-rows.js';
import type { Database } from '../../../src/db/database.js';
import { parseRequestId } from '../../../src/ledger/entry.js';

const SESSION = 'hostile-session';
const CREATE = '/realty/v1/docflows/encumbrance_request';
const BATCH = 'hostile';
/** Row `c-<i>` meets spelling i in its creation error, `f-<i>` in the feed; both in a failed reason first. */
const dealId = (path: 'c' | 'f', i: number): string => `H-${path}-${i}`;
const spellingOf = (id: string): Spelling => SPELLINGS[Number(/-(\d+)$/.exec(id)![1])]!;

/** The sandbox behind a gateway that echoes each row's spelling: 503 then 400 (`c`) or 503 then made (`f`), and `f` docflows in error in the feed. */
async function startEchoingGateway(sandbox: RunningSandbox): Promise<{ url: string; close: () => Promise<void> }> {
  const calls = new Map<string, number>();
  const forward = async (method: string, url: string, headers: Record<string, string>, body?: Buffer) => {
    const answer = await request(`${sandbox.url}${url}`, {
      method: method as 'GET' | 'POST',
      headers,
      ...(body && body.length > 0 && { body }),
    });
    return { status: answer.statusCode, body: Buffer.from(await answer.body.arrayBuffer()) };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = {
        authorization: String(req.headers.authorization ?? ''),
        'content-type': String(req.headers['content-type'] ?? 'application/json'),
      };
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof json === 'string' || Buffer.isBuffer(json) ? json : JSON.stringify(json));
      };
      void (async () => {
        if (req.method === 'POST' && req.url === CREATE) {
          const id = parseRequestId(String((JSON.parse(body.toString('utf8')) as { requestId: string }).requestId))?.dealId ?? '';
          const n = (calls.get(id) ?? 0) + 1;
          calls.set(id, n);
          const message = registryText(spellingOf(id).fragment);
          if (n === 1) return send(503, { code: 'unavailable', message });
          if (id.startsWith('H-c-')) return send(400, { code: 'refused', message, target: 'options.whoseRightRestricted' });
        }
        const answer = await forward(req.method!, req.url!, headers, body);
        if (req.method === 'GET' && req.url!.startsWith('/realty/v1/news') && answer.status === 200) {
          const page = JSON.parse(answer.body.toString('utf8')) as { news: Array<{ docflow: Record<string, unknown> }> };
          for (const item of page.news) {
            const rid = item.docflow.requestId;
            const id = (typeof rid === 'string' && parseRequestId(rid)?.dealId) || '';
            if (!id.startsWith('H-f-')) continue;
            item.docflow.state = 'error';
            item.docflow.error = { code: 'registryRefused', message: registryText(spellingOf(id).fragment) };
          }
          return send(200, page);
        }
        return send(answer.status, answer.body);
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Every value a Redis key holds, one string each. */
async function valuesOf(redis: Redis, key: string): Promise<string[]> {
  const type = await redis.type(key);
  if (type === 'string') return [(await redis.get(key)) ?? ''];
  if (type === 'hash') return Object.values(await redis.hgetall(key));
  if (type === 'list') return redis.lrange(key, 0, -1);
  if (type === 'set') return redis.smembers(key);
  if (type === 'zset') return redis.zrange(key, '0', '-1');
  if (type === 'stream') return (await redis.xrange(key, '-', '+')).flatMap(([, fields]) => fields);
  return [];
}

/** Every text column of every table of the database, by table: what a scan for personal data reads. */
async function databaseValues(db: Database): Promise<{ tables: string[]; values: Array<{ where: string; value: string }> }> {
  const tables: string[] = [];
  const values: Array<{ where: string; value: string }> = [];
  for (const table of await db.kysely.introspection.getTables()) {
    tables.push(table.name);
    const columns = table.columns.filter((c) => /char|text|clob|json/i.test(c.dataType)).map((c) => c.name);
    if (columns.length === 0) continue;
    const rows = await db.kysely
      .selectFrom(table.name as 'ledger')
      .select(columns as Array<'bank'>)
      .execute();
    for (const r of rows)
      for (const [column, value] of Object.entries(r))
        if (typeof value === 'string') values.push({ where: `${table.name}.${column}`, value });
  }
  return { tables: tables.sort(), values };
}

// One database for the file: the commands of its one scenario share it.
const it = harness({
  per: 'file',
  label: 'pd-hostile',
  sandbox: { sessions: [SESSION], lifecycleMs: 100 },
  redis: { maxRetriesPerRequest: null },
  logLevel: 'debug',
});

describe('hostile spellings of a row person, through the feed, the creation error and the failed reason', { timeout: 120_000 }, () => {
  let prefix: string;
  let keys: Keys;
  let store: UsedDatabase;
  let redis: Redis;
  let sandbox: RunningSandbox;
  let gateway: Awaited<ReturnType<typeof startEchoingGateway>>;
  let tracker: ChildProcess | undefined;
  let dir: string;
  let env: Record<string, string>;
  let bank: string;

  it.beforeAll(async ({ prefix: made, keys: madeKeys, db, redis: client, sandbox: started, dir: folder, profile, env: given }) => {
    prefix = made;
    keys = madeKeys;
    store = db;
    redis = client;
    sandbox = started;
    gateway = await startEchoingGateway(sandbox);
    dir = folder;
    bank = (await profile.load()).organization.inn;
    // The commands call the echoing gateway in front of the sandbox.
    env = { ...given, REALTY_API_URL: gateway.url };
  });
  // Before the harness closes the sandbox behind the gateway and deletes the prefix.
  afterAll(async () => {
    tracker?.kill('SIGKILL');
    await gateway.close();
  });

  it('leaves none of them in the results, the attention file, the ledger, the jobs, the events or the logs', async () => {
    const ids = SPELLINGS.flatMap((_, i) => [dealId('c', i), dealId('f', i)]);
    const input = join(dir, 'deals.csv');
    await writeFile(input, csvText(ids.map((id) => hostileRow(id))));
    const run = await runCli(
      [
        ...['run', input, '--profile', 'samples/bank-profile.json', '--batch', BATCH, '--out', join(dir, 'run.results.csv')],
        // Every row's first creation call fails, after its suggest succeeded: half the calls at most, so
        // that the breaker stays closed and each failure is a try BullMQ fails (its failed reason), not a hold.
        ...['--attempts', '3', '--backoff-ms', '50', '--feed-lag-ms', '300', '--breaker-threshold', '0.9'],
      ],
      env,
      100_000,
    );
    expect(run.code, run.stderr).toBe(3);

    // The night is over; the fleet's follower goes on, and sees every `f` docflow refused by the registry.
    tracker = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let trackLogs = '';
    tracker.stdout!.on('data', (d: Buffer) => (trackLogs += d.toString()));
    tracker.stderr!.on('data', (d: Buffer) => (trackLogs += d.toString()));
    const feedRows = SPELLINGS.map((_, i) => dealId('f', i));
    const registryError = async (id: string) => {
      const docflowId = (await ledgerRow(store.db, bank, id))?.docflow_id;
      return docflowId ? (await docflowRow(store.db, docflowId))?.rerr : undefined;
    };
    await waitFor(
      async () => {
        const errors = await Promise.all(feedRows.map(registryError));
        return errors.every(Boolean) && errors;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: "the registry error of every feed row in its docflow's state" },
    );
    tracker.kill('SIGTERM');

    const out = join(dir, 'results.csv');
    const attention = join(dir, 'attention.csv');
    const results = await runCli(['results', BATCH, '--out', out, '--attention', attention], env);
    expect(results.code, results.stderr).toBe(3);

    const byDeal = new Map((parse(readFileSync(out), { columns: true }) as Array<Record<string, string>>).map((r) => [r.dealId!, r]));
    const needy = new Map(
      (parse(readFileSync(attention), { columns: true, bom: true, delimiter: ';' }) as Array<Record<string, string>>).map((r) => [
        r.dealId!,
        r,
      ]),
    );
    const leaks: Array<{ where: string; what: string; left: string[] }> = [];
    const check = (where: string, spelling: Spelling, text: string | undefined) => {
      const left = leftOf(spelling, text ?? '');
      if (left.length > 0) leaks.push({ where, what: spelling.what, left });
    };
    SPELLINGS.forEach((spelling, i) => {
      const created = byDeal.get(dealId('c', i))!;
      const fed = byDeal.get(dealId('f', i))!;
      // Each path carried the text, masked: nothing passes that was not there.
      expect(created).toMatchObject({ outcome: 'rejected', httpStatus: '400', errorCode: 'refused' });
      expect(created.errorMessage).toMatch(/^400: refused: отказ: в сведениях о заявителе .*\*\*\*.* есть расхождение/);
      expect(fed).toMatchObject({ outcome: 'queued', state: 'error' });
      expect(fed.registryError).toMatch(/^registryRefused: отказ: в сведениях о заявителе .*\*\*\*.* есть расхождение$/);
      for (const [path, row] of [
        ['creation error', created],
        ['feed', fed],
      ] as const) {
        for (const column of ['errorCode', 'errorMessage', 'registryError']) check(`results.csv ${path} ${column}`, spelling, row[column]);
        // The attention file's own columns (the others are the bank's input, by design).
        const line = needy.get(row.dealId!);
        for (const column of ['hint', 'errors']) check(`attention ${path} ${column}`, spelling, line?.[column]);
      }
      expect(needy.get(dealId('c', i))?.errors).toBe(created.errorMessage);
    });

    // The ledger row of each feed row and its docflow's state, kept five years: its registry error
    // masked, its filter no name.
    for (const [i] of SPELLINGS.entries()) {
      const entry = (await ledgerRow(store.db, bank, dealId('f', i)))!;
      const state = (await docflowRow(store.db, entry.docflow_id!))!;
      expect(state.rerr).toMatch(/^registryRefused: отказ: в сведениях о заявителе .*\*\*\*.* есть расхождение$/);
      // A filter this version reads (its persons' names as short hashes, never the names).
      expect(filterMatcher(entry.pf ?? undefined), `the name filter of ${dealId('f', i)}`).toBeDefined();
      for (const value of [...Object.values(entry), ...Object.values(state)])
        if (typeof value === 'string') check(`ledger ${dealId('f', i)}`, SPELLINGS[i]!, value);
    }
    // Every text column of every table of the database: no spelling of any row.
    const { tables, values } = await databaseValues(store.db);
    expect(tables).toEqual(
      expect.arrayContaining(['batches', 'deployment', 'docflow_history', 'docflows', 'feed', 'ledger', 'operator_actions', 'outcomes']),
    );
    expect(values.filter((v) => v.where === 'ledger.deal_id').map((v) => v.value)).toEqual(expect.arrayContaining(feedRows));
    // The rows' outcomes (their masked messages) are among them.
    expect(values.filter((v) => v.where === 'outcomes.error_message').length).toBeGreaterThan(0);
    for (const { where, value } of values) for (const spelling of SPELLINGS) check(`database ${where}`, spelling, value);

    // Every key of the run (jobs with their failed reasons and stack traces, the events stream,
    // docflow states) but the batch's metadata (its profile, which expires): no spelling of any row.
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of found.filter((k) => k !== keys.batch(BATCH))) {
        for (const value of await valuesOf(redis, key)) for (const spelling of SPELLINGS) check(key, spelling, value);
      }
    } while (cursor !== '0');
    // The failed reasons were there to be masked: every row's first try failed on the echoing 503.
    const jobs = await redis.keys(`${keys.bullPrefix}:${keys.queueName}:${BATCH}.*`);
    const reasons = await Promise.all(jobs.filter((k) => !/:(logs|lock)$/.test(k)).map((k) => redis.hget(k, 'failedReason')));
    expect(reasons).toHaveLength(ids.length);
    for (const reason of reasons) expect(reason).toMatch(/^503: unavailable: отказ: в сведениях о заявителе .*\*\*\*.* есть расхождение$/);

    // The log lines of the run and of the follower, at debug.
    for (const line of `${run.stdout}\n${run.stderr}\n${trackLogs}`.split('\n'))
      for (const spelling of SPELLINGS) check('log', spelling, line);

    expect(leaks).toEqual([]);
  });
});
