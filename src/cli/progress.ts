/**
 * Progress of a long command: a bar with rows, rows/s and ETA on a terminal;
 * nothing on stderr otherwise (the JSON log carries the figures).
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

export function createProgress(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${label} [{bar}] {value}/{total} rows | {rate} rows/s | ETA {eta_formatted}`,
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  let begun = false;
  return {
    update(done, total) {
      const rate = (done / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1);
      if (!begun) {
        bar.start(total, done, { rate });
        begun = true;
      } else {
        bar.setTotal(total);
        bar.update(done, { rate });
      }
    },
    stop() {
      if (begun) bar.stop();
    },
  };
}
