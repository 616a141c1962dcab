import { describe, it, expect } from 'vitest';
import { DAY, langOfLocale, loadConfig, requireGateway } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

describe('the configuration', () => {
  it('keeps the ledger 1,830 days (five years) and batches 30 unless told otherwise', () => {
    expect(loadConfig({})).toMatchObject({ retentionMs: 30 * DAY, ledgerMs: 1830 * DAY });
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

  it('logs in with REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID, all three or none, and never with a session id as well', () => {
    const login = { REALTY_API_URL: 'https://gw', REALTY_LOGIN: 'robot', REALTY_PASSWORD: 'Pa55-secret', REALTY_ACCOUNT_ID: 'acc' };
    const config = loadConfig(login);
    expect(config.credentials).toEqual({ login: 'robot', password: 'Pa55-secret', accountId: 'acc' });
    expect(requireGateway(config)).toEqual({ apiUrl: 'https://gw', credentials: config.credentials });
    expect(requireGateway(loadConfig({ REALTY_API_URL: 'https://gw', REALTY_SESSION_ID: 's' }))).toEqual({
      apiUrl: 'https://gw',
      sessionId: 's',
    });
    const { REALTY_PASSWORD: _p, ...noPassword } = login;
    expect(() => loadConfig(noPassword)).toThrow(ConfigError);
    expect(() => loadConfig(noPassword)).toThrow(/^REALTY_PASSWORD is not set: REALTY_LOGIN and REALTY_ACCOUNT_ID are set/);
    expect(() => loadConfig({ REALTY_PASSWORD: 'Pa55-secret' })).toThrow(/^REALTY_LOGIN and REALTY_ACCOUNT_ID are not set/);
    expect(() => loadConfig({ ...login, REALTY_SESSION_ID: 's' })).toThrow(/REALTY_SESSION_ID and REALTY_LOGIN are both set/);
    for (const env of [noPassword, { REALTY_PASSWORD: 'Pa55-secret' }, { ...login, REALTY_SESSION_ID: 's' }]) {
      expect(() => loadConfig(env)).not.toThrow(/Pa55-secret/);
    }
    expect(() => requireGateway(loadConfig({ REALTY_API_URL: 'https://gw' }))).toThrow(/REALTY_SESSION_ID is not set.*REALTY_LOGIN/);
  });
});
