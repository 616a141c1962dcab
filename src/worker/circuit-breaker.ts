/**
 * A circuit breaker for the gateway, per worker process. When the recent share
 * of 501s, 5xx, timeouts and resets crosses a threshold, the worker stops taking
 * jobs for a cool-down, then sends one probe; it resumes when the probe gets an
 * answer that is not one of those. Deals caught while it is open wait without
 * spending a try (src/worker/deal/steps.ts, failure).
 *
 * The state machine is pure (time is passed in) and unit-tested; the worker
 * wires its transitions to pausing and resuming itself.
 */

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions {
  /** Share of failures in the window that opens the breaker (0..1). */
  threshold: number;
  /** Fewer calls than this in the window never open it. */
  minCalls: number;
  /** The window: calls of the last `windowMs`. */
  windowMs: number;
  /** How long it stays open before the probe. */
  cooldownMs: number;
  /** Failed probes in a row after which it closes anyway (the gateway is down for good). */
  maxProbes: number;
}

/** What counts against the gateway: no answer, 501, and 5xx. 4xx are the request's own fault. */
export function isGatewayFailure(status: number): boolean {
  return status === 0 || status >= 500;
}

export class CircuitBreaker {
  state: BreakerState = 'closed';
  /** When an open breaker may probe (ms since epoch). */
  openUntil = 0;
  /** Calls per second of the window: a fixed cost per call, whatever the traffic. */
  private buckets: Array<{ second: number; calls: number; failures: number }> = [];

  constructor(
    private readonly options: BreakerOptions,
    private readonly onTransition: (
      from: BreakerState,
      to: BreakerState,
      detail: { failureShare?: number; calls?: number; gaveUp?: boolean },
    ) => void = () => undefined,
  ) {}

  /** One call's answer, at `now`. Returns the new state. */
  record(status: number, now: number): BreakerState {
    if (this.state !== 'closed') return this.state;
    const second = Math.floor(now / 1000);
    let last = this.buckets.at(-1);
    if (last?.second !== second) {
      last = { second, calls: 0, failures: 0 };
      this.buckets.push(last);
      const oldest = Math.floor((now - this.options.windowMs) / 1000);
      while (this.buckets.length > 0 && this.buckets[0]!.second <= oldest) this.buckets.shift();
    }
    last.calls++;
    if (isGatewayFailure(status)) last.failures++;
    let calls = 0;
    let failures = 0;
    for (const b of this.buckets) {
      calls += b.calls;
      failures += b.failures;
    }
    if (calls >= this.options.minCalls) {
      const share = failures / calls;
      if (share >= this.options.threshold) this.open(now, { failureShare: Math.round(share * 100) / 100, calls });
    }
    return this.state;
  }

  /** True while jobs must not be taken (open, or waiting for the probe's answer). */
  isOpen(): boolean {
    return this.state !== 'closed';
  }

  /** Open and past the cool-down: time for the one probe. */
  probeDue(now: number): boolean {
    return this.state === 'open' && now >= this.openUntil;
  }

  startProbe(): void {
    this.transition('half_open', {});
  }

  /** Probes that failed in a row since the breaker last opened from closed. */
  failedProbes = 0;

  /**
   * The probe's answer: closes the breaker, or opens it for another cool-down. After
   * `maxProbes` failed probes in a row it closes all the same: a gateway down for good
   * must end its rows (unavailable, failed) rather than hold them for ever.
   */
  probeResult(status: number, now: number): BreakerState {
    if (this.state !== 'half_open') return this.state;
    if (!isGatewayFailure(status)) {
      this.close({});
    } else if (++this.failedProbes >= this.options.maxProbes) {
      this.close({ gaveUp: true });
    } else {
      this.open(now, {});
    }
    return this.state;
  }

  private close(detail: { gaveUp?: boolean }): void {
    this.buckets = [];
    this.failedProbes = 0;
    this.transition('closed', detail);
  }

  private open(now: number, detail: { failureShare?: number; calls?: number }): void {
    this.openUntil = now + this.options.cooldownMs;
    this.transition('open', detail);
  }

  private transition(to: BreakerState, detail: { failureShare?: number; calls?: number; gaveUp?: boolean }): void {
    const from = this.state;
    this.state = to;
    this.onTransition(from, to, detail);
  }
}
