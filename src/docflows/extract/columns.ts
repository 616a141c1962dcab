/**
 * An extract's row (docs/input-format.md, "Extracts"): the object, by its cadastral number or
 * its address (suggest finds the number as for a registration), and which extract. No owners:
 * an extract is ordered on the object alone.
 */
import { EXTRACT_TYPES, type Deal } from '../../domain/deal.js';
import { oneOf } from '../../input/field-checks.js';
import type { OwnColumns } from '../../input/validate-deal.js';

export const EXTRACT_COLUMNS = ['extractType'] as const;

const extractType = oneOf(EXTRACT_TYPES);

export const extractColumns: OwnColumns = {
  owners: false,
  addressOptional: true,
  read(r, { order }): Partial<Deal> {
    const type = r.withDefault('extractType', extractType, 'info');
    return type === undefined ? {} : { extract: { extractType: type, order } };
  },
};
