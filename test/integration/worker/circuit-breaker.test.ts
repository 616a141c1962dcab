import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runBatch } from '../../../src/pipeline/run-batch.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { loadProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import { CircuitBreaker, type BreakerState } from '../../../src/worker/circuit-breaker.js';
import { ROOT } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';

const options = { threshold: 0.5, minCalls: 4, windowMs: 10_000, cooldownMs: 1000, maxProbes: 3 };

// Every call fails, and takes 100 ms: all eight deals are in flight when the breaker opens.
const it = harness({ label: 'breaker', sandbox: { sessions: ['s'], fault5xx: 1, latencyMs: 100 }, redis: { maxRetriesPerRequest: null } });

describe('the circuit breaker', () => {
  it('opens when half of at least minCalls recent calls failed, probes after the cool-down, and closes on a good answer', () => {
    const transitions: Array<[BreakerState, BreakerState]> = [];
    const breaker = new CircuitBreaker(options, (from, to) => transitions.push([from, to]));
    for (const status of [200, 201, 501]) expect(breaker.record(status, 0)).toBe('closed');
    expect(breaker.record(0, 1)).toBe('open'); // 2 of 4 failed: 501 and a timeout
    expect(breaker.probeDue(500)).toBe(false);
    expect(breaker.probeDue(1001)).toBe(true);
    breaker.startProbe();
    expect(breaker.probeResult(503, 1100)).toBe('open');
    expect(breaker.openUntil).toBe(2100);
    breaker.startProbe();
    expect(breaker.probeResult(400, 2200)).toBe('closed');
    expect(transitions).toEqual([
      ['closed', 'open'],
      ['open', 'half_open'],
      ['half_open', 'open'],
      ['open', 'half_open'],
      ['half_open', 'closed'],
    ]);
  });

  it('closes anyway after maxProbes failed probes in a row, so a gateway down for good ends its rows', () => {
    const transitions: Array<[BreakerState, BreakerState]> = [];
    const breaker = new CircuitBreaker(options, (from, to) => transitions.push([from, to]));
    for (let i = 0; i < 4; i++) breaker.record(501, 0);
    for (let probe = 1; probe <= 3; probe++) {
      breaker.startProbe();
      breaker.probeResult(501, probe * 2000);
    }
    expect(breaker.state).toBe('closed');
    expect(transitions.at(-1)).toEqual(['half_open', 'closed']);
  });

  it("counts 4xx as the request's fault, not the gateway's, and forgets calls older than the window", () => {
    const breaker = new CircuitBreaker(options);
    for (let i = 0; i < 10; i++) breaker.record(400, i);
    expect(breaker.state).toBe('closed');
    const old = new CircuitBreaker(options);
    old.record(501, 0);
    old.record(501, 0);
    for (let i = 0; i < 3; i++) old.record(200, 20_000);
    expect(old.record(501, 20_000)).toBe('closed'); // 1 of 4 within the window
  });

  it('lets no deal burn its retry budget while the gateway is down for everyone', async ({ sandbox, keys, dir, redis, db: store }) => {
    const id = HEADER.indexOf('dealId');
    const rows = Array.from({ length: 8 }, (_, i) => [`BRK-${i}`, ...ROWS[1]!.slice(1)]);
    expect(rows[0]![id]).toBe('BRK-0');
    await writeFile(join(dir, 'deals.csv'), csvText(rows));
    // The gateway comes back after three seconds. Each deal has ONE try: a deal whose
    // failure came after the breaker opened must not have spent it.
    setTimeout(() => sandbox.configure({ fault5xx: 0 }), 3000).unref();
    const result = await runBatch({
      file: join(dir, 'deals.csv'),
      profile: await loadProfile(join(ROOT, 'samples/bank-profile.json')),
      batch: 'down',
      redis,
      keys,
      db: store.db,
      logger: createLogger({ level: 'silent' }),
      apiUrl: sandbox.url,
      sessionId: 's',
      processor: createDealProcessor,
      worker: {
        concurrency: 8,
        attempts: 1,
        backoffMs: 50,
        timeoutMs: 2000,
        breaker: { ...options, cooldownMs: 500, maxProbes: 20 },
        // A 5xx may have made a docflow: a deal out of tries asks the feed before it ends.
        feedLagMs: 200,
        feedPollMs: 50,
      },
      waiting: { pollMs: 20 },
      output: { out: join(dir, 'out.csv'), rejects: join(dir, 'r.csv') },
    });
    // Only the failures that opened it (fewer than minCalls) may have spent their try.
    expect(result.results.counts.failed).toBeLessThan(options.minCalls);
    expect(result.results.counts.queued + result.results.counts.failed).toBe(8);
    const transitions = await redis.hgetall(keys.metrics);
    expect(Number(transitions['breaker|open'])).toBeGreaterThanOrEqual(1);
    expect(Number(transitions['breaker|closed'])).toBeGreaterThanOrEqual(1);
  });
});
