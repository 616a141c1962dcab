/**
 * The feed follower's turn: the fleet's one lock on the feed (src/redis/token-lock.ts), renewed
 * on a timer of its own, and whether this process holds it. A change of holder is said in the
 * log once, when it happens.
 *
 * A follower started alone (`realty-batch track`, `dedicated`) goes first: while one runs it keeps
 * an expiring key set, and a worker's own follower neither takes the lock nor keeps it (it lets it
 * go at its next renewal, and the dedicated one takes it at its next try). In a worker's process the
 * follower shares the event loop with the deals; on PostgreSQL it fell behind there, and new deals
 * waited for it (docs/performance.md, "What PostgreSQL needs"). Only who follows changes: a store
 * in flight when the lock is let go is refused by its own lock check and by the cursor's
 * compare-and-set, as when a lock runs out.
 */
import type { Logger } from '../logger.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import { tokenLock, type TokenLock } from '../redis/token-lock.js';

export class FollowerLock {
  private readonly lock: TokenLock;
  private renewal: NodeJS.Timeout | undefined;
  private isHolding = false;
  /** Closing: a lock lost from now on is this process letting it go, not another taking it. */
  private closing = false;

  constructor(
    private readonly redis: Redis,
    key: string,
    private readonly lockMs: number,
    private readonly log: Logger,
    /** The key a dedicated follower keeps set, and whether this one is such a follower. */
    private readonly dedicated: { key: string; self: boolean },
  ) {
    this.lock = tokenLock(redis, key, lockMs);
  }

  /** True while this process holds the lock. */
  get holding(): boolean {
    return this.isHolding;
  }

  /** The token a stored page shows: the store is refused once the lock is another's. */
  get token(): string {
    return this.lock.token;
  }

  /** Renews the lock while it is held, on its own timer and not between reads: a read may take the gateway's whole timeout. */
  start(): void {
    if (this.dedicated.self) this.announce();
    this.renewal = setInterval(() => this.renew(), Math.max(100, Math.floor(this.lockMs / 3)));
    this.renewal.unref();
  }

  /** Asks for the lock: whether this process holds it now (never while a dedicated follower runs, unless this is one). */
  async acquire(): Promise<boolean> {
    if (!this.dedicated.self && (await this.dedicatedRuns())) return false;
    const taken = await this.lock.acquire();
    this.setHolding(taken);
    return taken;
  }

  /** A store found the lock another's. */
  lost(): void {
    this.setHolding(false);
  }

  /** No more renewals; the lock is kept until `release`. */
  stop(): void {
    this.closing = true;
    clearInterval(this.renewal);
  }

  /** Lets the lock go, when held, for the next follower to take at once. */
  async release(): Promise<void> {
    if (this.isHolding) await this.lock.release();
    this.isHolding = false;
  }

  private renew(): void {
    if (this.dedicated.self) this.announce();
    if (!this.isHolding) return;
    if (!this.dedicated.self) {
      void this.yieldToDedicated().catch(() => undefined);
      return;
    }
    this.renewLock();
  }

  private renewLock(): void {
    this.lock
      .renew()
      .then((ok) => ok || this.setHolding(false))
      .catch(() => undefined);
  }

  /** A worker's follower holding the lock: let it go when a dedicated follower runs, else renew it. */
  private async yieldToDedicated(): Promise<void> {
    if (!(await this.dedicatedRuns())) return this.renewLock();
    if (!this.isHolding || this.closing) return;
    this.isHolding = false;
    await this.lock.release();
    this.log.info('a follower started alone (realty-batch track) runs: this process leaves the news feed to it');
  }

  /** This dedicated follower runs: the key lives a lock period past its last renewal. */
  private announce(): void {
    this.redis.set(this.dedicated.key, '1', 'PX', this.lockMs).catch(() => undefined);
  }

  private async dedicatedRuns(): Promise<boolean> {
    return (await this.redis.exists(this.dedicated.key)) === 1;
  }

  private setHolding(now: boolean): void {
    if (now === this.isHolding) return;
    this.isHolding = now;
    if (now) this.log.info({ lockMs: this.lockMs }, 'following the gateway news feed for the fleet');
    else if (!this.closing) this.log.warn('another process follows the news feed now (this one stopped renewing its lock in time)');
  }
}
