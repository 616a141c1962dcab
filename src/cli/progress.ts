/**
 * Progress of a long command: on a terminal, a bar with rows, rows/s and ETA;
 * otherwise a JSON log line every 10 s (no bar, no escape codes in a cron mail).
 */
import cliProgress from 'cli-progress';
import type { Logger } from '../logger.js';
import { holdBottomLine } from './terminal.js';

export interface ProgressUpdate {
  /** Where the bar is, of `total`: bytes of the file while loading, rows while processing. */
  value: number;
  total: number;
  /** Rows done so far. */
  rows: number;
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
  const started = Date.now();
  const rate = (rows: number): number => Math.round((rows / Math.max(0.001, (Date.now() - started) / 1000)) * 10) / 10;

  if (!stream.isTTY) {
    const every = options.logEveryMs ?? 10_000;
    let last = started;
    return {
      update({ value, total, rows }) {
        if (!options.logger || Date.now() - last < every) return;
        last = Date.now();
        options.logger.info(
          { progress: label, rows, rowsPerSecond: rate(rows), percent: total > 0 ? Math.round((value / total) * 100) : undefined },
          'progress',
        );
      },
      stop: () => undefined,
    };
  }

  const counter = options.unit === 'bytes' ? '{percentage}% | {rows} rows' : '{value}/{total} rows';
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${label} [{bar}] ${counter} | {rate} rows/s | ETA {eta_formatted}`,
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
      // Redrawn even when unchanged: a line written above the bar cleared it.
      forceRedraw: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let begun = false;
  // Log lines of `warn` and above are written above the bar (src/cli/terminal.ts).
  let release = (): void => undefined;
  return {
    update({ value, total, rows }) {
      const payload = { rows, rate: rate(rows) };
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
