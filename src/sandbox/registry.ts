/**
 * The cadastral objects suggest answers from, and the mortgage records the registry holds
 * on them: loaded from a JSON file (or given as an array), validated entry by entry so a
 * typo names its file and index.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { packageRoot } from '../files/package-root.js';
import { isCalendarDate } from './docflow-validation.js';

export const ENCUMBRANCE_TYPES = ['mortgage', 'mortgageInLaw'] as const;
export type EncumbranceType = (typeof ENCUMBRANCE_TYPES)[number];

/** A mortgage the registry holds on an object: what a lift must name (its number and date) and whose it is. */
export interface EncumbranceRecord {
  number: string;
  /** YYYY-MM-DD. */
  date: string;
  type: EncumbranceType;
  /** The encumbrancer's (the bank's) INN. */
  encumbrancerInn: string;
}

/** The contract's suggest response fields, plus the level names used only for matching. */
export interface RegistryObject {
  objectId: string;
  subjectId: number;
  regionId: number;
  settlementId: number;
  srcObject: number;
  regionKey: number;
  objectCn: string;
  /** `NAME|ABBR`, e.g. `ТАТЬЯНЫ СНЕЖИНОЙ|УЛ`. */
  street: string;
  /** `number|building|structure`, empty parts kept: `39||`. */
  house: string;
  apartment: string;
  addressNotes: string;
  region: string;
  autonomousCounty?: string;
  district?: string;
  city?: string;
  settlement?: string;
  /** The mortgages registered on the object (none when absent). */
  encumbrances?: EncumbranceRecord[];
}

const encumbranceSchema = z.object({
  number: z.string().trim().min(1),
  date: z.string().refine(isCalendarDate, 'expected a real date as YYYY-MM-DD'),
  type: z.enum(ENCUMBRANCE_TYPES),
  // A bank is an organization (10 digits); 12 is an individual entrepreneur's.
  encumbrancerInn: z.string().regex(/^(\d{10}|\d{12})$/, 'expected an INN of 10 or 12 digits'),
});

/** Ids are 12-digit integers: `int()` keeps them exact and refuses anything coerced. */
const registryObjectSchema = z.object({
  objectId: z.string().min(1),
  subjectId: z.number().int(),
  regionId: z.number().int(),
  settlementId: z.number().int(),
  srcObject: z.number().int(),
  regionKey: z.number().int(),
  objectCn: z.string().min(1),
  street: z.string().regex(/^[^|]*\|[^|]*$/, 'expected "NAME|ABBR"'),
  house: z.string().regex(/^[^|]*\|[^|]*\|[^|]*$/, 'expected "number|building|structure"'),
  apartment: z.string(),
  addressNotes: z.string(),
  region: z.string().trim().min(1),
  autonomousCounty: z.string().optional(),
  district: z.string().optional(),
  city: z.string().optional(),
  settlement: z.string().optional(),
  encumbrances: z
    .array(encumbranceSchema)
    .refine((records) => new Set(records.map((r) => r.number)).size === records.length, 'two records have the same number')
    .optional(),
});

/** Checks every entry; `source` names where the entries came from in the error message. */
export function validateRegistry(entries: unknown, source: string): RegistryObject[] {
  if (!Array.isArray(entries)) {
    throw new Error(`Registry ${source} must be a JSON array of cadastral objects.`);
  }
  return entries.map((entry: unknown, index) => {
    const result = registryObjectSchema.safeParse(entry);
    if (!result.success) {
      const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(entry)'}: ${issue.message}`).join('; ');
      throw new Error(`Registry ${source}: entry ${index} is not valid (${problems}).`);
    }
    return result.data;
  });
}

export async function loadRegistry(file: string): Promise<RegistryObject[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : 'cannot be read';
    throw new Error(`Registry file ${file} ${reason}.`, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new Error(`Registry file ${file} is not valid JSON: ${(err as Error).message}.`, { cause: err });
  }
  return validateRegistry(parsed, `file ${file}`);
}

/** samples/registry.json of this package, wherever it runs from (src, dist/src, an installed package). */
export function defaultRegistryPath(): string {
  return join(packageRoot(), 'samples', 'registry.json');
}
