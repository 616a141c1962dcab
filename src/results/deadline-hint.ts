/**
 * What a row still unfinished at `--deadline` says in the results and attention files: its
 * job stays in the queue (BullMQ runs it at its next try, on any worker), so the row is
 * neither lost nor sent twice, and what to run to finish it.
 */
import type { Lang } from '../config.js';

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
