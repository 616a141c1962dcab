/**
 * The words of the progress bar and of the run's summary: rows per second over the time
 * the batch has been running, the time left, the rows waiting for a retry. Pure, so a test
 * reads what a terminal would show; never NaN, Infinity or cli-progress's `NF`.
 */

/** Rows per second, one decimal: `rows` finished in `ms` of running; 0 before a row or a moment has passed. */
export function rowsPerSecond(rows: number, ms: number): number {
  if (!(rows > 0) || !(ms > 0) || !Number.isFinite(rows) || !Number.isFinite(ms)) return 0;
  return Math.round((rows / (ms / 1000)) * 10) / 10;
}

/** `12.3 rows/s`; below 0.1 a row a second, `0.1 rows/s` would mislead: `< 0.1 rows/s`. */
export function formatRate(rows: number, ms: number): string {
  const rate = rowsPerSecond(rows, ms);
  if (rate === 0 && rows > 0 && ms > 0) return '< 0.1 rows/s';
  return `${rate} rows/s`;
}

/** A span of time as a person reads it: `45s`, `4m 05s`, `2h 03m`; `—` when there is none to give. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(s / 3600);
  if (h >= 100) return `${Math.floor(h / 24)}d`;
  return `${h}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Time left at the pace so far: `—` before a row finished in this run, or when every
 * unfinished row waits for a retry (the pace says nothing of when they come back: the
 * waiting part of the bar says when the next try is).
 */
export function formatEta(remaining: number, rows: number, ms: number, waiting = 0): string {
  if (remaining <= 0) return '0s';
  if (waiting >= remaining) return '—';
  const rate = rows > 0 && ms > 0 ? rows / ms : 0;
  if (!(rate > 0)) return '—';
  return formatDuration((remaining - waiting) / rate);
}

/** `HH:MM:SS` of a time, on this machine's clock. */
function clock(at: number): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** `1 waiting for a retry, next try 21:48:10 (in 4m 10s)`; empty when none waits. */
export function formatWaiting(waiting: { count: number; nextAt?: number } | undefined, now: number): string {
  if (!waiting || waiting.count <= 0) return '';
  const what = `${waiting.count} waiting for a retry`;
  if (waiting.nextAt === undefined) return what;
  const left = waiting.nextAt - now;
  return `${what}, next try ${clock(waiting.nextAt)} (${left > 500 ? `in ${formatDuration(left)}` : 'due now'})`;
}

export interface RunLine {
  /** Rows finished, of `total`. */
  done: number;
  total: number;
  /** Rows finished since this run began waiting, and how long it has waited (ms): the pace. */
  rowsThisRun: number;
  runningMs: number;
  waiting?: { count: number; nextAt?: number };
  now: number;
}

/** What follows the bar while rows are processed: `29/30 rows | 0.5 rows/s | ETA — | 1 waiting for a retry, next try ...`. */
export function formatRunLine(line: RunLine): string {
  const parts = [
    `${line.done}/${line.total} rows`,
    formatRate(line.rowsThisRun, line.runningMs),
    `ETA ${formatEta(line.total - line.done, line.rowsThisRun, line.runningMs, line.waiting?.count ?? 0)}`,
  ];
  const waiting = formatWaiting(line.waiting, line.now);
  if (waiting) parts.push(waiting);
  return parts.join(' | ');
}
