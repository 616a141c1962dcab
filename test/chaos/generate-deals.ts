/**
 * Many deals made from the sample rows (samples/deals.csv): the same people, checksums
 * and addresses under new unique dealIds, so every valid one can reach the registry.
 */
import { HEADER, ROWS } from '../helpers/fixtures.js';

/** Valid sample rows that find their cadastral number through suggest (samples/README.md). */
const RESOLVING = [
  'NSK-2026-000123',
  'NSK-2026-000124',
  'SPB-2026-010077',
  'MSK-2026-004512',
  'EKB-2026-000311',
  'KZN-2026-000051',
  'MSK-2026-004513',
  'MSK-2026-004514',
  'NSK-2026-000128',
];
/** Sample rows that fail validation whatever their dealId: a SNILS checksum; an empty birth place and 31.02. */
const INVALID = ['NSK-2026-000127', 'SPB-2026-010079'];

const DEAL_ID = HEADER.indexOf('dealId');
const CADASTRAL = HEADER.indexOf('cadastralNumber');

/** The first occurrence of each sample dealId (a later repeat is refused as a duplicate). */
const FIRST = ROWS.filter((r, i) => ROWS.findIndex((o) => o[DEAL_ID] === r[DEAL_ID]) === i);
const VALID = FIRST.filter((r) => !INVALID.includes(r[DEAL_ID]!) && (r[CADASTRAL] !== '' || RESOLVING.includes(r[DEAL_ID]!)));
const BROKEN = INVALID.map((id) => FIRST.find((r) => r[DEAL_ID] === id)!);

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
