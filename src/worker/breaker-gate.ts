/**
 * The worker's circuit breaker (src/worker/circuit-breaker.ts, a pure state machine) wired to
 * the worker: it counts every gateway call's answer, pauses the worker when the breaker opens,
 * sends the one probe when the cool-down is over, and resumes the worker when it closes.
 */
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { ApiHttpError } from '../errors.js';
import { CircuitBreaker, type BreakerOptions, type BreakerState } from './circuit-breaker.js';

/** What the gate acts on; the worker and the gateway client are made after it, so it reaches them through these. */
export interface BreakerGateOptions {
  breaker: BreakerOptions;
  logger: Logger;
  /** Counts the breaker's states for the fleet. */
  metrics: Pick<MetricsRecorder, 'breaker'>;
  /** Stops taking jobs, without waiting for the active ones. */
  pause(): Promise<void>;
  /** Takes jobs again. */
  resume(): Promise<void>;
  /** One harmless read of the gateway: any answer but a 501, a 5xx or none at all means it is back. */
  probe(): Promise<unknown>;
}

export class BreakerGate {
  readonly breaker: CircuitBreaker;
  private readonly options: BreakerGateOptions;
  private probeTimer: NodeJS.Timeout | undefined;
  /** Set by close(): no probe is sent and the worker is not resumed any more. */
  private closing = false;

  constructor(options: BreakerGateOptions) {
    this.options = options;
    this.breaker = new CircuitBreaker(options.breaker, (from, to, detail) => this.onTransition(from, to, detail));
  }

  /** One gateway call's answer (its HTTP status, 0 for none). */
  record(status: number): void {
    this.breaker.record(status, Date.now());
  }

  /** While the breaker is open: when a deal may try again (ms since epoch); 0 when closed. */
  holdUntil(): number {
    return this.breaker.isOpen() ? Math.max(this.breaker.openUntil, Date.now() + 1000) : 0;
  }

  /** Cancels the pending probe; the worker is closing and must not be resumed. */
  close(): void {
    this.closing = true;
    clearTimeout(this.probeTimer);
  }

  private onTransition(from: BreakerState, to: BreakerState, detail: { failureShare?: number; calls?: number; gaveUp?: boolean }): void {
    const { logger, metrics, breaker: breakerOptions } = this.options;
    metrics.breaker(to);
    const line = { breaker: to, from, ...detail, cooldownMs: breakerOptions.cooldownMs };
    if (to === 'open') {
      logger.warn(line, 'the gateway keeps failing: circuit breaker open, no new jobs until a probe succeeds');
      this.options.pause().catch(() => undefined);
      this.scheduleProbe();
    } else if (to === 'closed') {
      if (detail.gaveUp)
        logger.warn(
          line,
          `the gateway failed ${breakerOptions.maxProbes} probes in a row: circuit breaker closed anyway; deals now spend their tries and end unavailable or failed`,
        );
      else logger.info(line, 'the gateway answers again: circuit breaker closed, taking jobs');
      if (!this.closing) this.options.resume().catch(() => undefined);
    } else logger.info(line, 'circuit breaker half-open: one probe');
  }

  private scheduleProbe(): void {
    clearTimeout(this.probeTimer);
    // Timers run on a monotonic clock and may fire a millisecond before Date.now() says
    // the cool-down is over: one more millisecond, and probe() checks again anyway.
    this.probeTimer = setTimeout(() => void this.probe(), Math.max(0, this.breaker.openUntil - Date.now()) + 1);
    this.probeTimer.unref();
  }

  private async probe(): Promise<void> {
    if (this.closing || this.breaker.state !== 'open') return;
    if (!this.breaker.probeDue(Date.now())) {
      // Early: an open breaker without a pending probe would stay open for ever.
      this.scheduleProbe();
      return;
    }
    this.breaker.startProbe();
    let status: number;
    try {
      await this.options.probe();
      status = 200;
    } catch (err) {
      status = err instanceof ApiHttpError ? err.status : 0;
    }
    if (this.breaker.probeResult(status, Date.now()) === 'open') this.scheduleProbe();
  }
}
