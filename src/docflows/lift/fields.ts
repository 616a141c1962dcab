/** A lift's own fields of a deal: the registry's record of the mortgage it lifts, and the bank's further documents. */
import type { AppliedDocument, Deal } from '../../domain/deal.js';

export const ENCUMBRANCE_TYPES = ['mortgage', 'mortgageInLaw'] as const;

/** What a lift adds to the object and its owners: the registry's record of the mortgage it lifts. */
export interface LiftFields {
  encumbranceType: (typeof ENCUMBRANCE_TYPES)[number];
  recordNumber: string;
  /** YYYY-MM-DD. */
  recordDate: string;
  /** `otherDocumentFiles`: the bank's further documents (a statement that the loan is repaid). */
  documents: AppliedDocument[];
}

/**
 * A lift's part of a deal. Its key, `lift`, is the one deals of jobs waiting in Redis hold it
 * under (src/queue/deal-pack.ts): renaming it would lose theirs.
 */
export interface LiftOwn {
  lift?: LiftFields;
}

export type LiftDeal = Deal & LiftOwn;
