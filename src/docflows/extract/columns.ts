/**
 * An extract's row (docs/input-format.md, "Extracts"): the object, by its cadastral number or
 * its address (suggest finds the number as for a registration), and which extract. No owners:
 * an extract is ordered on the object alone.
 */
import { oneOf } from '../../input/field-checks.js';
import type { OwnColumns } from '../../input/validate-deal.js';
import { EXTRACT_TYPES, type ExtractOwn } from './fields.js';

export const EXTRACT_COLUMNS = ['extractType'] as const;

const extractType = oneOf(EXTRACT_TYPES);

export const extractColumns: OwnColumns<ExtractOwn> = {
  owners: false,
  addressOptional: true,
  read(r, { order }): ExtractOwn {
    const type = r.withDefault('extractType', extractType, 'info');
    return type === undefined ? {} : { extract: { extractType: type, order } };
  },
};
