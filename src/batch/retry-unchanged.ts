/**
 * A `not_found` or `ambiguous` row is the registry's answer to the row's address: sent again
 * unchanged, it gets the same answer (issue 40, point 9). `retry` sends one again only when the
 * question would differ now (the row names its cadastral number, so the registry is not asked;
 * or the address is read into another query than the one answered, as after an upgrade that
 * reads addresses better), or with `--force` (the registry itself changed). The batch's input is
 * the file it was loaded from (its fingerprint is checked), so a row corrected by a person is a
 * new load of the attention file, not a retry.
 */
import type { Deal } from '../domain/deal.js';
import type { Outcome, OutcomeRecord } from '../domain/outcome.js';

/** Outcomes that are the registry's answer to the row's address. */
export const REGISTRY_ANSWER_OUTCOMES: ReadonlySet<Outcome> = new Set(['not_found', 'ambiguous']);

/** A row not sent again, and why, in one line (`retry` prints it). */
export interface UnchangedRow {
  row: number;
  dealId: string;
  outcome: Outcome;
}

/**
 * The registry's query for a deal as it is read now, in the words the not_found message
 * keeps after "searched " (src/worker/deal/resolve-cadastral.ts describeQuery); given by the
 * command, since src/batch stands below src/worker.
 */
export type RegistryQuery = (deal: Deal) => string;

/**
 * True when sending the row again could bring another answer: it is not one of the registry's
 * answers, --force, the row now names its cadastral number, or its query is not the one the
 * recorded not_found answered. An ambiguous answer keeps no query: the same input asks the same.
 */
export function registryAnswerCouldDiffer(
  earlier: OutcomeRecord | undefined,
  deal: Deal,
  options: { force?: boolean; registryQuery?: RegistryQuery },
): boolean {
  if (!earlier || !REGISTRY_ANSWER_OUTCOMES.has(earlier.outcome) || options.force) return true;
  if (deal.cadastralNumber) return true;
  if (earlier.outcome !== 'not_found' || !options.registryQuery) return false;
  const message = earlier.errorMessage ?? '';
  // A message that does not name its query cannot say the query changed.
  if (!message.startsWith('searched ')) return false;
  return !message.startsWith(`searched ${options.registryQuery(deal)}:`);
}

/** The line `retry` prints for a row it did not send again. */
export function describeUnchanged(row: UnchangedRow): string {
  return `row ${row.row} (${row.dealId}) ${row.outcome}: not sent again, the registry already answered this address and would answer the same; correct the row in the attention file and load that, or give --force if the registry changed`;
}
