/**
 * The follower's high-water mark: the newest token a read without `after` gave, asked at `at`
 * (the database's clock before the call). Once a stored page reaches it, the feed is known
 * complete up to `at`, however long its pages: under a feed that always has something new (no
 * read ever comes back empty) the coverage still keeps up. Asked while pages with items are read
 * one after another, at most one pending, at most one each half poll period.
 */
import type { RealtyClient } from '../realty/client.js';
import type { NewsPage } from '../domain/gateway.js';

export class HighWaterMark {
  private pending: { at: number; token: Promise<string | undefined> } | undefined;
  /** When the last mark reached was asked for. */
  private lastAt = 0;

  constructor(
    private readonly client: RealtyClient,
    private readonly pollMs: number,
  ) {}

  /** Asks the feed for its newest token, unless one is pending or the last was asked less than half a poll ago. */
  ask(at: number): void {
    if (this.pending || at - this.lastAt < this.pollMs / 2) return;
    this.pending = {
      at,
      token: this.client.news().then(
        (p) => p.lastToken,
        () => undefined,
      ),
    };
  }

  /** A fresh start: the mark pending is dropped (the cursor may have moved meanwhile). */
  forget(): void {
    this.pending = undefined;
  }

  /** Whether this page, read after `after`, reaches the pending mark: the time it completes the feed to, if so. */
  async reached(after: string, page: NewsPage): Promise<number | undefined> {
    if (page.news.length === 0) this.pending = undefined; // an empty read says more, of a later moment
    if (!this.pending) return undefined;
    const token = await this.pending.token;
    if (token !== undefined && token !== after && !page.news.some((i) => i.token === token)) return undefined;
    const at = this.pending.at;
    this.pending = undefined;
    if (token === undefined) return undefined;
    this.lastAt = at;
    return at;
  }
}
