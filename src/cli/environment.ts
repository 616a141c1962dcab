/** What a command runs with: the environment read once, its logger (a file on a terminal), its keys, and the context the program gives it. */
import { join } from 'node:path';
import { loadConfig, type Config } from '../config.js';
import type { DatabaseTarget } from '../db/location.js';
import { createLogger, type Logger } from '../logger.js';
import { connectRedis, type ConnectOptions, type RedisClient, type RedisTarget } from '../redis/connection.js';
import { createKeys, type Keys } from '../redis/keys.js';
import { writeAbove } from './terminal.js';

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
