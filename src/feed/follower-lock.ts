/**
 * The feed follower's turn: the fleet's one lock on the feed (src/redis/token-lock.ts), renewed
 * on a timer of its own, and whether this process holds it. A change of holder is said in the
 * log once, when it happens.
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
    redis: Redis,
    key: string,
    private readonly lockMs: number,
    private readonly log: Logger,
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
    this.renewal = setInterval(() => this.renew(), Math.max(100, Math.floor(this.lockMs / 3)));
    this.renewal.unref();
  }

  /** Asks for the lock: whether this process holds it now. */
  async acquire(): Promise<boolean> {
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
    if (!this.isHolding) return;
    this.lock
      .renew()
      .then((ok) => ok || this.setHolding(false))
      .catch(() => undefined);
  }

  private setHolding(now: boolean): void {
    if (now === this.isHolding) return;
    this.isHolding = now;
    if (now) this.log.info({ lockMs: this.lockMs }, 'following the gateway news feed for the fleet');
    else if (!this.closing) this.log.warn('another process follows the news feed now (this one stopped renewing its lock in time)');
  }
}
