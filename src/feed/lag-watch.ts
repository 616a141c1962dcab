/**
 * The feed's lag behind the answers as the follower measures it (src/ledger/feed-lag.ts): the
 * figures are written with the next page stored, and said in the log each time the allowance
 * they make doubles.
 */
import type { Logger } from '../logger.js';
import { createLagWindow, lagAllowance, type LagFigures } from '../ledger/feed-lag.js';

export class LagWatch {
  private readonly window = createLagWindow();
  /** The figures not yet written. */
  private toWrite: LagFigures | undefined;
  /** The allowance last said in the log: a line each time it doubles. */
  private said = 0;

  constructor(private readonly log: Logger) {}

  /** A stored page's samples. */
  add(lags: readonly number[]): void {
    // A page that gave no sample changes no figure: nothing new to write.
    if (lags.length === 0) return;
    this.window.add(lags);
    this.toWrite = this.window.figures();
    const allowance = this.toWrite ? lagAllowance(0, this.toWrite.p99) : 0;
    if (this.toWrite && allowance >= 1000 && allowance >= 2 * this.said) {
      this.said = allowance;
      this.log.warn(
        { lagP99Ms: this.toWrite.p99, lagMaxMs: this.toWrite.max, samples: this.toWrite.samples, waitMs: allowance },
        'the news feed shows docflows late: a try whose answer was lost is judged only once the feed was read complete this long after its end, whatever --feed-lag-ms says',
      );
    }
  }

  /** The figures to write with the page stored next (once: undefined until new samples come). */
  take(): LagFigures | undefined {
    const figures = this.toWrite;
    this.toWrite = undefined;
    return figures;
  }
}
