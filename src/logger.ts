/**
 * pino, JSON to stderr (stdout belongs to the command's own output), with
 * redaction of everything that may carry the session id or personal data.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that must never reach a line. Code logs deal ids, rows and counts, never
 * a deal or a request body; these paths are the net under that rule.
 */
export const REDACT_PATHS = [
  'sessionId',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.headers.authorization',
  'deal',
  '*.deal',
  'data.deal',
  'body',
  '*.body',
  'options',
  '*.options',
  'profile',
  '*.profile',
  'person',
  '*.person',
];

export interface LoggerOptions {
  level?: string;
  /** Where lines go; default stderr. Tests pass a stream to read them back. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ fd: 2, sync: false }),
  );
}
