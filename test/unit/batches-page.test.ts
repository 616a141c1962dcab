import { describe, expect, it } from 'vitest';
import { renderBatchesPage } from '../../src/dashboard/batches-page.js';
import { batchStatus, PAGE_OPTIONS } from '../helpers/batch-status.js';

const OPTIONS = PAGE_OPTIONS;
const status = batchStatus;

describe('the batches page', () => {
  it('shows how far a running batch got: a bar and the rows finished, with its start time', () => {
    const html = renderBatchesPage([status({ outcomes: { queued: 120, not_found: 30, pending: 50 }, queue: { waiting: 50 } })], OPTIONS);
    expect(html).toContain('<progress max="200" value="150"></progress> 150 finished (75&nbsp;%)');
    expect(html).toContain('started 2026-11-24T01:30:00.000Z');
    expect(html).toContain('href="/batches/night/attention.csv"');
  });

  it('shows a finished batch without a bar, with its finish time', () => {
    const html = renderBatchesPage([status({ outcomes: { queued: 200 }, done: true, finishedAt: '2026-11-24T01:41:12.000Z' })], OPTIONS);
    expect(html).not.toContain('<progress');
    expect(html).toContain('finished 2026-11-24T01:41:12.000Z');
  });

  it('shows where the docflows stand at the registry, what waits for the bank standing out, and a registered batch', () => {
    const running = renderBatchesPage(
      [status({ outcomes: { queued: 3 }, done: true, states: { sent: 1, suspended: 2 }, waitingFor: { payment: 2 } })],
      OPTIONS,
    );
    expect(running).toContain('<span class="attention">sent 1, suspended 2 (payment 2)</span>');
    const registered = renderBatchesPage(
      [status({ total: 3, outcomes: { queued: 3 }, done: true, registered: true, states: { completed: 3 } })],
      OPTIONS,
    );
    expect(registered).toContain('<span class="done">registered</span>');
    expect(registered).toContain('<td>completed 3</td>');
  });

  it('names the rows whose deal has two docflows at the gateway, in the colour of rows that need a person', () => {
    const html = renderBatchesPage(
      [status({ outcomes: { queued: 200 }, duplicates: [{ row: 7, dealId: 'D-7', docflowId: 'a', otherDocflowId: 'b' }] })],
      OPTIONS,
    );
    expect(html).toContain('<span class="attention">two docflows at the gateway (DUPLICATE_DOCFLOW)&nbsp;1</span>');
  });

  it('says how old the registry states are, standing out when no follower reads the news feed', () => {
    const fresh = renderBatchesPage([status({})], {
      ...OPTIONS,
      statesAge: { asOf: '2026-11-24T07:00:00.000Z', ageMs: 2_000, stale: false, follower: true },
    });
    expect(fresh).toContain('<p class="muted" id="states-age">states as of 2026-11-24T07:00:00.000Z, 2000 ms ago.</p>');
    const stale = renderBatchesPage([status({})], {
      ...OPTIONS,
      statesAge: { asOf: '2026-11-24T01:41:00.000Z', ageMs: 5 * 3_600_000, stale: true, follower: false },
    });
    expect(stale).toMatch(/<p class="attention" id="states-age">states as of 2026-11-24T01:41:00.000Z, [^<]*ago: no follower seems to run/);
    expect(stale).toContain('realty-batch track');
    const never = renderBatchesPage([], { ...OPTIONS, statesAge: { stale: true, follower: false } });
    expect(never).toContain('the news feed was never read');
  });
});
