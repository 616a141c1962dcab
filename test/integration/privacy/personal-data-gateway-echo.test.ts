/**
 * A gateway that echoes what it refused, end to end: real Redis, the real sandbox (suggest,
 * the news feed), and in front of it a gateway whose docflow call answers as some real ones
 * do, naming the persons of the request in its Error object: first a 501, then a 400.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import type { Redis } from 'ioredis';
import { request } from 'undici';
import { describe, expect, afterAll } from 'vitest';
import { runBatch } from '../../../src/pipeline/run-batch.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { maskJobData } from '../../../src/dashboard/mask.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import { openQueue } from '../../../src/queue/deal-queue.js';
import { dealJobId } from '../../../src/queue/job-data.js';
import type { Keys } from '../../../src/redis/keys.js';
import type { Person } from '../../../src/domain/gateway.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { ledgerRow, databaseText } from '../../helpers/ledger-rows.js';
import { storedOutcomes } from '../../helpers/outcomes.js';

const SESSION = 'echo-session';
const DOCFLOWS = '/realty/v1/docflows/encumbrance_request';
/** Row 2 of the samples (it has its cadastral number), its owner renamed to a surname with ё: the gateway refuses it. */
const DEAL_ID = 'MSK-2026-004511';
const ROW = ROWS.find((r) => r[0] === DEAL_ID)!.map((v, i) => (HEADER[i] === 'ownerSurname' ? 'Семёнова' : v));
/** Row 1 of the samples: the sandbox makes its docflow, so the ledger has an entry to look into. */
const MADE = ROWS[0]!;

/** Every form of the persons' values this test lets the gateway echo, or the input holds. */
const PERSONAL = [
  'семенова', // the owner, as the input has her (Семёнова) and as the gateway echoes her (СЕМЕНОВА)
  '490-905-752 13',
  '490 905 752 13',
  '49090575213', // her SNILS
  '23.09.1991',
  '1991-09-23', // her date of birth
  'григорьева', // the bank's representative, from the profile
  '45 07 318264',
  '4507318264',
  '318264', // the representative's passport
  '13840271548',
  '17.05.1982',
  '1982-05-17',
  'кузнецов',
  '462-398-405 08',
  '46239840508',
  '1986-04-12',
  '50 06 104232',
  '104232', // the owner of the deal that is made
];
const fold = (text: string): string => text.toLowerCase().replace(/ё/g, 'е');
/** A number is found only whole (not inside a stream id or a timestamp). */
const NEEDLES = PERSONAL.map((v) => ({
  v,
  re: new RegExp(`${/^\d/.test(v) ? '(?<!\\d)' : ''}${v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${/\d$/.test(v) ? '(?!\\d)' : ''}`),
}));
const leaks = (text: string): string[] => NEEDLES.filter((n) => n.re.test(fold(text))).map((n) => n.v);

const ddmmyyyy = (iso: string): string => iso.split('-').reverse().join('.');
/** The Error object a gateway that repeats its input would send. */
function echo(body: {
  options: {
    whoseRightRestricted: { individualOwnership: { owner: { person: Person } } };
    whoUseRestriction: { encumbrancer: Array<{ representative: { person: Person } }> };
  };
}) {
  const owner = body.options.whoseRightRestricted.individualOwnership.owner.person;
  const rep = body.options.whoUseRestriction.encumbrancer[0]!.representative.person;
  const s = owner.snils.replace(/\D/g, '');
  const doc = rep.identityDocument;
  return {
    code: `badSnils${s}`,
    message: `${owner.surname.toUpperCase().replace(/Ё/g, 'Е')}: СНИЛС ${s.slice(0, 3)}-${s.slice(3, 6)}-${s.slice(6, 9)} ${s.slice(9)} не совпадает; дата рождения ${ddmmyyyy(owner.dateBirth)}`,
    target: 'options.whoseRightRestricted',
    errors: [
      {
        code: 'passport',
        message: `паспорт представителя ${rep.surname} ${doc.series!.slice(0, 2)} ${doc.series!.slice(2)} ${doc.number} (${rep.dateBirth})`,
        target: 'options.whoUseRestriction',
      },
    ],
  };
}

/** The gateway: the sandbox for everything but the docflow call, which answers 501, then 400, each echoing the request. */
async function startEchoingGateway(sandbox: RunningSandbox): Promise<{ url: string; calls: () => number; close: () => Promise<void> }> {
  let calls = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const sent =
        req.method === 'POST' && req.url === DOCFLOWS ? (JSON.parse(body.toString('utf8')) as Parameters<typeof echo>[0]) : undefined;
      if (sent && sent.options.whoseRightRestricted.individualOwnership.owner.person.surname === 'Семёнова') {
        calls++;
        res.writeHead(calls === 1 ? 501 : 400, { 'content-type': 'application/json' });
        res.end(JSON.stringify(echo(sent)));
        return;
      }
      const headers = {
        authorization: String(req.headers.authorization ?? ''),
        'content-type': String(req.headers['content-type'] ?? 'application/json'),
      };
      request(`${sandbox.url}${req.url}`, { method: req.method as 'GET' | 'POST', headers, ...(body.length > 0 && { body }) })
        .then(async (answer) => {
          res.writeHead(answer.statusCode, { 'content-type': 'application/json' });
          res.end(Buffer.from(await answer.body.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, calls: () => calls, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Everything a Redis key holds, as text. */
async function contentOf(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  if (type === 'string') return (await redis.get(key)) ?? '';
  if (type === 'hash') return JSON.stringify(await redis.hgetall(key));
  if (type === 'list') return JSON.stringify(await redis.lrange(key, 0, -1));
  if (type === 'set') return JSON.stringify(await redis.smembers(key));
  if (type === 'zset') return JSON.stringify(await redis.zrange(key, '0', '-1'));
  if (type === 'stream') return JSON.stringify(await redis.xrange(key, '-', '+'));
  return '';
}

// The prefix, client, sandbox, folder and profile once for the file; a database of each test's own.
const it = harness({
  per: 'file',
  each: ['db'],
  label: 'pd-echo',
  sandbox: { sessions: [SESSION] },
  redis: { maxRetriesPerRequest: null },
});

describe('personal data echoed by the gateway', () => {
  let store: UsedDatabase;
  let prefix: string;
  let keys: Keys;
  let redis: Redis;
  let sandbox: RunningSandbox;
  let gateway: Awaited<ReturnType<typeof startEchoingGateway>>;
  let dir: string;
  let profile: BankProfile;

  it.beforeAll(async ({ prefix: made, keys: madeKeys, redis: client, sandbox: started, dir: folder, profile: sample }) => {
    prefix = made;
    keys = madeKeys;
    redis = client;
    sandbox = started;
    gateway = await startEchoingGateway(sandbox);
    dir = folder;
    profile = await sample.load();
  });
  it.beforeEach(({ db }) => {
    store = db;
  });
  // Before the harness closes the sandbox behind it.
  afterAll(async () => {
    await gateway.close();
  });

  it("keeps the owner's SNILS, her surname with ё, her date of birth and the representative's passport out of results, outcomes, the job, the events stream, debug logs, every Redis key but the expiring batch metadata, and the database", async () => {
    const file = join(dir, 'deals.csv');
    await writeFile(file, csvText([ROW, MADE]));
    let logs = '';
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) => (logs += d.toString()));
    const out = join(dir, 'results.csv');
    const attention = join(dir, 'attention.csv');
    const result = await runBatch({
      file,
      profile,
      batch: 'echo',
      redis,
      keys,
      db: store.db,
      logger: createLogger({ level: 'debug', destination: stream }),
      apiUrl: gateway.url,
      sessionId: SESSION,
      processor: createDealProcessor,
      worker: { concurrency: 2, attempts: 3, backoffMs: 50, timeoutMs: 2000, feedLagMs: 300, feedPollMs: 50 },
      waiting: { pollMs: 20 },
      output: { out, attention, rejects: join(dir, 'rejects.csv') },
    });
    expect(result.results.counts).toMatchObject({ rejected: 1, queued: 1 });
    expect(gateway.calls()).toBe(2);

    // The results file, and the attention file's own column (its other columns are the input's, by design).
    const [row] = (parse(readFileSync(out), { columns: true }) as Array<Record<string, string>>).filter((r) => r.dealId === DEAL_ID);
    expect(row).toMatchObject({ outcome: 'rejected', httpStatus: '400', errorCode: 'badSnils***' });
    expect(row!.errorMessage).toMatch(/^400: badSnils\*\*\*: \*\*\*: СНИЛС \*\*\* не совпадает; дата рождения \*\*\*/);
    expect(leaks(readFileSync(out, 'utf8'))).toEqual([]);
    const [needy] = (parse(readFileSync(attention), { columns: true, bom: true, delimiter: ';' }) as Array<Record<string, string>>).filter(
      (r) => r.dealId === DEAL_ID,
    );
    expect(needy!.errors).toBe(row!.errorMessage);

    // The stored outcomes (the database's, which the results file was written from).
    const stored = JSON.stringify(await storedOutcomes(store.db, 'echo'));
    expect(stored).toContain('badSnils***');
    expect(leaks(stored)).toEqual([]);

    // The job as Bull Board shows it: completed with its (masked) record, the failedReason and
    // stacktrace of the try that was retried, its data.
    const queue = openQueue(redis, keys);
    try {
      const job = (await queue.getJob(dealJobId('echo', DEAL_ID)))!;
      expect(await job.getState()).toBe('completed');
      expect(job.returnvalue).toMatchObject({ outcome: 'rejected', errorCode: 'badSnils***' });
      expect(job.failedReason).toContain('badSnils***');
      expect(job.stacktrace).toHaveLength(1);
      expect(job.data.deal).toBeUndefined();
      expect(
        leaks(
          [
            job.failedReason,
            ...(job.stacktrace ?? []),
            JSON.stringify(job.returnvalue),
            JSON.stringify(job.data),
            JSON.stringify(maskJobData(job.data)),
          ].join('\n'),
        ),
      ).toEqual([]);
    } finally {
      await queue.close();
    }

    // The queue's events stream: the retried try's failed event carries its failedReason, the completed event the record.
    const events = JSON.stringify(await redis.xrange(`${keys.bullPrefix}:${keys.queueName}:events`, '-', '+'));
    expect(events).toContain('badSnils***');
    expect(leaks(events)).toEqual([]);

    // The log lines, at debug: the retry's line names the masked code.
    const lines = logs.split('\n').filter(Boolean);
    expect(lines.some((l) => l.includes('transient failure, will retry') && l.includes('"errorCode":"badSnils***"'))).toBe(true);
    expect(leaks(logs)).toEqual([]);

    // Every key of the run: only the batch's metadata (its profile) holds a person's values, and it
    // expires.
    let cursor = '0';
    const holding: string[] = [];
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of found) {
        if (leaks(await contentOf(redis, key)).length === 0) continue;
        holding.push(key);
        expect(await redis.pttl(key), key).toBeGreaterThan(0);
      }
    } while (cursor !== '0');
    expect(holding).toEqual([keys.batch('echo')]);

    // The database, kept for years: the ledger's entry of the deal made, the docflows' states, the
    // feed, and every other table's text columns hold none.
    expect(await ledgerRow(store.db, profile.organization.inn, MADE[0]!)).toMatchObject({ state: 'submitted' });
    const { tables, text } = await databaseText(store.db);
    expect(tables).toEqual(
      expect.arrayContaining(['batches', 'deployment', 'docflow_history', 'docflows', 'feed', 'ledger', 'operator_actions', 'outcomes']),
    );
    expect(text).toContain(MADE[0]!);
    expect(leaks(text)).toEqual([]);
  });
});
