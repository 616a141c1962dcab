import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { runCli } from '../../helpers/cli.js';
import { HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';

const SESSION = 'sid-5f1c9e77-secret-value';
const PASSWORD = 'pw-0a7d31-secret-value';
const USER = `robot:${PASSWORD}:acc-secret-test`;
const cell = (row: string[], field: string) => row[HEADER.indexOf(field)] ?? '';
/** Every SNILS (as written and as digits), passport number and surname of the input. */
const PERSONAL = ROWS.flatMap((r) =>
  ['owner', 'owner2'].flatMap((p) => {
    const snils = cell(r, `${p}Snils`);
    return [snils, snils.replace(/\D/g, ''), cell(r, `${p}DocNumber`), cell(r, `${p}Surname`)];
  }),
).filter((v) => v.length >= 4);

// The file's sandbox, folder and prefix; no database of its own: the commands use their default place, as they did.
const it = harness({
  per: 'file',
  label: 'secrets',
  sandbox: { sessions: [SESSION], egronRegions: ['Республика Крым'], users: [USER] },
  engine: 'none',
});

describe('secrets and personal data', () => {
  it('keeps the session id out of every log line, results file, attention file and error, and personal data out of logs and results, at LOG_LEVEL=debug', async ({
    sandbox,
    dir,
    prefix,
  }) => {
    expect(PERSONAL.length).toBeGreaterThan(40);
    const env = { REDIS_URL, REALTY_API_URL: sandbox.url, REALTY_SESSION_ID: SESSION, REALTY_PREFIX: prefix, LOG_LEVEL: 'debug' };
    const out = join(dir, 'results.csv');
    const jsonl = join(dir, 'results.jsonl');
    const attention = join(dir, 'attention.csv');
    const run = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'secret',
        '--out',
        out,
        '--attention',
        attention,
        '--rejects',
        join(dir, 'rejects.csv'),
        '--attempts',
        '2',
        '--backoff-ms',
        '50',
      ],
      env,
    );
    expect(run.code).toBe(3);
    const results = await runCli(['results', 'secret', '--out', jsonl], env);
    // A refused session: its error messages too.
    const refused = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'refused',
        '--out',
        join(dir, 'r2.csv'),
        '--rejects',
        join(dir, 'r2-rejects.csv'),
      ],
      {
        ...env,
        REALTY_SESSION_ID: `${SESSION}-expired`,
      },
    );
    expect(refused.code).toBe(1);

    const logs = [run.stderr, run.stdout, results.stderr, results.stdout, refused.stderr, refused.stdout].join('\n');
    expect(logs.split('\n').filter((l) => l.startsWith('{')).length).toBeGreaterThan(20);
    const files = [readFileSync(out, 'utf8'), readFileSync(jsonl, 'utf8'), readFileSync(join(dir, 'r2.csv'), 'utf8')].join('\n');
    for (const text of [logs, files, readFileSync(attention, 'utf8'), attention]) expect(text).not.toContain(SESSION);
    const leaked = PERSONAL.filter((v) => logs.includes(v) || files.includes(v));
    expect(leaked).toEqual([]);
  });

  it('keeps the password of REALTY_LOGIN out of every log line, results file and error, even when the login is refused or incomplete', async ({
    sandbox,
    dir,
    prefix,
  }) => {
    const env = {
      REDIS_URL,
      REALTY_API_URL: sandbox.url,
      REALTY_LOGIN: 'robot',
      REALTY_PASSWORD: PASSWORD,
      REALTY_ACCOUNT_ID: 'acc-secret-test',
      REALTY_PREFIX: prefix,
      LOG_LEVEL: 'debug',
    };
    const out = join(dir, 'login.csv');
    const args = (batch: string, file: string) => [
      'run',
      'samples/deals.csv',
      '--profile',
      'samples/bank-profile.json',
      '--batch',
      batch,
      '--out',
      file,
      '--rejects',
      join(dir, `${batch}-rejects.csv`),
      '--attempts',
      '2',
      '--backoff-ms',
      '50',
    ];
    const run = await runCli(args('login', out), env);
    expect(run.code).toBe(3);
    // Another account is another deployment: a ledger of its own (the first run's database is bound to acc-secret-test).
    const refused = await runCli(args('login-refused', join(dir, 'refused.csv')), {
      ...env,
      REALTY_ACCOUNT_ID: 'another-account',
      DATABASE_URL: `sqlite:${join(dir, 'another-account.db')}`,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('REALTY_LOGIN');
    const partial = await runCli(args('login-partial', join(dir, 'partial.csv')), { ...env, REALTY_LOGIN: '' });
    expect(partial.code).toBe(1);
    const texts = [run.stderr, run.stdout, refused.stderr, refused.stdout, partial.stderr, partial.stdout, readFileSync(out, 'utf8')];
    expect(run.stderr.split('\n').filter((l) => l.startsWith('{')).length).toBeGreaterThan(10);
    for (const text of texts) expect(text).not.toContain(PASSWORD);
    expect(sandbox.stats().logins).toBeGreaterThanOrEqual(1);
  });

  it('redacts headers and bodies in pino, should they ever be logged', () => {
    const stream = new PassThrough();
    let line = '';
    stream.on('data', (d: Buffer) => (line += d.toString()));
    const logger = createLogger({ level: 'debug', destination: stream });
    logger.debug(
      {
        req: { headers: { authorization: `auth.sid ${SESSION}` } },
        body: { snils: '112-233-445 95' },
        deal: { owners: [] },
        sessionId: SESSION,
        credentials: { login: 'robot', password: PASSWORD },
        password: PASSWORD,
      },
      'a careless line',
    );
    logger.flush();
    expect(line).not.toContain(SESSION);
    expect(line).not.toContain(PASSWORD);
    expect(line).not.toContain('112-233-445 95');
    expect(JSON.parse(line)).toMatchObject({
      req: { headers: { authorization: '[redacted]' } },
      body: '[redacted]',
      sessionId: '[redacted]',
    });
  });
});
