/**
 * The news feed: one item per change of a docflow's state (its creation first), in the
 * order items become visible.
 *
 * Items are published lazily, when the feed is read, and never by a timer: a docflow waits
 * in `pending` until `newsLagMs` after its change, and gets its token only when it is
 * published. Tokens therefore only ever grow along the published list, so a reader that
 * has passed token N never misses an item that becomes visible later, whatever the lags.
 * The feed keeps every item: the sandbox lives for one test or rehearsal.
 */
import { createHash } from 'node:crypto';
import type { ApiErrorBody, NewsDocflow, NewsItem, NewsPage } from '../domain/gateway.js';
import { dateOf, type DocflowView } from './docflow-record.js';

/** Items per page when the reader names no `limit`, and the most it may ask for. */
export const DEFAULT_NEWS_LIMIT = 100;
export const MAX_NEWS_LIMIT = 1000;

const DECIMAL = /^\d+$/;

interface PendingItem {
  /** performance.now() milliseconds: monotonic, so a clock step cannot reorder or hide items. */
  visibleAt: number;
  date: string;
  docflow: NewsDocflow;
}

export type NewsAnswer = { ok: true; page: NewsPage } | { ok: false; error: ApiErrorBody };

function invalid(target: 'after' | 'limit', message: string): NewsAnswer {
  return { ok: false, error: { code: 'validation', message, target } };
}

/**
 * A UUID-shaped user id, the same for every docflow of a session. Derived by hash, so the
 * session id (a credential) never appears in the feed.
 */
export function userIdOf(session: string): string {
  const h = createHash('sha256').update(`realty-sandbox-user\0${session}`).digest('hex');
  // Version 5 and the RFC 4122 variant bits, so strict UUID parsers accept it.
  const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export class NewsFeed {
  private pending: PendingItem[] = [];
  private readonly published: NewsItem[] = [];

  /**
   * Queues the item of a change of a docflow: its state at `at`, copied as it is now,
   * whatever happens to it afterwards. It shows `lagMs` after the change.
   */
  record(docflow: DocflowView, lagMs: number, at: number): void {
    const item: NewsDocflow = {
      docflowId: docflow.docflowId,
      docflowType: docflow.docflowType,
      type: docflow.type,
      userId: docflow.userId,
      state: docflow.state,
    };
    if (docflow.requestId !== undefined) item.requestId = docflow.requestId;
    if (docflow.requirements !== undefined) item.requirements = docflow.requirements;
    if (docflow.error !== undefined) item.error = docflow.error;
    if (docflow.result !== undefined) item.result = docflow.result;
    this.pending.push({ visibleAt: at + lagMs, date: dateOf(at), docflow: item });
  }

  /**
   * Publishes every pending item whose time has come, in the order of the changes. A later item may be
   * due before an earlier one when `newsLagMs` was lowered in between; it is not held back.
   */
  private publishDue(now: number): void {
    if (this.pending.length === 0) return;
    const waiting: PendingItem[] = [];
    for (const item of this.pending) {
      if (item.visibleAt > now) {
        waiting.push(item);
        continue;
      }
      this.published.push({ token: String(this.published.length + 1), date: item.date, docflow: item.docflow });
    }
    this.pending = waiting;
  }

  /**
   * `GET /news?after=<token>&limit=<n>`. Without `after` the feed starts from now: no items,
   * the newest token ("0" before the first). Token N is published item N, counted from 1.
   */
  page(query: URLSearchParams, now = performance.now()): NewsAnswer {
    const limitText = query.get('limit');
    const limit = limitText === null ? DEFAULT_NEWS_LIMIT : Number(limitText);
    if (limitText !== null && (!DECIMAL.test(limitText) || limit < 1 || limit > MAX_NEWS_LIMIT)) {
      return invalid('limit', `limit must be a whole number from 1 to ${MAX_NEWS_LIMIT}`);
    }
    this.publishDue(now);
    const newest = this.published.length;
    const after = query.get('after');
    if (after === null) return { ok: true, page: { news: [], lastToken: String(newest) } };
    if (!DECIMAL.test(after)) return invalid('after', 'after must be a token this feed gave: a decimal string');
    // Past 2^53 Number() rounds, but such a token is far beyond any feed, so the bound still refuses it.
    const position = Number(after);
    if (position > newest) return invalid('after', `after is beyond the newest token of this feed (${newest})`);
    const news = this.published.slice(position, position + limit);
    return { ok: true, page: { news, lastToken: news.at(-1)?.token ?? after } };
  }
}
