/**
 * A batch is green "registered" on the dashboard only when every row's deal reached the registry
 * and was registered: rows that never did (not_found, invalid, ...) are said beside it (issue 40, point 9).
 */
import { describe, expect, it } from 'vitest';
import type { BatchStatus } from '../../src/batch/batch-status.js';
import { renderBatchesPage } from '../../src/dashboard/batches-page.js';
import { describeRegistered } from '../../src/outcomes/state-tally.js';
import { batchStatus, PAGE_OPTIONS } from '../helpers/batch-status.js';

const OPTIONS = PAGE_OPTIONS;
const finished = (fields: Partial<BatchStatus>): BatchStatus => batchStatus({ total: 41, done: true, registered: true, ...fields });

describe('a registered batch', () => {
  it('says "registered 28 of 41; 13 never filed", not green, when 13 of its 41 deals never reached the registry', () => {
    const html = renderBatchesPage(
      [finished({ outcomes: { queued: 20, suspended: 8, not_found: 9, invalid: 4 }, states: { completed: 28 } })],
      OPTIONS,
    );
    expect(html).toContain('<span class="attention">registered 28 of 41; 13 never filed</span>');
    expect(html).not.toContain('<span class="done">registered');
  });

  it('is green "registered" when every deal was filed and completed, already submitted ones included', () => {
    const html = renderBatchesPage([finished({ outcomes: { queued: 40, already_submitted: 1 }, states: { completed: 41 } })], OPTIONS);
    expect(html).toContain('<span class="done">registered</span>');
  });

  it('names the docflows the registry refused beside those never filed', () => {
    expect(describeRegistered({ total: 41, filed: 30, states: { completed: 28, error: 2 } })).toEqual({
      text: 'registered 28 of 41; 11 never filed; 2 refused by the registry',
      whole: false,
    });
    expect(describeRegistered({ total: 5, filed: 5, states: { completed: 5 } })).toEqual({ text: 'registered', whole: true });
  });
});
