import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCli, runCliOnTerminal } from '../../helpers/cli.js';
import { harness, type Harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';

/** A JSON log line at info (pino's 30) anywhere in a text. */
const INFO_LINE = /\{"level":30,/;

// One sandbox (its own defaults) and folder for the file, a prefix for each run.
const it = harness({ per: 'file', each: ['prefix'], label: 'tty', sandbox: {}, engine: 'none' });

describe('log lines at a terminal: a file below warn, stderr as before elsewhere', () => {
  /** A run of the samples with its own prefix, state home and output files. */
  function setUp(label: string, { sandbox, dir, prefix }: Pick<Harness, 'sandbox' | 'dir' | 'prefix'>) {
    const state = join(dir, `${label}-state`);
    const env = {
      REDIS_URL,
      REALTY_API_URL: sandbox.url,
      REALTY_SESSION_ID: 'demo-session',
      REALTY_PREFIX: prefix,
      XDG_STATE_HOME: state,
      LOG_LEVEL: undefined as string | undefined,
    };
    const args = [
      'run',
      'samples/deals.csv',
      '--profile',
      'samples/bank-profile.json',
      '--out',
      join(dir, `${label}.results.csv`),
      '--rejects',
      join(dir, `${label}.rejects.csv`),
      '--attempts',
      '2',
      '--backoff-ms',
      '20',
    ];
    const logFiles = () => {
      const logs = join(state, 'realty-batch', 'logs');
      return existsSync(logs) ? readdirSync(logs).map((name) => join(logs, name)) : [];
    };
    return { env, args, logFiles };
  }

  it('on a terminal without LOG_LEVEL, names a log file and keeps every info line off the screen and in the file', async ({
    sandbox,
    dir,
    prefix,
  }) => {
    const { env, args, logFiles } = setUp('plain', { sandbox, dir, prefix });
    const { code, output } = await runCliOnTerminal(args, env);
    expect(code).toBe(3);
    expect(output).not.toMatch(INFO_LINE);
    const [file, ...others] = logFiles();
    expect(others).toEqual([]);
    expect(file).toMatch(/[/]realty-batch[/]logs[/]run-\d{8}T\d{6}Z-\d+\.log$/);
    // Named before the bars and the summary, on the terminal.
    expect(output).toContain(`logs: ${file}`);
    expect(output.indexOf(`logs: ${file}`)).toBeLessThan(output.indexOf('results: '));
    const text = readFileSync(file!, 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['run started', 'batch loaded', 'run finished']));
    // The same redaction as on stderr: no session id, no owner's name or SNILS.
    expect(text).not.toContain('demo-session');
    expect(text).not.toContain('Кузнецов');
    expect(text).not.toContain('462-398-405 08');
    // The summary is whole on the terminal.
    expect(output).toMatch(/results: .*\(24 rows\)/);
  });

  it('on a terminal with LOG_LEVEL=info, writes the lines to stderr as before and no file', async ({ sandbox, dir, prefix }) => {
    const { env, args, logFiles } = setUp('level', { sandbox, dir, prefix });
    const { code, output } = await runCliOnTerminal(args, { ...env, LOG_LEVEL: 'info' });
    expect(code).toBe(3);
    expect(output).toMatch(INFO_LINE);
    expect(output).not.toContain('logs: ');
    expect(logFiles()).toEqual([]);
  });

  it('off a terminal, writes the lines to stderr as before and no file', async ({ sandbox, dir, prefix }) => {
    const { env, args, logFiles } = setUp('pipe', { sandbox, dir, prefix });
    const { LOG_LEVEL: _unset, ...rest } = env;
    const result = await runCli(args, rest);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(INFO_LINE);
    expect(result.stderr).not.toContain('logs: ');
    expect(logFiles()).toEqual([]);
  });
});
