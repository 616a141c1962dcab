/**
 * The command line parsed in this process (no child, no Redis, no network): what
 * commander accepts and refuses, and the exit code every way of ending gives. The
 * environment is injected; its Redis refuses every connection, so a command that gets
 * that far shows it by calling `connect`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Env } from '../../src/cli/environment.js';
import { Command } from 'commander';
import { registerSandboxCommand, sandboxOptions, type SandboxFlags } from '../../src/cli/commands/sandbox.js';
import { buildProgram, commandNamed, runProgram } from '../../src/cli/program.js';
import { loadConfig } from '../../src/config.js';
import { RedisUnavailableError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { createKeys } from '../../src/redis/keys.js';

const PROFILE = 'samples/bank-profile.json';
const NO_REDIS = 'Redis is not reachable (this test has none).';

/** An environment from these variables alone (never process.env), whose Redis refuses every connection. */
function fakeEnvironment(vars: Record<string, string> = {}) {
  const connect = vi.fn<Env['connect']>(async () => {
    throw new RedisUnavailableError(NO_REDIS);
  });
  const environment = vi.fn((): Env => {
    const config = loadConfig({ REALTY_PREFIX: 'cli-program-test', ...vars });
    return { config, logger: createLogger({ level: 'silent' }), keys: createKeys(config.prefix), connect };
  });
  return { environment, connect };
}

interface Parsed {
  code: number;
  stdout: string;
  stderr: string;
}

/** `realty-batch ...args` in this process: its exit code and what it printed, commander's text and the commands' own. */
async function cli(args: string[], env = fakeEnvironment()): Promise<Parsed> {
  let stdout = '';
  let stderr = '';
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
    stdout += `${parts.join(' ')}\n`;
  });
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => {
    stderr += `${parts.join(' ')}\n`;
  });
  try {
    const code = await runProgram(['node', 'realty-batch', ...args], {
      environment: env.environment,
      output: { writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) },
    });
    return { code, stdout, stderr };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe('the command line, parsed in-process', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-batch-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds the command a command line names past the program’s own options, and none when it asks the program itself', () => {
    expect(commandNamed(['status', 'night', '--json'])).toBe('status');
    expect(commandNamed(['--env-file', 'deploy.env', 'load', 'deals.csv'])).toBe('load');
    expect(commandNamed(['--env-file=deploy.env', 'ledger', 'import', 'a.csv'])).toBe('ledger');
    expect(commandNamed(['--help'])).toBeUndefined();
    expect(commandNamed(['-V'])).toBeUndefined();
    expect(commandNamed([])).toBeUndefined();
  });

  it('builds a named command alone (with the others of its module), and the whole program for a name no command has', async () => {
    const context = { environment: () => fakeEnvironment().environment(), setExitCode: () => undefined };
    const names = async (only?: string) => (await buildProgram(context, undefined, only)).commands.map((c) => c.name());
    expect(await names('status')).toEqual(['status']);
    expect(await names('suspend')).toEqual(['cancel', 'suspend', 'resume']);
    const ledger = await buildProgram(context, undefined, 'ledger');
    expect(ledger.commands.map((c) => c.name())).toEqual(['ledger']);
    expect(ledger.commands[0]!.commands.map((c) => c.name())).toContain('import');
    // A mistyped name: every command, so that commander can say which one was meant.
    expect(await names('stauts')).toHaveLength((await names()).length);
    expect(await names()).toHaveLength(20);
  });

  it('has every command, in the order --help lists them', async () => {
    const program = await buildProgram({ environment: () => fakeEnvironment().environment(), setExitCode: () => undefined });
    expect(program.commands.map((c) => c.name())).toEqual([
      'run',
      'load',
      'work',
      'results',
      'payments',
      'to-sign',
      'sign',
      'documents',
      'answer',
      'cancel',
      'suspend',
      'resume',
      'retry',
      'status',
      'track',
      'ledger',
      'schedule',
      'dashboard',
      'db',
      'sandbox',
    ]);
    expect(program.commands.find((c) => c.name() === 'schedule')!.commands.map((c) => c.name())).toEqual(['add', 'list', 'remove']);
    expect(program.commands.find((c) => c.name() === 'db')!.commands.map((c) => c.name())).toEqual([
      'status',
      'migrate',
      'backup',
      'prune',
    ]);
  });

  it('prints the usage on --help and exits 0, without reading the environment', async () => {
    const env = fakeEnvironment();
    const help = await cli(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: realty-batch \[options\] \[command\]/);
    for (const command of [
      'run',
      'load',
      'work',
      'results',
      'payments',
      'to-sign',
      'sign',
      'documents',
      'answer',
      'cancel',
      'suspend',
      'resume',
      'retry',
      'status',
      'track',
      'ledger',
      'schedule',
      'dashboard',
      'db',
      'sandbox',
    ])
      expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    const run = await cli(['run', '--help'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--concurrency <n>');
    expect(run.stdout).toContain('(default: 20)');
    expect(env.environment).not.toHaveBeenCalled();
  });

  it("lists the sandbox's life flags in its --help, passes them to the emulator, and refuses a bad probability with exit 2", async () => {
    const help = await cli(['sandbox', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--lifecycle-ms <n> .*\(default: 2000\)/s);
    expect(help.stdout).toContain('--fault-registry <p>');
    expect(help.stdout).toContain('--payment <p>');
    const sandbox = registerSandboxCommand(new Command());
    sandbox.parseOptions(['--lifecycle-ms', '30', '--payment', '0.5', '--fault-registry', '1', '--seed', '4']);
    expect(sandboxOptions(sandbox.opts<SandboxFlags>())).toMatchObject({ lifecycleMs: 30, payment: 0.5, faultRegistry: 1, seed: 4 });
    const defaults = registerSandboxCommand(new Command());
    defaults.parseOptions([]);
    expect(sandboxOptions(defaults.opts<SandboxFlags>())).toMatchObject({ lifecycleMs: 2000 });
    expect(sandboxOptions(defaults.opts<SandboxFlags>())).not.toHaveProperty('payment');
    expect(sandboxOptions(defaults.opts<SandboxFlags>())).not.toHaveProperty('strictContents');
    const strict = registerSandboxCommand(new Command());
    strict.parseOptions(['--strict-contents']);
    expect(sandboxOptions(strict.opts<SandboxFlags>())).toMatchObject({ strictContents: true });
    for (const flag of ['--payment', '--fault-registry']) {
      const bad = await cli(['sandbox', flag, '2']);
      expect(bad.code, flag).toBe(2);
      expect(bad.stderr).toContain(`${flag} must be a probability between 0 and 1`);
    }
  });

  it('refuses an unknown option with exit 2, naming it, before reading the environment', async () => {
    const env = fakeEnvironment();
    const result = await cli(['status', '--bogus'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("error: unknown option '--bogus'\n(add --help for the usage)\n");
    expect(env.environment).not.toHaveBeenCalled();
  });

  it('refuses an unknown command with exit 2', async () => {
    const result = await cli(['bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: unknown command 'bogus'");
  });

  it('refuses --concurrency 0 with exit 2 and the rule it broke', async () => {
    const env = fakeEnvironment();
    const result = await cli(['run', 'deals.csv', '--profile', PROFILE, '--concurrency', '0'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "error: option '--concurrency <n>' argument '0' is invalid. --concurrency must be a whole number of at least 1.",
    );
    expect(env.environment).not.toHaveBeenCalled();
  });

  it('asks for a missing required option with exit 2', async () => {
    const result = await cli(['run', 'deals.csv']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: required option '--profile <bank.json>' not specified");
  });

  it('ends a command that throws a UsageError with exit 2 and one sentence, before connecting', async () => {
    const env = fakeEnvironment();
    const results = await cli(['results', 'not a batch!', '--out', join(dir, 'r.csv')], env);
    expect(results.code).toBe(2);
    expect(results.stderr).toBe(
      `realty-batch: --batch "not a batch!" is not a valid batch id: use letters, digits, '.', '_' or '-' (at most 80).\n`,
    );
    const ledger = await cli(['ledger', 'D-1', '--profile', PROFILE, '--resolve', 'df-1', '--resolve-none'], env);
    expect(ledger.code).toBe(2);
    expect(ledger.stderr).toBe('realty-batch: Give --resolve <docflowId> or --resolve-none, not both.\n');
    expect(env.connect).not.toHaveBeenCalled();
  });

  it('ends a command with exit 1 when the environment is not valid', async () => {
    const env = fakeEnvironment({ REALTY_LEDGER_DAYS: '10', REALTY_RETENTION_DAYS: '30' });
    const result = await cli(['status'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^realty-batch: REALTY_LEDGER_DAYS \(10\) is shorter than REALTY_RETENTION_DAYS \(30\)/);
  });

  it('ends a command with exit 1 and one sentence when Redis cannot be reached', async () => {
    const env = fakeEnvironment();
    const result = await cli(['status'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`realty-batch: ${NO_REDIS}\n`);
    expect(env.connect).toHaveBeenCalledTimes(1);
    expect(env.connect.mock.calls[0]![1]).toEqual({ failFast: true });
  });

  it("takes the dashboard's credentials and public url from the configuration", async () => {
    const half = await cli(['dashboard', '--port', '0'], fakeEnvironment({ DASHBOARD_USER: 'ops' }));
    expect(half.code).toBe(1);
    expect(half.stderr).toMatch(/^realty-batch: DASHBOARD_USER and DASHBOARD_PASSWORD must both be set: .*\.\n$/);
    const underPath = fakeEnvironment({
      DASHBOARD_USER: 'ops',
      DASHBOARD_PASSWORD: 'x',
      DASHBOARD_PUBLIC_URL: 'https://ops.example.com/realty',
    });
    const refused = await cli(['dashboard', '--port', '0'], underPath);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--public-url names where the page is served from');
    expect(underPath.connect).not.toHaveBeenCalled();
    // The flag wins over the variable.
    const flagWins = await cli(['dashboard', '--port', '0', '--public-url', 'https://ops.example.com'], underPath);
    expect(flagWins.stderr).toBe(`realty-batch: ${NO_REDIS}\n`);
    expect(underPath.connect).toHaveBeenCalledTimes(1);
  });

  describe('schedule', () => {
    it('says `schedule list` on stderr when called the old way, --list, and still lists', async () => {
      const env = fakeEnvironment();
      const result = await cli(['schedule', '--list'], env);
      expect(result.stderr.split('\n')[0]).toBe('realty-batch: schedule --list is deprecated: use realty-batch schedule list.');
      expect(env.connect).toHaveBeenCalledTimes(1);
      expect(result.code).toBe(1);
    });

    it('lists with `schedule list`, without the deprecation line', async () => {
      const env = fakeEnvironment();
      const result = await cli(['schedule', 'list'], env);
      expect(result.stderr).toBe(`realty-batch: ${NO_REDIS}\n`);
      expect(env.connect).toHaveBeenCalledTimes(1);
    });

    it('says `schedule remove` on stderr when called the old way, --remove, and still asks for the name', async () => {
      const env = fakeEnvironment();
      const result = await cli(['schedule', '--remove'], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        'realty-batch: schedule --remove is deprecated: use realty-batch schedule remove <name> (or --inbox <dir>).\nrealty-batch: schedule --remove needs --name or --inbox.\n',
      );
      const named = await cli(['schedule', '--remove', '--name', 'nightly'], env);
      expect(named.stderr.split('\n')[0]).toContain('schedule --remove is deprecated');
      expect(env.connect).toHaveBeenCalledTimes(1);
    });

    it('asks `schedule remove` for a name or --inbox with exit 2', async () => {
      const env = fakeEnvironment();
      const result = await cli(['schedule', 'remove'], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('realty-batch: schedule remove needs a name or --inbox.\n');
      await cli(['schedule', 'remove', '--inbox', join(dir, 'in')], env);
      expect(env.connect).toHaveBeenCalledTimes(1);
    });

    it('requires --inbox, --outbox, --profile and --cron of `schedule add`, exit 2', async () => {
      const env = fakeEnvironment();
      const none = await cli(['schedule', 'add'], env);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain("error: required option '--inbox <dir>' not specified");
      const noCron = await cli(['schedule', 'add', '--inbox', dir, '--outbox', dir, '--profile', PROFILE], env);
      expect(noCron.code).toBe(2);
      expect(noCron.stderr).toContain("error: required option '--cron <expr>' not specified");
      const badSettle = await cli(
        ['schedule', 'add', '--inbox', dir, '--outbox', dir, '--profile', PROFILE, '--cron', '0 3 * * *', '--settle-ms', '-1'],
        env,
      );
      expect(badSettle.code).toBe(2);
      expect(badSettle.stderr).toContain('--settle-ms must be a whole number of at least 0.');
      expect(env.connect).not.toHaveBeenCalled();
    });

    it("checks `schedule add`'s folders and webhook before connecting, exit 2", async () => {
      const env = fakeEnvironment();
      const inbox = await mkdtemp(join(dir, 'in-'));
      const outbox = await mkdtemp(join(dir, 'out-'));
      const add = (...extra: string[]) =>
        cli(['schedule', 'add', '--inbox', inbox, '--outbox', outbox, '--profile', PROFILE, '--cron', '0 3 * * *', ...extra], env);
      const missing = await cli(
        ['schedule', 'add', '--inbox', join(dir, 'missing'), '--outbox', outbox, '--profile', PROFILE, '--cron', '0 3 * * *'],
        env,
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toBe(`realty-batch: --inbox ${join(dir, 'missing')} is not a folder.\n`);
      const webhook = await add('--notify-url', 'ftp://hooks.example.com');
      expect(webhook.code).toBe(2);
      expect(webhook.stderr).toBe('realty-batch: --notify-url ftp://hooks.example.com is not an http(s) url.\n');
      expect(env.connect).not.toHaveBeenCalled();
      // Every check passed: it goes on to register the schedule in Redis.
      const valid = await add('--name', 'nightly');
      expect(valid.stderr).toBe(`realty-batch: ${NO_REDIS}\n`);
      expect(env.connect).toHaveBeenCalledTimes(1);
    });

    it('still adds with the first form, `schedule --inbox ...`, and names the first flag it misses', async () => {
      const env = fakeEnvironment();
      const none = await cli(['schedule'], env);
      expect(none.code).toBe(2);
      expect(none.stderr).toBe('realty-batch: schedule needs --inbox (or --list, or --remove).\n');
      const noCron = await cli(['schedule', '--inbox', dir, '--outbox', dir, '--profile', PROFILE], env);
      expect(noCron.stderr).toBe('realty-batch: schedule needs --cron (or --list, or --remove).\n');
      const missing = await cli(
        ['schedule', '--inbox', join(dir, 'missing'), '--outbox', dir, '--profile', PROFILE, '--cron', '0 3 * * *'],
        env,
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toBe(`realty-batch: --inbox ${join(dir, 'missing')} is not a folder.\n`);
      expect(env.connect).not.toHaveBeenCalled();
    });
  });
});
