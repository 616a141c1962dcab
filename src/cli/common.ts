/** What every command shares: option parsers, the environment, errors on stderr, signals. */
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { LANGS, loadConfig, logLevelOf, type Config, type Lang } from '../config.js';
import type { DatabaseTarget } from '../db/location.js';
import { RealtyBatchError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { connectRedis, isRedisOutage, type ConnectOptions, type RedisClient, type RedisTarget } from '../redis/connection.js';
import { createKeys, type Keys } from '../redis/keys.js';
import { writeAbove } from './terminal.js';

export function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a whole number of at least 1.`);
    return n;
  };
}

export function nonNegativeInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a whole number of at least 0.`);
    return n;
  };
}

export function share(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0 || n > 1)
      throw new InvalidArgumentError(`${name} must be a share above 0 and at most 1 (0.5 = half).`);
    return n;
  };
}

/** `--lang ru|en`: the language of the files for a person (the attention and rejects files, payments, results for Excel). */
export function langFlag(value: string): Lang {
  const lang = value.trim().toLowerCase();
  if ((LANGS as readonly string[]).includes(lang)) return lang as Lang;
  throw new InvalidArgumentError(`--lang must be one of ${LANGS.join(', ')}.`);
}

export const LANG_HELP =
  'the language of the files for a person, ru or en (default: from the locale, LC_ALL, LC_MESSAGES or LANG): ru gives the attention and rejects files, payments, and results written --excel or as .xlsx Russian headers, outcome and state names, hints and error descriptions; the plain results CSV and JSONL keep English codes';

/** What a command runs with: the configuration, the logger, the keys, and how it reaches Redis. */
export interface Env {
  config: Config;
  logger: Logger;
  keys: Keys;
  /** connectRedis unless a test gives another (src/cli/with-redis.ts uses it). */
  connect: (target: RedisTarget, options: ConnectOptions) => Promise<RedisClient>;
  /** The database a test gives in place of config.database (src/cli/with-database.ts uses it). */
  database?: DatabaseTarget;
}

/**
 * Reads the environment (and `.env`): a ConfigError when it is not valid. `command` names
 * the log file a terminal gets (commandLogger).
 */
export function environment(command = 'realty-batch'): Env {
  const config = loadConfig();
  return { config, logger: commandLogger(config, command), keys: createKeys(config.prefix), connect: connectRedis };
}

/**
 * Off a terminal, or with LOG_LEVEL given, every line goes to stderr as JSON. On a
 * terminal without LOG_LEVEL, a line a row writes would run through the progress bar and
 * the summary: the lines go to a file under config.logDir, named on stderr when the first
 * one opens it, and only `warn` and above reach the terminal, written above the bar.
 */
export function commandLogger(config: Config, command: string, stderr: NodeJS.WriteStream = process.stderr): Logger {
  if (!stderr.isTTY || config.logLevelGiven) return createLogger({ level: config.logLevel });
  const path = join(config.logDir, logFileName(command, new Date(), process.pid));
  return createLogger({
    level: config.logLevel,
    destination: { write: (line: string) => writeAbove(line, stderr) },
    file: {
      path,
      onOpen: (opened) => writeAbove(`logs: ${opened}\n`, stderr),
      onError: (failed, err) =>
        writeAbove(`logs: ${failed} cannot be written (${err.message}); the log lines stay on this terminal\n`, stderr),
    },
  });
}

/** `run-20261124T210613Z-4242.log`: sorts by time; the pid keeps two commands started in the same second apart. */
export function logFileName(command: string, at: Date, pid: number): string {
  const stamp = at
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `${command.replace(/[^A-Za-z0-9_-]+/g, '-')}-${stamp}-${pid}.log`;
}

/** What the program gives each command: its environment, read when the action runs, and where its exit code goes. */
export interface CliContext {
  environment(): Env;
  /** The process's exit code once the command has returned (0 unless set). */
  setExitCode(code: number): void;
}

/** One clear sentence on stderr, never a bare stack trace (LOG_LEVEL=debug adds it). */
export function reportError(err: unknown): number {
  if (err instanceof RealtyBatchError) {
    console.error(`realty-batch: ${err.message}`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (isRedisOutage(err)) {
    // What was written stays written: every command resumes where it stopped.
    console.error(
      `realty-batch: Redis stopped answering (${message.replace(/\.$/, '')}); nothing is lost: run the same command again once Redis is back.`,
    );
    return 1;
  }
  console.error(`realty-batch: unexpected error: ${message}`);
  if (logLevelOf() === 'debug' && err instanceof Error && err.stack) console.error(err.stack);
  return 1;
}

/**
 * SIGINT and SIGTERM: the first asks the command to stop cleanly (the signal
 * aborts), a second exits at once.
 */
export function onShutdownSignals(stopping = 'finishing active jobs'): AbortController {
  const controller = new AbortController();
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  for (const signal of signals) {
    process.on(signal, () => {
      if (controller.signal.aborted) {
        console.error(`realty-batch: ${signal} again, exiting now.`);
        process.exit(130);
      }
      console.error(`realty-batch: ${signal} received, ${stopping} (send it again to exit at once).`);
      controller.abort();
    });
  }
  return controller;
}

/** Resolves once the signal has aborted, at once when it already has. */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
