import { describe, it, expect } from 'vitest';
import { DAY, langOfLocale, loadConfig } from '../../src/config.js';
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

  it("takes the hints' language from the locale: ru when the first of LC_ALL, LC_MESSAGES, LANG set starts with ru", () => {
    expect(loadConfig({}).lang).toBe('en');
    expect(loadConfig({ LANG: 'ru_RU.UTF-8' }).lang).toBe('ru');
    expect(loadConfig({ LANG: 'en_US.UTF-8', LC_MESSAGES: 'ru_RU.CP1251' }).lang).toBe('ru');
    expect(loadConfig({ LANG: 'ru_RU.UTF-8', LC_ALL: 'C.UTF-8' }).lang).toBe('en');
    expect(langOfLocale({ LANG: 'ru_RU.UTF-8', LC_ALL: '' })).toBe('ru');
    expect(langOfLocale({ LANG: 'C.UTF-8' })).toBe('en');
  });
});
