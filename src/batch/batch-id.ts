/** A batch's id when `--batch` does not give one. */

import { basename, extname } from 'node:path';

/**
 * `<file stem>-<first 12 hex of its fingerprint>`: the same file run again (after
 * a crash, or by a second cron) resumes its own batch instead of starting another.
 */
export function defaultBatchId(file: string, fingerprint: string): string {
  const stem =
    basename(file, extname(file))
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 60) || 'batch';
  return `${stem}-${fingerprint.slice(0, 12)}`;
}
