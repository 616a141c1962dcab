/** How a command's error reaches a person: one sentence on stderr and the exit code of its kind. */
import { logLevelOf } from '../config.js';
import { RealtyBatchError } from '../errors.js';
import { isRedisOutage } from '../redis/connection.js';

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
