/** An extract's own fields of a deal: which extract, and its order. */
import type { Deal } from '../../domain/deal.js';

export const EXTRACT_TYPES = ['info', 'base', 'ownership'] as const;

/** What an extract's row orders: which extract, and its order (with the dealId, the ledger's key). */
export interface ExtractFields {
  extractType: (typeof EXTRACT_TYPES)[number];
  /** The day of the order (YYYY-MM-DD), or the batch's id when ordered `--again`: the same extract of a deal is ordered once an order. */
  order: string;
}

/** An extract's part of a deal, under the key deals of jobs waiting in Redis hold it under (src/queue/deal-pack.ts). */
export interface ExtractOwn {
  extract?: ExtractFields;
}

export type ExtractDeal = Deal & ExtractOwn;
