/**
 * The news feed's lag, measured rather than assumed: for each docflow whose creation answer came,
 * when the feed first showed it minus when the answer came, both on our clock (the database's;
 * the gateway's `date` is never compared with it). The follower keeps its last samples; their
 * 99th percentile, with a margin, is the least wait before a try whose answer was lost is judged
 * to have made nothing (src/ledger/claim.ts), whatever `--feed-lag-ms` says.
 */

/** Samples kept: the percentile follows the feed as it is now, not as it was all night. */
export const LAG_WINDOW = 1000;
/** The wait before a resend is at least this many times the observed 99th percentile. */
export const LAG_MARGIN = 1.5;
/** Fewer samples than this say little about a tail: below it, the largest stands for the percentile. */
export const LAG_MIN_SAMPLES = 20;

/** The wait a try's judgement allows beyond its end: the configured lag, or the measured one with its margin. */
export function lagAllowance(configuredMs: number, observedP99Ms: number): number {
  return Math.max(configuredMs, Math.ceil(observedP99Ms * LAG_MARGIN));
}

export interface LagFigures {
  p99: number;
  max: number;
  /** Every sample taken since this follower started. */
  samples: number;
}

export interface LagWindow {
  add(samples: readonly number[]): void;
  /** The figures (undefined before the first sample); under LAG_MIN_SAMPLES samples, p99 is the largest. */
  figures(): LagFigures | undefined;
}

export function createLagWindow(size = LAG_WINDOW): LagWindow {
  const ring: number[] = [];
  let next = 0;
  let total = 0;
  let max = 0;
  return {
    add(samples) {
      for (const s of samples) {
        if (ring.length < size) ring.push(s);
        else ring[next] = s;
        next = (next + 1) % size;
        total++;
        max = Math.max(max, s);
      }
    },
    figures() {
      if (ring.length === 0) return undefined;
      if (ring.length < LAG_MIN_SAMPLES) return { p99: Math.round(Math.max(...ring)), max: Math.round(max), samples: total };
      // A typed array sorts numerically without a comparator: a page's figures cost microseconds, not a tenth of a millisecond.
      const sorted = Float64Array.from(ring).sort();
      const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
      return { p99: Math.round(p99), max: Math.round(max), samples: total };
    },
  };
}
