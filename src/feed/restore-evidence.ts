/**
 * A page's evidence of a restore (src/ledger/restore.ts) as the feed's row keeps it, decided in
 * the page's transaction (feed-page.ts).
 */
import { evidence, RESTORE_ALERT_MS } from '../ledger/restore.js';
import type { FeedRow } from './page-statements.js';

/**
 * The page's evidence of a restore (src/ledger/restore.ts), as the feed's row keeps it: an
 * episode begins with its first evidence (or again once the last is older than RESTORE_ALERT_MS)
 * and keeps its first sentence; each page with evidence counts what it gave back.
 */
export function restoreOf(
  feed: FeedRow,
  now: number,
  behind: number,
  triesAbove: string[],
  lacking: number,
): { why: string; set: Partial<FeedRow> } | undefined {
  if (behind === 0 && triesAbove.length === 0) return undefined;
  const more = triesAbove.length > 1 ? ` (and ${triesAbove.length - 1} more tries above the ledger's on this page)` : '';
  const why = behind > 0 ? evidence.behind(Number(feed.items), behind) : `${triesAbove[0]}${more}`;
  const ongoing = feed.restore_seen_at !== null && now - Number(feed.restore_seen_at) < RESTORE_ALERT_MS;
  return {
    why,
    set: {
      restore_at: ongoing ? feed.restore_at : now,
      restore_seen_at: now,
      restore_lost: (ongoing ? Number(feed.restore_lost) : 0) + lacking,
      restore_why: ongoing ? feed.restore_why : why,
    },
  };
}
