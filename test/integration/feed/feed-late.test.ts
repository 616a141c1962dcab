/**
 * When the news feed is late or its pages are short (issue 39, point 1), as a bank runs it: the
 * `run` command against a sandbox that loses answers and never refuses a repeated requestId.
 * - Short pages: a proxy cuts every feed page to 2 or 1 items. A page's length proves nothing,
 *   so no try is judged before a read came back empty: no deal gets two docflows.
 * - A late feed (3 s behind the answers, `--feed-lag-ms 500`): the first run's resent deals get a
 *   second docflow, and each is said: the row names both (DUPLICATE_DOCFLOW, otherDocflowId), `run`
 *   and `status` exit 3, the attention file lists it. The follower measured the lag meanwhile: the
 *   next run waits above it by itself, and files every deal once.
 */
import { createServer, request, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { NEWS_PATH } from '../../../src/domain/gateway.js';
import { parseRequestId } from '../../../src/ledger/entry.js';
import { generateDeals } from '../../chaos/generate-deals.js';
import { runCli } from '../../helpers/cli.js';
import { csvText } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

type Line = Record<string, string>;
const ROWS = 40;

/** A proxy in front of the sandbox that cuts every news page to 2, then 1, then 2 ... items (its lastToken the last item kept). */
async function shortPagesProxy(target: string): Promise<{ url: string; cut: () => number; close: () => Promise<void> }> {
  let pages = 0;
  let cut = 0;
  const server: Server = createServer((req, res) => {
    const upstream = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        let body = Buffer.concat(chunks);
        const headers = { ...answer.headers };
        if (req.url?.startsWith(NEWS_PATH) && answer.statusCode === 200) {
          const page = JSON.parse(body.toString()) as { news: Array<{ token: string }>; lastToken: string };
          const keep = pages++ % 2 === 0 ? 2 : 1;
          if (page.news.length > keep) {
            cut++;
            page.news = page.news.slice(0, keep);
            page.lastToken = page.news.at(-1)!.token;
          }
          body = Buffer.from(JSON.stringify(page));
          delete headers['content-length'];
        }
        res.writeHead(answer.statusCode ?? 502, headers);
        res.end(body);
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cut: () => cut,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The gateway's docflows per deal (every try's requestId names the deal). */
function docflowsPerDeal(sandbox: RunningSandbox): Map<string, string[]> {
  const per = new Map<string, string[]>();
  for (const d of sandbox.docflows()) {
    const dealId = parseRequestId(d.requestId ?? '')?.dealId ?? '';
    per.set(dealId, [...(per.get(dealId) ?? []), d.docflowId]);
  }
  return per;
}

// The folder once for the file; a database of each test's own, and the prefix and sandbox each test opens.
const it = harness({ per: 'file', each: ['db'], label: 'feed-late' });

describe('a late or short news feed', () => {
  let store: UsedDatabase;
  let dir: string;
  let prefix: string;
  let sandbox: RunningSandbox | undefined;
  let proxy: Awaited<ReturnType<typeof shortPagesProxy>> | undefined;

  it.beforeAll(({ dir: folder }) => {
    dir = folder;
  });
  it.beforeEach(({ db }) => {
    store = db;
  });
  // Before the harness closes the test's sandbox and deletes its prefix.
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    sandbox = undefined;
  });

  const env = (apiUrl: string) => ({
    REDIS_URL,
    DATABASE_URL: store.url,
    REALTY_API_URL: apiUrl,
    REALTY_SESSION_ID: 's',
    REALTY_PREFIX: prefix,
    LOG_LEVEL: 'warn',
  });
  const run = async (apiUrl: string, name: string, tag: string, extra: string[]) => {
    await writeFile(join(dir, `${name}.csv`), csvText(generateDeals(ROWS, 1000, tag).rows));
    const { code, stdout, stderr } = await runCli(
      [
        'run',
        join(dir, `${name}.csv`),
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        name,
        '--out',
        join(dir, `${name}.results.csv`),
        '--attention',
        join(dir, `${name}.attention.csv`),
        '--concurrency',
        '4',
        '--timeout-ms',
        '2000',
        '--backoff-ms',
        '50',
        ...extra,
      ],
      env(apiUrl),
      120_000,
    );
    const lines = parse(readFileSync(join(dir, `${name}.results.csv`)), { columns: true, bom: true }) as Line[];
    return { code, out: stdout, err: stderr, lines };
  };

  it('never takes a short page for the feed’s end: no deal gets a second docflow', async ({ openPrefix, openSandbox }) => {
    prefix = openPrefix('feed-short');
    sandbox = await openSandbox({ sessions: ['s'], faultLost: 0.4, seed: 7, lifecycleMs: 200 });
    proxy = await shortPagesProxy(sandbox.url);
    const { code, err, lines } = await run(proxy.url, 'short', 'S', ['--feed-lag-ms', '300']);
    expect(proxy.cut()).toBeGreaterThan(0);
    expect(sandbox.stats().faultsInjected.lost ?? 0).toBeGreaterThan(5);
    const twice = [...docflowsPerDeal(sandbox)].filter(([, ids]) => ids.length > 1);
    expect(twice, err).toEqual([]);
    expect(lines).toHaveLength(ROWS);
    expect(lines.every((l) => l.outcome === 'queued' || l.outcome === 'suspended')).toBe(true);
    expect(code, err).toBe(0);
  });

  it('names every deal a late feed let be filed twice, exits 3, and measures the lag so that the next run files none twice', async ({
    openPrefix,
    openSandbox,
  }) => {
    prefix = openPrefix('feed-late');
    sandbox = await openSandbox({ sessions: ['s'], faultLost: 0.3, seed: 11, newsLagMs: 3000 });

    const first = await run(sandbox.url, 'late', 'L', ['--feed-lag-ms', '500']);
    const twice = [...docflowsPerDeal(sandbox)].filter(([, ids]) => ids.length > 1);
    // The feed shows docflows 3 s after their answers: resends judged after 0.5 s made second docflows.
    expect(twice.length).toBeGreaterThan(0);
    const flagged = first.lines.filter((l) => l.errorCode === 'DUPLICATE_DOCFLOW');
    const unflagged = first.lines.filter((l) => twice.some(([d]) => d === l.dealId) && l.errorCode !== 'DUPLICATE_DOCFLOW');
    expect(flagged.map((l) => l.dealId).sort(), JSON.stringify({ unflagged, twice })).toEqual(twice.map(([dealId]) => dealId).sort());
    for (const l of flagged) {
      const ids = new Map(twice).get(l.dealId ?? '')!;
      expect(ids).toContain(l.docflowId);
      expect(ids).toContain(l.otherDocflowId);
      expect(l.otherDocflowId).not.toBe(l.docflowId);
      expect(l.errorMessage).toMatch(/two docflows/);
    }
    expect(first.code, first.err).toBe(3);
    // The run followed the feed while it ran; nothing does after it (issue 40, point 5): said.
    expect(first.out).toMatch(/^feed: nothing follows the news feed from now on: .*`realty-batch track`/m);
    expect(first.err).toMatch(/two docflows at the gateway \(DUPLICATE_DOCFLOW/);
    const attention = parse(readFileSync(join(dir, 'late.attention.csv')), { columns: true, bom: true, delimiter: ';' }) as Line[];
    expect(
      attention
        .filter((l) => l.errors?.includes('two docflows'))
        .map((l) => l.dealId)
        .sort(),
    ).toEqual(flagged.map((l) => l.dealId).sort());

    const status = await runCli(['status', 'late'], env(sandbox.url));
    expect(status.code, status.stderr).toBe(3);
    expect(status.stderr).toContain(`${flagged.length === 1 ? '1 row has' : `${flagged.length} rows have`} a deal with two docflows`);
    for (const l of flagged) expect(status.stderr).toContain(`${l.docflowId} and ${l.otherDocflowId}`);
    // The lag measured on our clock: at least the sandbox's 3 s.
    // How old the states are, on our clock: read a moment ago, when the run ended.
    expect(status.stdout).toMatch(/^ {2}states as of \S+, \d+ (ms|s) ago/m);
    const lag = /news feed lag: (\d+) ms/.exec(status.stdout);
    expect(lag, status.stdout).not.toBeNull();
    expect(Number(lag![1])).toBeGreaterThanOrEqual(2900);

    // The next run, same deployment, same late feed and the same --feed-lag-ms: it waits above the measured lag.
    const before = sandbox.docflows().length;
    const second = await run(sandbox.url, 'later', 'M', ['--feed-lag-ms', '500']);
    const secondTwice = [...docflowsPerDeal(sandbox)].filter(([dealId, ids]) => dealId.includes('-M') && ids.length > 1);
    expect(secondTwice).toEqual([]);
    expect(sandbox.docflows().length - before).toBe(ROWS);
    expect(second.lines.filter((l) => l.errorCode === 'DUPLICATE_DOCFLOW')).toEqual([]);
    expect(second.code, second.err).toBe(0);
  });
});
