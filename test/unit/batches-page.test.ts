import { describe, expect, it } from 'vitest';
import type { BatchStatus } from '../../src/batch/batch-status.js';
import { renderBatchesPage } from '../../src/dashboard/batches-page.js';

const OPTIONS = { boardPath: '/queues', queueName: 'deals', limit: 50 };

function status(fields: Partial<BatchStatus>): BatchStatus {
  return {
    batch: 'night',
    total: 200,
    outcomes: {},
    done: false,
    state: 'loaded',
    file: '/in/night.csv',
    queue: {},
    missing: 0,
    startedAt: '2026-11-24T01:30:00.000Z',
    ...fields,
  };
}

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
});
