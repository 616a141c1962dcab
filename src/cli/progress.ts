/**
 * Progress of a long command: on a terminal, a bar with rows, rows/s and ETA, and the
 * rows waiting for a retry; otherwise a JSON log line every 10 s (no bar, no escape codes
 * in a cron mail).
 */
import cliProgress from 'cli-progress';
import type { Logger } from '../logger.js';
import { holdBottomLine } from './terminal.js';
import { formatDuration, formatRate, formatRunLine, formatWaiting, rowsPerSecond } from './progress-format.js';

export interface ProgressUpdate {
  /** Where the bar is, of `total`: bytes of the file while loading, rows while processing. */
  value: number;
  total: number;
  /** Rows done so far. */
  rows: number;
  /** Rows waiting for a retry, and the earliest next try (ms since the epoch). */
  waiting?: { count: number; nextAt?: number };
}

export interface Progress {
  update(progress: ProgressUpdate): void;
  stop(): void;
}

export interface ProgressOptions {
  /** What the bar measures: the ETA comes from it. */
  unit: 'rows' | 'bytes';
  logger?: Logger;
  stream?: NodeJS.WriteStream;
  logEveryMs?: number;
}

export function createProgress(label: string, options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  // The pace is the rows finished since the bar's first update over the time since then:
  // rows finished before (an earlier run of the batch, rows refused at load) are not this run's.
  let started = Date.now();
  let baseline: number | undefined;
  const since = (rows: number): number => {
    if (baseline === undefined) {
      baseline = options.unit === 'rows' ? rows : 0;
      started = Date.now();
    }
    return Math.max(0, rows - baseline);
  };

  if (!stream.isTTY) {
    const every = options.logEveryMs ?? 10_000;
    let last = started;
    return {
      update({ value, total, rows, waiting }) {
        const ran = since(rows);
        if (!options.logger || Date.now() - last < every) return;
        last = Date.now();
        options.logger.info(
          {
            progress: label,
            rows,
            rowsPerSecond: rowsPerSecond(ran, Date.now() - started),
            percent: total > 0 ? Math.round((value / total) * 100) : undefined,
            ...(waiting && waiting.count > 0 && { waiting: formatWaiting(waiting, Date.now()) }),
          },
          'progress',
        );
      },
      stop: () => undefined,
    };
  }

  // Our own words after the bar: cli-progress's ETA shows `NF` (infinity) while rows wait for a retry.
  const format = (opts: cliProgress.Options, params: cliProgress.Params, payload: Payload): string => {
    const bar = cliProgress.Format.BarFormat(params.progress, opts);
    const now = Date.now();
    const words =
      options.unit === 'bytes'
        ? `${Math.round(params.progress * 100)}% | ${payload.rows} rows | ${formatRate(payload.ran, now - started)} | ` +
          `ETA ${params.progress > 0 && params.progress < 1 ? formatDuration(((now - started) * (1 - params.progress)) / params.progress) : '—'}`
        : formatRunLine({
            done: params.value,
            total: params.total,
            rowsThisRun: payload.ran,
            runningMs: now - started,
            ...(payload.waiting && { waiting: payload.waiting }),
            now,
          });
    return `${label} [${bar}] ${words}`;
  };
  const bar = new cliProgress.SingleBar(
    // Redrawn even when unchanged: a line written above the bar cleared it.
    { stream, format, hideCursor: true, fps: 5, forceRedraw: true },
    cliProgress.Presets.shades_classic,
  );
  let begun = false;
  // Log lines of `warn` and above are written above the bar (src/cli/terminal.ts).
  let release = (): void => undefined;
  return {
    update({ value, total, rows, waiting }) {
      const payload: Payload = { rows, ran: since(rows), ...(waiting && { waiting }) };
      if (!begun) {
        bar.start(Math.max(1, total), value, payload);
        release = holdBottomLine(stream, { redraw: () => bar.render() });
        begun = true;
      } else {
        bar.setTotal(Math.max(1, total));
        bar.update(value, payload);
      }
    },
    stop() {
      release();
      if (begun) bar.stop();
      begun = false;
    },
  };
}

interface Payload {
  rows: number;
  /** Rows finished since the first update (the pace's rows). */
  ran: number;
  waiting?: { count: number; nextAt?: number };
}
