/**
 * Many deals made from the sample rows (samples/deals.csv): the same people, checksums
 * and addresses under new unique dealIds, so every valid one can reach the registry.
 */
import { CADASTRAL, DEAL_ID, FIRST_ROWS, HEADER, INVALID_SAMPLES, RESOLVING_SAMPLES } from '../../bench/sample-deals.js';

// The sample rows and what samples/README.md says of them are the bench's too (bench/sample-deals.ts).
const VALID = FIRST_ROWS.filter(
  (r) => !INVALID_SAMPLES.includes(r[DEAL_ID]!) && (r[CADASTRAL] !== '' || RESOLVING_SAMPLES.has(r[DEAL_ID]!)),
);
const BROKEN = INVALID_SAMPLES.map((id) => FIRST_ROWS.find((r) => r[DEAL_ID] === id)!);

export interface GeneratedDeals {
  rows: string[][];
  /** Rows the loader must refuse (1-based), each `invalid` in the results. */
  invalidRows: number[];
}

/**
 * `count` rows; every `invalidEvery`-th one is refused: a bad sample row, or (the
 * middle one) a valid row that repeats the first row's dealId. `tag` keeps the dealIds
 * of two calls apart.
 */
export function generateDeals(count: number, invalidEvery = 200, tag = 'X'): GeneratedDeals {
  const rows: string[][] = [];
  const invalidRows: number[] = [];
  for (let row = 1; row <= count; row++) {
    const refused = row % invalidEvery === 0;
    const source = refused ? BROKEN[(row / invalidEvery) % BROKEN.length]! : VALID[row % VALID.length]!;
    const copy = [...source];
    copy[DEAL_ID] = `${source[DEAL_ID]}-${tag}${String(row).padStart(5, '0')}`;
    if (refused && row === invalidEvery * Math.ceil(count / invalidEvery / 2)) {
      copy.splice(0, copy.length, ...VALID[0]!);
      copy[DEAL_ID] = rows[0]![DEAL_ID]!;
    }
    if (refused) invalidRows.push(row);
    rows.push(copy);
  }
  return { rows, invalidRows };
}

/** A registration's own columns, which a lift's file does not have. */
const AGREEMENT = new Set(['agreementContentId', 'agreementSignatureIds', 'agreementFileType']);
/** The columns of a lift file made from deals: the object and owners, and the record lifted. */
export const LIFT_HEADER = [...HEADER.filter((h) => !AGREEMENT.has(h)), 'recordNumber', 'recordDate'];

/**
 * The lifts of these deals (the same dealIds: a deal's lift is another entry of the ledger than
 * its registration), each naming a record of its own; a deal the load refuses stays refused.
 */
export function generateLifts(deals: readonly string[][]): string[][] {
  const kept = HEADER.map((h, i) => (AGREEMENT.has(h) ? -1 : i)).filter((i) => i >= 0);
  return deals.map((deal, i) => [...kept.map((c) => deal[c]!), `77-01/2021-${i + 1}`, '2021-03-04']);
}

export const EXTRACT_HEADER = ['dealId', 'cadastralNumber', 'extractType'];
const EXTRACT_TYPES = ['info', 'ownership', 'base'];

/** Extracts ordered for these deals (the same dealIds again), on the objects the deals name or find. */
export function generateExtracts(deals: readonly string[][], cadastralNumbers: readonly string[]): string[][] {
  return deals.map((deal, i) => [deal[DEAL_ID]!, cadastralNumbers[i % cadastralNumbers.length]!, EXTRACT_TYPES[i % EXTRACT_TYPES.length]!]);
}
