/**
 * A lift's own columns (docs/input-format.md, "Lifts"): the registry's record of the mortgage
 * it lifts and the bank's further documents. The object and owner columns are a registration's.
 */
import type { AppliedDocument } from '../../domain/deal.js';
import { convert, oneOf, problem, text } from '../../input/field-checks.js';
import type { RecordReader } from '../../input/record-reader.js';
import type { OwnColumns } from '../../input/validate-deal.js';
import { ENCUMBRANCE_TYPES, type LiftFields, type LiftOwn } from './fields.js';

export const LIFT_COLUMNS = ['encumbranceType', 'recordNumber', 'recordDate', 'otherDocumentFiles'] as const;

const encumbranceType = oneOf(ENCUMBRANCE_TYPES);

/** Paths separated by `|` (a path may hold a comma or a space); a `.sig` among them is a signature, not a document. */
const documentPaths = convert((value) => {
  const paths = value
    .split('|')
    .map((path) => path.trim())
    .filter((path) => path !== '');
  if (paths.length === 0) return problem('must name files separated by |');
  const signature = paths.find((path) => /\.sig$/i.test(path));
  return signature === undefined
    ? paths
    : problem(`names a signature (${paths.indexOf(signature) + 1}): a document's .sig beside it is found on its own`);
});

export const liftColumns: OwnColumns<LiftOwn> = {
  read(r: RecordReader, { date }): LiftOwn {
    const before = r.problems.length;
    const lift = {
      encumbranceType: r.withDefault('encumbranceType', encumbranceType, 'mortgage'),
      recordNumber: r.required('recordNumber', text),
      recordDate: r.required('recordDate', date),
      documents: (r.optional('otherDocumentFiles', documentPaths) ?? []).map((path): AppliedDocument => ({
        signatureIds: [],
        fileType: 'pdf',
        file: { path },
        signatureBeside: true,
      })),
    };
    if (r.problems.length > before) return {};
    return { lift: lift as LiftFields };
  },
};
