/**
 * `--mapping map.json`: a bank's own headers renamed to canonical fields, and
 * defaults for empty fields (docs/input-format.md, "The column mapping file").
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { canonicalFieldName, type CanonicalField } from './fields.js';

export interface Mapping {
  /** Trimmed, lower-cased header → canonical field. */
  readonly columns: ReadonlyMap<string, CanonicalField>;
  readonly defaults: Readonly<Partial<Record<CanonicalField, string>>>;
}

/**
 * Columns a file of ours carries before the data (the rejects file's `row` and `errors`,
 * the attention file's `row`, `outcome`, `hint` and `errors`; older files had the last
 * three after it): wherever they stand, ignored on input, never read as a deal field
 * (not even through the mapping), never listed as unknown.
 */
export const OWN_COLUMNS: ReadonlySet<string> = new Set(['row', 'outcome', 'hint', 'errors']);

const mappingSchema = z.strictObject({
  columns: z.record(z.string(), z.string()).default({}),
  defaults: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
});

export const headerKey = (header: string): string => header.trim().toLowerCase();

export function parseMapping(json: unknown, file: string): Mapping {
  const parsed = mappingSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(top level)'} ${i.message}`).join('; ');
    throw new ConfigError(
      `The mapping ${file} is not valid: ${issues}. Expected {"columns": {"header": "field"}, "defaults": {"field": "value"}}.`,
    );
  }
  const problems: string[] = [];
  const columns = new Map<string, CanonicalField>();
  for (const [header, target] of Object.entries(parsed.data.columns)) {
    const field = canonicalFieldName(target);
    if (field) columns.set(headerKey(header), field);
    else problems.push(`columns.${header}: ${JSON.stringify(target)} is not a deal field (docs/input-format.md lists them)`);
  }
  const defaults: Partial<Record<CanonicalField, string>> = {};
  for (const [name, value] of Object.entries(parsed.data.defaults)) {
    const field = canonicalFieldName(name);
    if (field) defaults[field] = String(value);
    else problems.push(`defaults.${name}: not a deal field (docs/input-format.md lists them)`);
  }
  if (problems.length > 0) throw new ConfigError(`The mapping ${file} is not valid: ${problems.join('; ')}.`);
  return { columns, defaults };
}

export async function loadMapping(file: string): Promise<Mapping> {
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
  return parseMapping(json, file);
}

/** The canonical field a header names: the mapping first, then the canonical names themselves. */
export function resolveHeader(header: string, mapping?: Mapping): CanonicalField | undefined {
  return mapping?.columns.get(headerKey(header)) ?? canonicalFieldName(header);
}

/** Fills the mapping's defaults into fields that are absent or empty. */
export function applyDefaults(fields: Record<string, string>, mapping?: Mapping): void {
  if (!mapping) return;
  for (const [field, value] of Object.entries(mapping.defaults)) {
    if (!fields[field]?.trim()) fields[field] = value;
  }
}
