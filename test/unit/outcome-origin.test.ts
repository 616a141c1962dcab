/**
 * A row's docflow origin (requestId and type, the results file's last two columns): a row whose
 * deal another row made, or that made it before, gets it from the ledger.
 */
import { describe, expect, it } from 'vitest';
import { alreadySubmitted, ownDocflow } from '../../src/domain/outcome.js';

describe("an outcome's requestId and type", () => {
  it('is given to a row whose deal another row made, and to a row that made it before, from the ledger', () => {
    const deal = { docflowId: 'df', outcome: 'queued' as const, batch: 'b', row: 3, at: '2026-01-01T00:00:00.000Z' };
    const origin = { requestId: '7701934587:reg:1:D-1', type: 'encumbrance_request' };
    expect(alreadySubmitted(1, 'D-1', { ...deal, ...origin }, 1)).toMatchObject({ outcome: 'already_submitted', ...origin });
    expect(ownDocflow(1, 'D-1', { ...deal, ...origin }, 'feed', 1)).toMatchObject({ outcome: 'queued', ...origin });
    expect(alreadySubmitted(1, 'D-1', deal, 1)).not.toHaveProperty('requestId');
  });
});
