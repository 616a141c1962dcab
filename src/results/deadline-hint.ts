/**
 * What a row still unfinished at `--deadline` says in the results and attention files: its
 * job stays in the queue (BullMQ runs it at its next try, on any worker), so the row is
 * neither lost nor sent twice, and what to run to finish it.
 */
import type { Lang } from '../config.js';
import { findWaitingRows, type WaitingRows } from '../batch/waiting-rows.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

/** Waiting rows whose reasons the files carry; past them a row says only that it waits. */
const WAITING_REASONS = 10_000;

export interface DeadlineNotes {
  waiting: WaitingRows;
  /** The attention file's hint of every pending row. */
  hint: string;
  /** A pending row's errorMessage (results) and errors (attention): why it waits, and its next try. */
  errors: (row: number) => string;
}

/** What the files of a batch stopped at its deadline say of its pending rows. */
export async function deadlineNotes(redis: Redis, keys: Keys, batch: string, lang?: Lang): Promise<DeadlineNotes> {
  const waiting = await findWaitingRows(redis, keys, batch, WAITING_REASONS);
  const byRow = new Map(waiting.rows.map((w) => [w.row, w]));
  return { waiting, hint: deadlineHint(batch, lang), errors: (row) => deadlineMessage(byRow.get(row)) };
}

/** The attention file's hint for such a row, in the clerk's language. */
export function deadlineHint(batch: string, lang: Lang = 'en'): string {
  return lang === 'ru'
    ? `не завершена к сроку --deadline; её задание осталось в очереди: запустите realty-batch work (или run с --batch ${batch}), затем realty-batch results ${batch}; не загружайте строку заново`
    : `not finished by --deadline; its job stays in the queue: start realty-batch work (or run again with --batch ${batch}), then realty-batch results ${batch}; do not load the row again`;
}

/** The results file's errorMessage for such a row: why it waits and when it is tried next, when known. */
export function deadlineMessage(waiting: { reason: string; nextTryAt: string } | undefined): string {
  const why = waiting ? `waiting: ${waiting.reason}; next try ${waiting.nextTryAt}` : 'not finished';
  return `${why}; the run stopped at its --deadline and the row's job stays in the queue`;
}
