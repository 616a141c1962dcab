import { describe, it, expect } from 'vitest';
import { NEWS_PATH, newsPageSchema, type NewsPage } from '../../../src/domain/gateway.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { DOCFLOW_PATH, SESSION, call, encumbranceRequest, post, withSandbox } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const noSignatures = (requestId: string) =>
  encumbranceRequest({ requestId, 'options.appliedDocuments.mortgageAgreement.content.signatures': undefined });

/** A page of the feed, checked against the contract's schema. */
async function news(sandbox: RunningSandbox, query = ''): Promise<NewsPage> {
  const answer = await call(sandbox, 'GET', `${NEWS_PATH}${query}`);
  expect(answer.status, answer.text).toBe(200);
  return newsPageSchema.parse(answer.body);
}

async function create(sandbox: RunningSandbox, requestId: string): Promise<string> {
  const answer = await post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId }));
  expect(answer.status).toBe(200);
  return (answer.body as { docflowId: string }).docflowId;
}

const tokens = (page: NewsPage) => page.news.map((item) => item.token);
const requestIds = (page: NewsPage) => page.news.map((item) => item.docflow.requestId);

describe('sandbox news feed', () => {
  it('starts from now without after: no items and the newest token, "0" while the feed is empty', async () => {
    await withSandbox({}, async (sandbox) => {
      expect(await news(sandbox)).toEqual({ news: [], lastToken: '0' });
      await create(sandbox, 'a');
      await create(sandbox, 'b');
      expect(await news(sandbox)).toEqual({ news: [], lastToken: '2' });
    });
  });

  it('lists every docflow in creation order with increasing tokens, as its creation answered', async () => {
    await withSandbox({ sessions: [SESSION, 'other-session'] }, async (sandbox) => {
      const queued = await create(sandbox, 'r-1');
      const suspended = await post(sandbox, DOCFLOW_PATH, noSignatures('r-2'));
      const elsewhere = await post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: 'r-3' }), {
        authorization: 'auth.sid other-session',
      });
      const page = await news(sandbox, '?after=0');
      expect(tokens(page)).toEqual(['1', '2', '3']);
      expect(page.lastToken).toBe('3');
      const [first, second, third] = page.news;
      expect(first?.docflow).toMatchObject({
        docflowId: queued,
        docflowType: 'encumbrance_request',
        type: 'encumbrance_request',
        state: 'queued',
        requestId: 'r-1',
      });
      expect(first?.docflow).not.toHaveProperty('requirements');
      expect(second?.docflow).toMatchObject({
        docflowId: (suspended.body as { docflowId: string }).docflowId,
        state: 'suspended',
        requirements: { signature: [{ role: 'owner' }, { role: 'representative' }] },
      });
      expect(third?.docflow.docflowId).toBe((elsewhere.body as { docflowId: string }).docflowId);
      expect(page.news.map((item) => item.date)).toEqual(sandbox.docflows().map((d) => d.createdAt));
      // One stable user per session, never the session id itself.
      expect(first?.docflow.userId).toMatch(UUID);
      expect(second?.docflow.userId).toBe(first?.docflow.userId);
      expect(third?.docflow.userId).toMatch(UUID);
      expect(third?.docflow.userId).not.toBe(first?.docflow.userId);
      expect(JSON.stringify(page)).not.toContain(SESSION);
    });
  });

  it('pages with after and limit, and answers lastToken = after when nothing is new', async () => {
    await withSandbox({}, async (sandbox) => {
      for (let i = 1; i <= 5; i += 1) await create(sandbox, `p-${i}`);
      const one = await news(sandbox, '?after=0&limit=2');
      expect([tokens(one), requestIds(one), one.lastToken]).toEqual([['1', '2'], ['p-1', 'p-2'], '2']);
      const two = await news(sandbox, `?after=${one.lastToken}&limit=2`);
      expect([tokens(two), requestIds(two), two.lastToken]).toEqual([['3', '4'], ['p-3', 'p-4'], '4']);
      const three = await news(sandbox, `?after=${two.lastToken}`);
      expect([tokens(three), three.lastToken]).toEqual([['5'], '5']);
      expect(await news(sandbox, '?after=5')).toEqual({ news: [], lastToken: '5' });
      expect(tokens(await news(sandbox, '?after=0&limit=1000'))).toHaveLength(5);
    });
  });

  it('publishes a docflow whose creation answer was lost', async () => {
    await withSandbox({ faultLost: 1 }, async (sandbox) => {
      await expect(post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: 'lost-1' }))).rejects.toThrow();
      const page = await news(sandbox, '?after=0');
      expect(requestIds(page)).toEqual(['lost-1']);
      expect(page.news[0]?.docflow.docflowId).toBe(sandbox.docflows()[0]?.docflowId);
    });
  });

  it('hides an item until newsLagMs after its creation, and tokens it when it appears, after items published meanwhile', async () => {
    await withSandbox({ newsLagMs: 150 }, async (sandbox) => {
      const started = performance.now();
      await create(sandbox, 'late');
      expect(await news(sandbox, '?after=0')).toEqual({ news: [], lastToken: '0' });
      // Lowered at runtime: the next docflow is visible at once, before the earlier one.
      expect((await post(sandbox, '/__sandbox/config', { newsLagMs: 0 }, {})).status).toBe(204);
      await create(sandbox, 'early');
      const now = await news(sandbox, '?after=0');
      expect([tokens(now), requestIds(now)]).toEqual([['1'], ['early']]);

      // Up to 2 s after the test began.
      const later = async () => {
        const next = await news(sandbox, '?after=1');
        return next.news.length > 0 && next;
      };
      const page = await waitFor(later, {
        timeoutMs: 2000 - (performance.now() - started),
        intervalMs: 10,
        what: 'the late docflow in the feed',
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(150);
      expect([tokens(page), requestIds(page)]).toEqual([['2'], ['late']]);
    });
  });

  it('answers 400 for an after that is not a decimal token or is beyond the newest, and for a limit outside 1..1000', async () => {
    await withSandbox({}, async (sandbox) => {
      await create(sandbox, 'x');
      for (const after of ['abc', '-1', '1.5', '', '2', '99999999999999999999999']) {
        const answer = await call(sandbox, 'GET', `${NEWS_PATH}?after=${encodeURIComponent(after)}`);
        expect(answer.status, after).toBe(400);
        expect(answer.body).toMatchObject({ code: 'validation', target: 'after', message: expect.any(String) });
      }
      for (const limit of ['0', '1001', 'x', '2.5', '']) {
        const answer = await call(sandbox, 'GET', `${NEWS_PATH}?after=0&limit=${limit}`);
        expect(answer.status, limit).toBe(400);
        expect(answer.body).toMatchObject({ code: 'validation', target: 'limit', message: expect.any(String) });
      }
      expect(tokens(await news(sandbox, '?after=0&limit=1'))).toEqual(['1']);
      expect(await news(sandbox, '?after=1')).toEqual({ news: [], lastToken: '1' });
    });
  });

  it('answers 401 without a session or with an unknown one, and 405 for another method', async () => {
    await withSandbox({}, async (sandbox) => {
      await create(sandbox, 'secret');
      const refused: Array<Record<string, string>> = [{}, { authorization: 'auth.sid not-a-session' }];
      for (const headers of refused) {
        const answer = await call(sandbox, 'GET', `${NEWS_PATH}?after=0`, undefined, headers);
        expect(answer.status).toBe(401);
        expect(answer.body).toMatchObject({ code: 'unauthorized' });
      }
      expect((await call(sandbox, 'POST', NEWS_PATH, {})).status).toBe(405);
    });
  });

  it('answers 503 serviceUnavailable during a newsOutage, then the items it held back', async () => {
    await withSandbox({ newsOutage: true }, async (sandbox) => {
      await create(sandbox, 'during-outage');
      const down = await call(sandbox, 'GET', `${NEWS_PATH}?after=0`);
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ code: 'serviceUnavailable', message: expect.any(String) });
      expect((await post(sandbox, '/__sandbox/config', { newsOutage: false }, {})).status).toBe(204);
      expect(requestIds(await news(sandbox, '?after=0'))).toEqual(['during-outage']);
      expect((await post(sandbox, '/__sandbox/config', { newsOutage: true }, {})).status).toBe(204);
      expect((await call(sandbox, 'GET', NEWS_PATH)).status).toBe(503);
    });
  });

  it('makes one item per real creation in dedupe mode, and one per call for a repeated requestId by default', async () => {
    await withSandbox({ requestIds: 'dedupe' }, async (sandbox) => {
      await create(sandbox, 'same');
      await create(sandbox, 'same');
      await create(sandbox, 'other');
      expect(requestIds(await news(sandbox, '?after=0'))).toEqual(['same', 'other']);
    });
    await withSandbox({}, async (sandbox) => {
      await create(sandbox, 'same');
      await create(sandbox, 'same');
      expect(requestIds(await news(sandbox, '?after=0'))).toEqual(['same', 'same']);
    });
  });

  it('applies the latency to the feed but never an injected fault', async () => {
    await withSandbox({ latencyMs: 100, fault501: 1, fault5xx: 1, faultReset: 1 }, async (sandbox) => {
      const started = performance.now();
      expect(await news(sandbox)).toEqual({ news: [], lastToken: '0' });
      // libuv timers count whole milliseconds and may fire up to 1 ms early by performance.now().
      expect(performance.now() - started).toBeGreaterThanOrEqual(98);
      expect(sandbox.stats().faultsInjected).toEqual({});
    });
  });

  it('repeats the seeded creation faults whether or not the feed is polled between the calls', async () => {
    const statuses = async (pollBetween: number): Promise<number[]> => {
      const seen: number[] = [];
      await withSandbox({ seed: 11, fault501: 0.5 }, async (sandbox) => {
        for (let i = 0; i < 16; i += 1) {
          for (let p = 0; p < pollBetween; p += 1) await news(sandbox);
          seen.push((await post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `f-${i}` }))).status);
        }
      });
      return seen;
    };
    const quiet = await statuses(0);
    expect(new Set(quiet)).toEqual(new Set([200, 501]));
    // Three polls per call would shift a shared random source by dozens of draws.
    expect(await statuses(3)).toEqual(quiet);
  });

  it('refuses bad feed settings at /__sandbox/config and accepts good ones', async () => {
    await withSandbox({}, async (sandbox) => {
      for (const bad of [{ newsLagMs: -1 }, { newsLagMs: '5' }, { newsOutage: 'yes' }, { newsFeed: true }]) {
        expect((await post(sandbox, '/__sandbox/config', bad, {})).status, JSON.stringify(bad)).toBe(400);
      }
      expect((await post(sandbox, '/__sandbox/config', { newsLagMs: 10, newsOutage: false, requestIds: 'dedupe' }, {})).status).toBe(204);
    });
  });
});
