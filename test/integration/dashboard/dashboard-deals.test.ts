/**
 * `/deals`: a deal found by its dealId, a docflowId (its own or one a resubmission replaced) or
 * its cadastral number across every batch, and its history from the database (claim, tries,
 * docflows and the states the feed showed, operator actions), over the real HTTP server with
 * real Redis and a real database; escaped, bounded, never showing a job's personal data.
 */
import { Queue } from 'bullmq';
import { afterEach, describe, expect } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { recordAction } from '../../../src/db/operator-actions.js';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import type { DealHistory, DealSearch } from '../../../src/ledger/history.js';
import { REGISTRATION } from '../../../src/ledger/entry.js';
import { DEAL_JOB, dealJobId, type DealJobData } from '../../../src/queue/job-data.js';
import {
  basic,
  batchHarness,
  call,
  runDashboardBatch,
  sampleDeal,
  WITH_NUMBER,
  BY_SUGGEST,
  type Answer,
} from '../../helpers/dashboard-batch.js';
import { ENGINES } from '../../helpers/database.js';
import { ledgerRow, ledgerRows, putDocflowRow, putLedgerRow } from '../../helpers/ledger-rows.js';
import { harness } from '../../helpers/harness.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

const USER = 'ops';
const PASSWORD = 'correct horse battery staple';
const AUTH = basic(USER, PASSWORD);

const BANK = '7701934587';
const OTHER_BANK = '7728168971';
/** Resubmitted: try 1 is sending (its answer lost), try 0's docflow the registry refused. */
const DEAL = 'NSK-2026-900001';
const CN = '54:35:0101001:1234';
const DF_OLD = '0b6f0a3c-5d57-4bd1-9d1c-000000000001';
/** Submitted, its docflow in its entry. */
const DEAL2 = 'NSK-2026-900002';
const CN2 = '54:35:0101001:5678';
const DF2 = '0b6f0a3c-5d57-4bd1-9d1c-000000000002';
/** DEAL of another bank: one dealId, two entries. */
const DF3 = '0b6f0a3c-5d57-4bd1-9d1c-000000000003';
/** A docflow whose deal the ledger no longer has. */
const ORPHAN = 'NSK-2026-900009';
const DF_ORPHAN = '0b6f0a3c-5d57-4bd1-9d1c-000000000009';
const TRY_AT = Date.parse('2026-11-24T19:43:10.000Z');

const path = (bank: string, dealId: string, type: string = REGISTRATION) =>
  `/deals/${encodeURIComponent(bank)}/${encodeURIComponent(type)}/${encodeURIComponent(dealId)}`;

/** A deal's history as the follower and the worker would have left it. */
async function seed(db: Database): Promise<void> {
  const prev = {
    n: 0,
    docflowId: DF_OLD,
    outcome: 'queued',
    batch: 'night',
    row: 3,
    at: '2026-11-23T08:00:00.000Z',
    via: 'answer',
    cn: CN,
  };
  await putLedgerRow(db, {
    bank: BANK,
    deal_id: DEAL,
    n: 1,
    state: 'sending',
    batch: 'evening',
    row: 7,
    job: dealJobId('evening', DEAL),
    try_at: TRY_AT,
    end_at: TRY_AT + 1500,
    timeout_ms: 30_000,
    lag_ms: 60_000,
    nonce: 'run-1',
    cn: CN,
    addr: 'a1b2c3d4e5f60718',
    pf: 'ff00ff00',
    prev: JSON.stringify(prev),
  });
  await putDocflowRow(db, {
    docflow_id: DF_OLD,
    bank: BANK,
    deal_id: DEAL,
    n: 0,
    request_id: `${BANK}:reg:0:${DEAL}`,
    st: 'error',
    sat: '2026-11-24T10:00:00.000Z',
    rerr: 'the registry refused: a mismatch of the area',
    payer: 'masked-payer-text',
  });
  const seen = [
    ['queued', '2026-11-23T08:00:00.000Z', Date.parse('2026-11-23T08:01:00.000Z')],
    ['sent', '2026-11-23T12:00:00.000Z', Date.parse('2026-11-23T12:01:00.000Z')],
    ['error', '2026-11-24T10:00:00.000Z', Date.parse('2026-11-24T10:01:00.000Z')],
  ] as const;
  await db.kysely
    .insertInto('docflow_history')
    .values(seen.map(([st, sat, seen_at]) => ({ docflow_id: DF_OLD, st, sat, seen_at })))
    .execute();
  await putLedgerRow(db, {
    bank: BANK,
    deal_id: DEAL2,
    state: 'submitted',
    batch: 'night',
    row: 4,
    docflow_id: DF2,
    outcome: 'queued',
    at: '2026-11-23T08:00:05.000Z',
    via: 'answer',
    cn: CN2,
  });
  await putLedgerRow(db, {
    bank: OTHER_BANK,
    deal_id: DEAL,
    state: 'submitted',
    batch: '',
    row: 0,
    docflow_id: DF3,
    outcome: 'queued',
    at: '2026-11-22T09:00:00.000Z',
    via: 'feed',
  });
  await putDocflowRow(db, { docflow_id: DF_ORPHAN, bank: BANK, deal_id: ORPHAN, request_id: `${BANK}:reg:0:${ORPHAN}`, st: 'completed' });
  await recordAction(db, { who: 'alice', action: 'retry', batch: 'evening', dealId: DEAL, detail: 'unavailable: 1 sent around again' });
  await recordAction(db, { who: 'bob', action: 'retry', batch: 'night', detail: 'failed: 0 sent around again' });
}

describe.each(ENGINES)('the dashboard finds a deal and shows its history (%s)', (engine) => {
  const it = harness({ label: 'dashboard-deals', engine, redis: { maxRetriesPerRequest: null } });
  let store: UsedDatabase;
  let dashboard: RunningDashboard;
  let readOnly: RunningDashboard;

  it.beforeEach(async ({ redis, keys, db }) => {
    store = db;
    const common = {
      redis,
      keys,
      db: store.db,
      host: '127.0.0.1',
      port: 0,
      credentials: { user: USER, password: PASSWORD },
      loginThrottle: { failures: 1000 },
    };
    dashboard = await startDashboard(common);
    readOnly = await startDashboard({ ...common, readOnly: true });
  });
  afterEach(async () => {
    await dashboard?.close();
    await readOnly?.close();
  });

  const get = (p: string, url = dashboard.url): Promise<Answer> => call(`${url}${p}`, { authorization: AUTH });
  async function search(q: string): Promise<DealSearch> {
    const answer = await get(`/deals?q=${encodeURIComponent(q)}&format=json`);
    expect(answer.status, q).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return JSON.parse(answer.text) as DealSearch;
  }
  const found = (s: DealSearch) => s.matches.map((m) => [m.bank, m.dealId, m.state, m.matchedBy]);

  it('finds a deal by its dealId in every bank, by its docflow, by a docflow a resubmission replaced, and by its cadastral number', async () => {
    await seed(store.db);
    expect(found(await search(DEAL))).toEqual([
      [BANK, DEAL, 'sending', ['dealId']],
      [OTHER_BANK, DEAL, 'submitted', ['dealId']],
    ]);
    expect(found(await search(DF2))).toEqual([[BANK, DEAL2, 'submitted', ['docflowId']]]);
    expect(found(await search(DF3))).toEqual([[OTHER_BANK, DEAL, 'submitted', ['docflowId']]]);
    // Replaced by try 1: the entry names it only in `prev`; `docflows` still has it.
    expect(found(await search(DF_OLD))).toEqual([[BANK, DEAL, 'sending', ['docflowId']]]);
    expect(found(await search(CN))).toEqual([[BANK, DEAL, 'sending', ['cadastralNumber']]]);
    expect(found(await search(` ${CN2}\t`))).toEqual([[BANK, DEAL2, 'submitted', ['cadastralNumber']]]);
    // The ledger forgot it; its docflow says whose it was.
    expect(found(await search(DF_ORPHAN))).toEqual([[BANK, ORPHAN, null, ['docflowId']]]);
    expect((await search('NSK-2026-000000')).matches).toEqual([]);
    expect(await search('')).toEqual({ q: '', matches: [], actions: 0, cut: false, limit: 100 });
    expect((await search(DEAL)).actions).toBe(1);

    const first = (await search(DEAL)).matches[0]!;
    expect(first).toEqual({
      bank: BANK,
      type: REGISTRATION,
      dealId: DEAL,
      state: 'sending',
      n: 1,
      docflowId: null,
      batch: 'evening',
      row: 7,
      at: null,
      via: null,
      matchedBy: ['dealId'],
    });
  });

  it('lists the matches as a page linking each deal to its history', async () => {
    await seed(store.db);
    const page = await get(`/deals?q=${encodeURIComponent(DEAL)}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    expect(page.text).toContain(`href="${path(BANK, DEAL)}"`);
    expect(page.text).toContain(`href="${path(OTHER_BANK, DEAL)}"`);
    expect(page.text).toContain('evening, row 7');
    expect(page.text).toContain('the news feed (no row)');
    expect(page.text).toContain(`value="${DEAL}"`);
    expect(page.text).not.toMatch(/<script/i);
    expect(page.text).toContain(`<a href="/audit?dealId=${DEAL}">1 operator action</a> name this dealId.`);
    const none = await get('/deals?q=nothing-of-ours');
    expect(none.text).toContain('No deal in the database has that dealId, docflowId or cadastral number.');
    expect(none.text).not.toContain('operator action</a>');
    // A deal whose claim was released with no docflow (its entry gone): the actions on it are still found.
    await recordAction(store.db, {
      who: 'carol',
      action: 'retry',
      batch: 'night',
      dealId: 'NSK-2026-900077',
      detail: 'failed: 1 sent around again',
    });
    const released = await get('/deals?q=NSK-2026-900077');
    expect(released.text).toContain('No deal in the database has that dealId');
    expect(released.text).toContain('<a href="/audit?dealId=NSK-2026-900077">1 operator action</a>');
    const empty = await get('/deals');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('<form method="get" action="/deals">');
    // The Accept header a script sends gets JSON; a browser's gets the page.
    const viaAccept = await fetch(`${dashboard.url}/deals?q=${encodeURIComponent(DEAL)}`, {
      headers: { authorization: AUTH, accept: 'application/json' },
    });
    expect(viaAccept.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await viaAccept.json()) as DealSearch).matches).toHaveLength(2);
    const browser = await fetch(`${dashboard.url}/deals?q=${encodeURIComponent(DEAL)}`, {
      headers: { authorization: AUTH, accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(browser.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it("shows a deal's claim and tries, every docflow with the states the feed showed, and the operators' actions on it", async () => {
    await seed(store.db);
    const json = await get(`${path(BANK, DEAL)}?format=json`);
    expect(json.status).toBe(200);
    const history = JSON.parse(json.text) as DealHistory;
    expect(history).toEqual({
      bank: BANK,
      type: REGISTRATION,
      dealId: DEAL,
      ledger: {
        state: 'sending',
        n: 1,
        requestId: `${BANK}:reg:1:${DEAL}`,
        batch: 'evening',
        row: 7,
        job: dealJobId('evening', DEAL),
        tryAt: '2026-11-24T19:43:10.000Z',
        endAt: '2026-11-24T19:43:11.500Z',
        timeoutMs: 30_000,
        lagMs: 60_000,
        docflowId: null,
        outcome: null,
        at: null,
        via: null,
        cadastralNumber: CN,
        prev: { n: 0, docflowId: DF_OLD, outcome: 'queued', batch: 'night', row: 3, at: '2026-11-23T08:00:00.000Z', via: 'answer' },
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown as string,
      },
      docflows: [
        {
          docflowId: DF_OLD,
          n: 0,
          requestId: `${BANK}:reg:0:${DEAL}`,
          state: 'error',
          stateAt: '2026-11-24T10:00:00.000Z',
          requirement: null,
          requirementAt: null,
          paymentUin: null,
          paymentAmount: null,
          registryError: 'the registry refused: a mismatch of the area',
          resultFiles: null,
          updatedAt: expect.stringMatching(/^\d{4}-/) as unknown as string,
          history: [
            { state: 'queued', at: '2026-11-23T08:00:00.000Z', seenAt: '2026-11-23T08:01:00.000Z' },
            { state: 'sent', at: '2026-11-23T12:00:00.000Z', seenAt: '2026-11-23T12:01:00.000Z' },
            { state: 'error', at: '2026-11-24T10:00:00.000Z', seenAt: '2026-11-24T10:01:00.000Z' },
          ],
        },
      ],
      actions: [
        {
          id: expect.any(Number) as unknown as number,
          at: expect.any(String) as unknown as string,
          who: 'alice',
          action: 'retry',
          batch: 'evening',
          dealId: DEAL,
          detail: 'unavailable: 1 sent around again',
        },
      ],
      cut: { history: false, actions: false },
    });
    // Columns made from persons or addresses, even hashed or masked, are never shown.
    expect(json.text).not.toContain('a1b2c3d4e5f60718');
    expect(json.text).not.toContain('ff00ff00');
    expect(json.text).not.toContain('masked-payer-text');

    const page = await get(path(BANK, DEAL));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    for (const text of [
      'sending',
      `${BANK}:reg:1:${DEAL}`,
      'batch <code>evening</code>, row 7',
      '2026-11-24T19:43:10.000Z',
      '2026-11-24T19:43:11.500Z',
      CN,
      DF_OLD,
      'sent <span class="muted">2026-11-23T12:00:00.000Z, seen 2026-11-23T12:01:00.000Z</span>',
      'the registry refused: a mismatch of the area',
      '<td>alice</td>',
      'unavailable: 1 sent around again',
    ])
      expect(page.text).toContain(text);
    expect(page.text).not.toContain('bob');
    expect(page.text).not.toContain('a1b2c3d4e5f60718');

    // The other bank's entry of the same dealId is its own deal: found by the feed, no row, no docflow stored.
    const other = JSON.parse((await get(`${path(OTHER_BANK, DEAL)}?format=json`)).text) as DealHistory;
    expect(other.ledger).toMatchObject({ state: 'submitted', batch: '', docflowId: DF3, via: 'feed', prev: null });
    expect(other.docflows).toEqual([]);
    // A deal the ledger forgot: its docflow still tells.
    const orphan = JSON.parse((await get(`${path(BANK, ORPHAN)}?format=json`)).text) as DealHistory;
    expect(orphan.ledger).toBeNull();
    expect(orphan.docflows.map((d) => [d.docflowId, d.state])).toEqual([[DF_ORPHAN, 'completed']]);
  });

  it('escapes every value in HTML: a dealId with markup and a slash is shown as text and still links to its history', async () => {
    const hostile = `<script>alert("x")</script>/'&"`;
    const hostileCn = `<img src=x onerror=alert(1)>`;
    await putLedgerRow(store.db, {
      bank: BANK,
      deal_id: hostile,
      state: 'submitted',
      batch: '<b>batch</b>',
      row: 1,
      docflow_id: DF2,
      cn: hostileCn,
    });
    await recordAction(store.db, { who: '<i>eve</i>', action: 'retry', dealId: hostile, detail: '<script>detail</script>' });
    const list = await get(`/deals?q=${encodeURIComponent(hostile)}`);
    const byCn = await get(`/deals?q=${encodeURIComponent(hostileCn)}`);
    const history = await get(path(BANK, hostile));
    expect(history.status).toBe(200);
    for (const page of [list, byCn, history]) {
      expect(page.text).not.toMatch(/<script|<img|<b>|<i>/i);
      expect(page.text).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;/&#39;&#38;&#34;');
    }
    expect(byCn.text).toContain('&#60;img src=x onerror=alert(1)&#62;');
    expect(history.text).toContain('&#60;i&#62;eve&#60;/i&#62;');
    expect(history.text).toContain('&#60;script&#62;detail&#60;/script&#62;');
    // The link the list gives opens the deal: its `/` travels as %2F.
    const href = /href="(\/deals\/[^"]+)"/.exec(list.text)?.[1]?.replace(/&#(\d+);/g, (_m, c: string) => String.fromCharCode(Number(c)));
    expect(href).toBe(path(BANK, hostile));
    const followed = JSON.parse((await get(`${href!}?format=json`)).text) as DealHistory;
    expect(followed.dealId).toBe(hostile);
    expect(followed.ledger?.cadastralNumber).toBe(hostileCn);
  });

  it('lists at most 100 deals and says so when more match', async () => {
    const shared = '77:01:0000000:1';
    await store.db.kysely
      .insertInto('ledger')
      .values(
        Array.from({ length: 101 }, (_, i) => ({
          bank: BANK,
          type: REGISTRATION,
          deal_id: `MSK-2026-${String(i).padStart(6, '0')}`,
          n: 0,
          state: 'submitted',
          batch: 'big',
          row: i + 1,
          docflow_id: `df-${i}`,
          cn: shared,
          updated_at: Date.now(),
        })),
      )
      .execute();
    const result = await search(shared);
    expect(result.matches).toHaveLength(100);
    expect(result.cut).toBe(true);
    expect(result.matches[0]!.dealId).toBe('MSK-2026-000000');
    expect(result.matches.at(-1)!.dealId).toBe('MSK-2026-000099');
    const page = await get(`/deals?q=${encodeURIComponent(shared)}`);
    expect(page.text).toContain('More than 100 deals match: the first 100 by bank, type and dealId are listed.');
    expect(page.text.match(/<tr>\n<td>/g)).toHaveLength(100);
  });

  it('answers a bad request and an unknown deal with a fixed sentence that repeats nothing of it', async () => {
    await seed(store.db);
    const cases: Array<[string, number, RegExp]> = [
      [`/deals?q=${'x'.repeat(201)}`, 400, /^Give one dealId, docflowId or cadastral number of at most 200 characters as q\.\n$/],
      ['/deals?q=a&q=b', 400, /^Give one dealId/],
      ['/deals?q=a&format=<xml>', 400, /^The format must be html or json\.\n$/],
      [path(BANK, 'NSK-<nobody>'), 404, /^The database knows nothing of that deal: neither a ledger entry nor a docflow\.\n$/],
      // The operator action on DEAL names no bank nor type: it makes no deal of another type.
      [path(BANK, DEAL, 'cessation_encumbrance_request'), 404, /^The database knows nothing of that deal/],
    ];
    for (const [p, status, text] of cases) {
      const answer = await get(p);
      expect(answer.status, p).toBe(status);
      expect(answer.text, p).toMatch(text);
      expect(answer.text).not.toMatch(/nobody|xml|xxxx/);
    }
    const asJson = await get(`${path(BANK, 'nobody')}?format=json`);
    expect(asJson.status).toBe(404);
    expect(JSON.parse(asJson.text)).toEqual({ error: 'The database knows nothing of that deal: neither a ledger entry nor a docflow.' });
  });

  it('asks for the credentials, and serves the pages read-only too', async () => {
    await seed(store.db);
    for (const p of ['/deals', `/deals?q=${DEAL}`, path(BANK, DEAL), '/audit']) {
      const anonymous = await call(`${dashboard.url}${p}`);
      expect(anonymous.status, p).toBe(401);
      expect(anonymous.text).not.toContain(DEAL.slice(4));
      const shown = await get(p, readOnly.url);
      expect(shown.status, p).toBe(200);
    }
    expect((await get(`/deals?q=${DEAL}`, readOnly.url)).text).toContain(`href="${path(BANK, DEAL)}"`);
    const batches = await get('/batches');
    expect(batches.text).toContain('<a href="/deals">Find a deal</a>');
    expect(batches.text).toContain('<a href="/audit">Operator actions</a>');
  });
});

describe('a deal a real batch sent, found on the dashboard', () => {
  const it = batchHarness({ per: 'test', label: 'dashboard-deals-run' });

  it("finds it by its dealId, its docflow and its cadastral number, and shows nothing of a job's personal data", async ({
    redis,
    keys,
    prefix,
    db: store,
    dir,
    sandbox,
    profile,
  }) => {
    const night = await runDashboardBatch({ redis, keys, prefix, db: store, dir, sandbox, profile }, [WITH_NUMBER, BY_SUGGEST]);
    const dashboard = await startDashboard({
      redis: night.redis,
      keys: night.keys,
      db: store.db,
      host: '127.0.0.1',
      port: 0,
      credentials: { user: USER, password: PASSWORD },
    });
    // A later batch's job of the same deal, waiting: its data holds the owners.
    const queue = new Queue<DealJobData>(night.keys.queueName, { connection: night.redis, prefix: night.keys.bullPrefix });
    const deal = sampleDeal(WITH_NUMBER);
    try {
      await queue.add(DEAL_JOB, { batch: 'later', row: 1, dealId: WITH_NUMBER, deal }, { jobId: dealJobId('later', WITH_NUMBER) });
      expect((await ledgerRows(store.db)).map((r) => [r.deal_id, r.state])).toEqual([
        [WITH_NUMBER, 'submitted'],
        [BY_SUGGEST, 'submitted'],
      ]);
      const entry = (await ledgerRow(store.db, BANK, WITH_NUMBER))!;
      expect(entry.cn).toBe('77:06:0005011:2376');
      const get = (p: string) => call(`${dashboard.url}${p}`, { authorization: AUTH });
      for (const q of [WITH_NUMBER, entry.docflow_id!, '77:06:0005011:2376']) {
        const result = JSON.parse((await get(`/deals?q=${encodeURIComponent(q)}&format=json`)).text) as DealSearch;
        expect(
          result.matches.map((m) => [m.bank, m.dealId, m.state, m.docflowId, m.batch, m.row, m.via]),
          q,
        ).toEqual([[BANK, WITH_NUMBER, 'submitted', entry.docflow_id, 'night', 1, 'answer']]);
      }
      const page = await get(path(BANK, WITH_NUMBER));
      expect(page.status).toBe(200);
      expect(page.text).toContain(entry.docflow_id!);
      expect(page.text).toContain('batch <code>night</code>, row 1');
      for (const owner of deal.owners) {
        for (const value of [owner.surname, owner.name, owner.doc.number, owner.birthPlace].filter((v): v is string => Boolean(v)))
          expect(page.text).not.toContain(value);
        expect(page.text.replace(/\D/g, '')).not.toContain(owner.snils);
      }
    } finally {
      await queue.close();
      await dashboard.close();
    }
  });
});
