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
      serializers: { err: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ fd: 2, sync: false }),
  );
}
