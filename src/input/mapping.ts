/**
 * `--mapping map.json`: a bank's own headers renamed to canonical fields, one combined
 * address column, defaults for empty fields, and a bank's own words for a field's values
 * (docs/input-format.md, "The column mapping file").
 */
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import { ConfigError } from '../errors.js';
import { canonicalFieldName, type CanonicalField } from './fields.js';
import { OWN_COLUMN_HEADERS_RU } from './own-columns.js';
import { ENUMERATION_VALUES, valueKey } from './value-words.js';

/**
 * What a header may be read as: a canonical field, `address` (one cell with the whole address
 * of the property, src/input/address-line.ts splits it into the fields), or one of the docflow
 * type's own columns (src/docflows/: a lift's `recordNumber`).
 */
export type MappedField = string;
export const ADDRESS_LINE = 'address';

export interface Mapping {
  /** Trimmed, lower-cased header → canonical field (or the combined address). */
  readonly columns: ReadonlyMap<string, MappedField>;
  readonly defaults: Readonly<Partial<Record<CanonicalField, string>>>;
  /**
   * Field → a bank's word (as `valueKey` reads it) → the value it means. A field `owner*`'s
   * words are `owner2*`'s too, unless the mapping gives `owner2*` words of its own. Optional:
   * a mapping without values (or one a batch stored before values existed) has none.
   */
  readonly values?: ReadonlyMap<CanonicalField, ReadonlyMap<string, string>>;
}

/**
 * Columns a file of ours carries before the data (the rejects file's `row` and `errors`,
 * the attention file's `row`, `outcome`, `hint` and `errors`; older files had the last
 * three after it), by their English names and by the Russian ones `--lang ru` writes
 * (own-columns.ts): wherever they stand, ignored on input, never read as a deal field
 * (not even through the mapping), never listed as unknown. Lower-cased, as `headerKey` reads.
 */
export const OWN_COLUMNS: ReadonlySet<string> = new Set(
  Object.entries(OWN_COLUMN_HEADERS_RU).flatMap(([name, russian]) => [name.toLowerCase(), russian.toLowerCase()]),
);

const mappingSchema = z.strictObject({
  columns: z.record(z.string(), z.string()).default({}),
  address: z.string().optional(),
  defaults: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
  values: z.record(z.string(), z.record(z.string(), z.string())).default({}),
});

export const headerKey = (header: string): string => header.trim().toLowerCase();

export function parseMapping(json: unknown, file: string, typeColumns: readonly string[] = []): Mapping {
  const parsed = mappingSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(top level)'} ${i.message}`).join('; ');
    throw new ConfigError(
      `The mapping ${file} is not valid: ${issues}. Expected {"columns": {"header": "field"}, "address": "header", "defaults": {"field": "value"}, "values": {"field": {"their word": "value"}}}.`,
    );
  }
  const problems: string[] = [];
  const columns = new Map<string, MappedField>();
  for (const [header, target] of Object.entries(parsed.data.columns)) {
    const field =
      headerKey(target) === ADDRESS_LINE
        ? ADDRESS_LINE
        : (canonicalFieldName(target) ?? typeColumns.find((column) => column.toLowerCase() === headerKey(target)));
    if (field) columns.set(headerKey(header), field);
    else problems.push(`columns.${header}: ${JSON.stringify(target)} is not a deal field (docs/input-format.md lists them)`);
  }
  if (parsed.data.address !== undefined) columns.set(headerKey(parsed.data.address), ADDRESS_LINE);
  const defaults: Partial<Record<CanonicalField, string>> = {};
  for (const [name, value] of Object.entries(parsed.data.defaults)) {
    const field = canonicalFieldName(name);
    if (field) defaults[field] = String(value);
    else problems.push(`defaults.${name}: not a deal field (docs/input-format.md lists them)`);
  }
  const values = parseValues(parsed.data.values, problems);
  if (problems.length > 0) throw new ConfigError(`The mapping ${file} is not valid: ${problems.join('; ')}.`);
  return values.size > 0 ? { columns, defaults, values } : { columns, defaults };
}

/** `values`: field → their word → our value; the value of an enumeration must be one of its values. */
function parseValues(json: Record<string, Record<string, string>>, problems: string[]): Map<CanonicalField, Map<string, string>> {
  const values = new Map<CanonicalField, Map<string, string>>();
  for (const [name, words] of Object.entries(json)) {
    const field = canonicalFieldName(name);
    if (!field) {
      problems.push(`values.${name}: not a deal field (docs/input-format.md lists them)`);
      continue;
    }
    const accepted = ENUMERATION_VALUES[field];
    const map = new Map<string, string>();
    for (const [word, value] of Object.entries(words)) {
      const known = accepted ? accepted.find((v) => v.toLowerCase() === value.trim().toLowerCase()) : value;
      if (known === undefined) problems.push(`values.${name}.${word}: ${JSON.stringify(value)} is not one of ${accepted!.join(', ')}`);
      else map.set(valueKey(word), known);
    }
    values.set(field, map);
  }
  for (const [field, map] of [...values]) {
    const spouse =
      field.startsWith('owner') && !field.startsWith('owner2') ? (`owner2${field.slice('owner'.length)}` as CanonicalField) : undefined;
    if (spouse && !values.has(spouse)) values.set(spouse, map);
  }
  return values;
}

/** `typeColumns`: the docflow type's own columns (src/docflows/), which its mapping may name too. */
export async function loadMapping(file: string, typeColumns: readonly string[] = []): Promise<Mapping> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`The mapping ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}).`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new ConfigError(`The mapping ${file} is not valid JSON (${(err as Error).message}).`, { cause: err });
  }
  return parseMapping(json, file, typeColumns);
}

/** The field a header names: the mapping first, then the canonical names, then the docflow type's own columns. */
export function resolveHeader(header: string, mapping?: Mapping, columns?: readonly string[]): string | undefined {
  const mapped = mapping?.columns.get(headerKey(header)) ?? canonicalFieldName(header);
  if (mapped !== undefined || !columns) return mapped;
  const key = headerKey(header);
  return columns.find((column) => column.toLowerCase() === key);
}

/**
 * Fills the mapping's defaults into fields that are absent or empty, and puts our value for a
 * bank's word it maps (`"Жилое помещение"` → `flat`): the validator then reads our values.
 */
export function applyDefaults(fields: Record<string, string>, mapping?: Mapping): void {
  if (!mapping) return;
  for (const [field, value] of Object.entries(mapping.defaults)) {
    if (!fields[field]?.trim()) fields[field] = value;
  }
  if (!mapping.values) return;
  for (const [field, words] of mapping.values) {
    const value = fields[field];
    if (value === undefined || value.trim() === '') continue;
    const ours = words.get(valueKey(value));
    if (ours !== undefined) fields[field] = ours;
  }
}
