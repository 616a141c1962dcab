/**
 * pino, JSON to stderr (stdout belongs to the command's own output), with
 * redaction of everything that may carry the session id or personal data.
 * On a terminal the command line may send the lines to a file instead, keeping
 * `warn` and above on stderr (src/cli/environment.ts): the same lines, the same redaction.
 */
import { mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that must never reach a line. Code logs deal ids, rows and counts, never
 * a deal or a request body; these paths are the net under that rule.
 */
export const REDACT_PATHS = [
  'sessionId',
  '*.sessionId',
  'password',
  '*.password',
  'credentials',
  '*.credentials',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.headers.authorization',
  'deal',
  '*.deal',
  'data.deal',
  'data.c',
  'body',
  '*.body',
  'options',
  '*.options',
  'profile',
  '*.profile',
  'person',
  '*.person',
  'representative',
  '*.representative',
  'owners',
  '*.owners',
  'snils',
  '*.snils',
  'identityDocument',
  '*.identityDocument',
];

/**
 * An error as a line shows it: its own message (which whoever made it has masked), its
 * name and codes. pino's default serializer appends every `cause`'s message and stack, and
 * copies every field (an ApiHttpError's gateway body): the gateway's unmasked text that a
 * masked error wraps for the retry delay would reach the line.
 */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const out: Record<string, unknown> = { type: err.name, message: err.message };
  for (const key of ['code', 'status', 'endpoint', 'reason'] as const) {
    const value = (err as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string' || typeof value === 'number') out[key] = value;
  }
  if (err.stack) out.stack = err.stack;
  return out;
}

/** What a line is written to: a stream, or anything with a `write`. */
export interface LineSink {
  write(line: string): unknown;
}

export interface LogFileOptions {
  /** Every line at the logger's level and above goes here; the destination keeps `warn` and above. */
  path: string;
  /** Called once, when the first line opens the file (a command that logs nothing leaves no file). */
  onOpen?: (path: string) => void;
  /** Called once when the file cannot be made: its lines then go to the destination, as without a file. */
  onError?: (path: string, err: Error) => void;
}

export interface LoggerOptions {
  level?: string;
  /** Where lines go; default stderr. Tests pass a stream to read them back. */
  destination?: LineSink;
  /** A file that takes every line; then only `warn` and above reach the destination. */
  file?: LogFileOptions;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const destination = options.destination ?? pino.destination({ fd: 2, sync: false });
  const stream = options.file
    ? pino.multistream([
        { level: 'warn', stream: destination },
        { level, stream: lazyFile(options.file, destination) },
      ])
    : destination;
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    stream,
  );
}

/**
 * The log file, opened at its first line. Opened here, synchronously and readable by its
 * owner alone (the lines carry deal ids), so pino's asynchronous writer never waits on an
 * open and flushes what it holds when the process exits.
 */
function lazyFile(options: LogFileOptions, destination: LineSink): LineSink {
  let file: LineSink | undefined;
  return {
    write(line: string) {
      if (!file) {
        try {
          mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
          file = pino.destination({ fd: openSync(options.path, 'a', 0o600), sync: false });
          options.onOpen?.(options.path);
        } catch (err) {
          // A log file that cannot be made must not stop the command: its lines go where they went before.
          file = belowWarn(destination);
          options.onError?.(options.path, err as Error);
        }
      }
      return file.write(line);
    },
  };
}

/** The lines below `warn` (the destination has the others already). */
function belowWarn(destination: LineSink): LineSink {
  return {
    write(line: string) {
      const level = Number(/^\{"level":(\d+)/.exec(line)?.[1] ?? 0);
      return level < 40 ? destination.write(line) : true;
    },
  };
}
