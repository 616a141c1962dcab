/** What a tick says of each file: the summary written beside its results, and its one log line. */
import { SUBMITTED_OUTCOMES, type Outcome } from '../domain/outcome.js';

export interface FileSummary {
  file: string;
  status: 'done' | 'duplicate' | 'failed' | 'stopped';
  /** Absent only when the file could not be read at all. */
  sha256?: string;
  batch?: string;
  rows?: number;
  outcomes?: Partial<Record<Outcome, number>>;
  /**
   * done: every row has its outcome. registered: besides, every docflow reached completed
   * or error (rarely at the end of the night: the morning report, --report-cron, follows it).
   */
  registered?: boolean;
  /** Submitted rows per docflow state, when the file was done. */
  states?: Record<string, number>;
  /** As `run` would exit: 0 all submitted, 3 some rows need attention, 1 could not finish. */
  exitStatus: 0 | 1 | 3;
  startedAt: string;
  finishedAt: string;
  seconds: number;
  results?: string;
  attention?: string;
  error?: string;
  /** duplicate: where the same content ran before. */
  earlier?: { file: string; batch: string; at: string };
}

export interface TickResult {
  /** The previous tick of this schedule still held the lock. */
  skipped?: 'previous tick still running';
  /** Files not taken yet: still changing, or waiting for their ready marker. */
  waiting: string[];
  files: FileSummary[];
}

/** The one human-readable line of a run. */
export function describe(s: FileSummary): string {
  if (s.status === 'duplicate')
    return `${s.file}: the same content ran before as ${s.earlier?.file} (batch ${s.earlier?.batch}); not run again`;
  if (s.status === 'failed') return `${s.file}: not run: ${s.error}`;
  // A header and no record: a quiet night, done (docs/operations.md).
  if (s.status === 'done' && s.rows === 0) return `${s.file} → batch ${s.batch}: no deals (a header and no record), exit ${s.exitStatus}`;
  const counts = Object.entries(s.outcomes ?? {})
    .map(([o, n]) => `${o} ${n}`)
    .join(', ');
  const submitted = Object.entries(s.outcomes ?? {})
    .filter(([o]) => SUBMITTED_OUTCOMES.has(o as Outcome))
    .reduce((sum, [, n]) => sum + n, 0);
  const rows = s.rows === undefined ? '' : `: ${s.rows} rows, ${submitted} submitted (${counts}), exit ${s.exitStatus}, ${s.seconds} s`;
  return `${s.file} → batch ${s.batch}${rows}${s.status === 'stopped' ? `; ${s.error}` : ''}`;
}
