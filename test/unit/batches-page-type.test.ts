/** The batches page names a batch's docflow type when its rows are not registrations (lifts, extracts). */
import { describe, expect, it } from 'vitest';
import { renderBatchesPage } from '../../src/dashboard/batches-page.js';
import { batchStatus, PAGE_OPTIONS } from '../helpers/batch-status.js';

describe("the batches page and a batch's docflow type", () => {
  it('says "mortgage lifts" under a batch of lifts, and nothing more under a batch of registrations', () => {
    const html = renderBatchesPage(
      [batchStatus({ batch: 'lifts-1124', type: 'cessation_encumbrance_request' }), batchStatus({ batch: 'night-1124' })],
      PAGE_OPTIONS,
    );
    expect(html).toContain('<code>lifts-1124</code> <span class="muted">mortgage lifts</span>');
    expect(html).toContain('<code>night-1124</code><div class="muted">');
  });
});
