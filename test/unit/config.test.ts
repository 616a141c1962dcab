import { describe, it, expect } from 'vitest';
import { DAY, loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

describe('the configuration', () => {
  it('keeps the ledger 400 days and batches 30 unless told otherwise', () => {
    expect(loadConfig({})).toMatchObject({ retentionMs: 30 * DAY, ledgerMs: 400 * DAY });
    expect(loadConfig({ REALTY_LEDGER_DAYS: '730', REALTY_RETENTION_DAYS: '60' })).toMatchObject({
      retentionMs: 60 * DAY,
      ledgerMs: 730 * DAY,
    });
  });

  it('refuses a ledger that would not outlive the batches, in one sentence', () => {
    expect(() => loadConfig({ REALTY_LEDGER_DAYS: '10', REALTY_RETENTION_DAYS: '30' })).toThrow(ConfigError);
    expect(() => loadConfig({ REALTY_LEDGER_DAYS: '10', REALTY_RETENTION_DAYS: '30' })).toThrow(
      /REALTY_LEDGER_DAYS \(10\) is shorter than REALTY_RETENTION_DAYS \(30\)/,
    );
    expect(() => loadConfig({ REALTY_LEDGER_DAYS: 'forever' })).toThrow(/REALTY_LEDGER_DAYS/);
  });
});
