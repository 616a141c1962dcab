/** What the command line takes from the configuration: LOG_LEVEL and the dashboard's variables. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reportError } from '../../src/cli/report-error.js';
import { loadConfig, logLevelOf } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

describe("the configuration's LOG_LEVEL and DASHBOARD_* variables", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('logs at info and has no dashboard credentials unless told', () => {
    const config = loadConfig({});
    expect(config.logLevel).toBe('info');
    expect(config.dashboard).toEqual({ user: undefined, password: undefined, publicUrl: undefined });
  });

  it('carries the dashboard variables as given, in a frozen object: the dashboard checks them itself', () => {
    const config = loadConfig({
      DASHBOARD_USER: 'ops',
      DASHBOARD_PASSWORD: 's3cret',
      DASHBOARD_PUBLIC_URL: 'not even a url',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({ logLevel: 'warn', dashboard: { user: 'ops', password: 's3cret', publicUrl: 'not even a url' } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.dashboard)).toBe(true);
  });

  it('refuses a LOG_LEVEL that is not a level, naming it', () => {
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/^The environment is not valid: LOG_LEVEL /);
  });

  it('reads LOG_LEVEL alone for last words, whatever else is wrong', () => {
    expect(logLevelOf({ LOG_LEVEL: 'debug', REALTY_LEDGER_DAYS: 'forever' })).toBe('debug');
    expect(logLevelOf({})).toBe('info');
    expect(logLevelOf({ LOG_LEVEL: 'loud' })).toBeUndefined();
  });

  it("adds an unexpected error's stack to its sentence only with LOG_LEVEL=debug", () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void lines.push(String(line)));
    const err = new Error('boom');
    vi.stubEnv('LOG_LEVEL', 'info');
    expect(reportError(err)).toBe(1);
    expect(lines).toEqual(['realty-batch: unexpected error: boom']);
    vi.stubEnv('LOG_LEVEL', 'debug');
    lines.length = 0;
    expect(reportError(err)).toBe(1);
    expect(lines).toEqual(['realty-batch: unexpected error: boom', err.stack]);
  });
});
