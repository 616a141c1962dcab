/**
 * The bank profile (docs/input-format.md, "The bank profile file"): the encumbrancer and its
 * representative, the same for every deal of a run. Validated like a row, with
 * every problem named by its JSON path (`organization.inn`).
 */
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import { ProfileError } from '../errors.js';
import type { Address, Organization, Person } from '../domain/gateway.js';
import { isValidInn, isValidKpp, isValidOgrn, isValidOgrnip } from './checksums.js';
import { APARTMENT_TYPES, DOC_TYPES } from '../domain/deal.js';
import type { AppliedDocument, FieldProblem } from '../domain/deal.js';
import {
  MESSAGES,
  convert,
  gender,
  issuerCode,
  localIsoDate,
  oneOf,
  parseField,
  passportNumber,
  passportSeries,
  pastDate,
  problem,
  snils,
  text,
  uuid,
} from './field-checks.js';
import type { Field } from './field-checks.js';

export interface BankProfile {
  organization: Organization;
  representative: { representativeType: string; person: Person; attorney?: ProfileAttorney };
  /** The bank's results files in the form Russian Excel opens (as `--excel`), unless `--no-excel`. */
  excel?: boolean;
}

/**
 * The representative's power of attorney, a lift sends it (docs/input-format.md): by the content
 * ids of its upload, or by its file and signatures' files (paths relative to the profile), which
 * the load checks and a worker uploads once a batch.
 */
export type ProfileAttorney = AppliedDocument;

export interface ProfileOptions {
  /** The day against which "not in the future" is checked; default: now. */
  today?: Date;
}

export type ProfileParse = { ok: true; profile: BankProfile } | { ok: false; problems: FieldProblem[] };

const missingOr =
  (expected: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined || issue.input === null ? MESSAGES.required : `must be ${expected}`;

/** A JSON string, trimmed; empty counts as absent. */
const jsonString = z.string({ error: missingOr('a string') }).transform((value) => value.trim());

function required<T>(field: Field<T>) {
  return jsonString.pipe(z.string().min(1, MESSAGES.required)).pipe(field.schema);
}

function optional<T>(field: Field<T>) {
  return jsonString
    .optional()
    .transform((value) => (value === '' ? undefined : value))
    .pipe(field.schema.optional());
}

function withDefault<T>(field: Field<T>, fallback: T) {
  return optional(field).transform((value) => value ?? fallback);
}

function object<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.object(shape, { error: missingOr('an object') });
}

const inn10 = convert((value) => {
  if (!/^\d{10}$/.test(value)) return problem('must be 10 digits');
  return isValidInn(value) ? value : problem(MESSAGES.checksum);
});
const kpp = convert((value) =>
  isValidKpp(value) ? value : problem('must be 9 characters: 4 digits, 2 digits or capital Latin letters, 3 digits'),
);
const ogrn = convert((value) => {
  if (/^\d{13}$/.test(value)) return isValidOgrn(value) ? value : problem(MESSAGES.checksum);
  if (/^\d{15}$/.test(value)) return isValidOgrnip(value) ? value : problem(MESSAGES.checksum);
  return problem('must be 13 digits (OGRN) or 15 digits (OGRNIP)');
});

const named = (abbreviation: string) => object({ name: required(text), abbreviation: withDefault(text, abbreviation) });
const apartment = object({ type: withDefault(oneOf(APARTMENT_TYPES), 'кв'), name: required(text) });

const address = object({
  fiasId: optional(uuid),
  apartment: apartment.optional(),
  region: optional(text),
  city: named('г').optional(),
  street: named('ул').optional(),
  house: object({ name: required(text), type: withDefault(text, 'д') }).optional(),
}).transform((a, ctx): Address => {
  if (a.fiasId !== undefined) return { fiasId: a.fiasId, ...(a.apartment && { apartment: a.apartment }) };
  if (a.region !== undefined) return { ...a, region: a.region };
  ctx.addIssue({ code: 'custom', message: 'is required: fiasId, or region' });
  return z.NEVER;
});

const isString = (value: unknown): value is string => typeof value === 'string';
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * Cross-field checks run on an object even when a sibling field failed, so that every
 * problem is listed; they must then read their fields defensively.
 */
const evenWithSiblingProblems = { when: (payload: { value: unknown }) => isObject(payload.value) };

function createPersonSchema(date: Field<string>) {
  const identityDocument = object({
    documentType: withDefault(oneOf(DOC_TYPES), 'russPassport'),
    type: optional(text),
    series: optional(text),
    number: required(text),
    issueDate: required(date),
    issuer: object({ code: optional(issuerCode), name: required(text) }),
  })
    .superRefine((doc, ctx) => {
      // Series and number have a fixed form only for a Russian passport.
      if (doc.documentType !== 'russPassport') return;
      if (doc.series === undefined) ctx.addIssue({ code: 'custom', path: ['series'], message: MESSAGES.required });
      for (const [key, schema] of [
        ['series', passportSeries],
        ['number', passportNumber],
      ] as const) {
        const value = doc[key];
        const result = isString(value) ? parseField(schema, value) : undefined;
        if (result?.ok === false) ctx.addIssue({ code: 'custom', path: [key], message: result.message });
      }
    }, evenWithSiblingProblems)
    .transform((doc) =>
      doc.documentType === 'russPassport' ? { ...doc, series: doc.series?.replace(/\s/g, ''), number: doc.number.replace(/\s/g, '') } : doc,
    );

  return object({
    surname: required(text),
    name: required(text),
    patronymic: optional(text),
    dateBirth: required(date),
    birthPlace: required(text),
    snils: required(snils),
    gender: required(gender),
    identityDocument,
    citizenship: withDefault(text, 'Российская Федерация'),
    address,
  }).superRefine((person, ctx) => {
    const birth = isString(person.dateBirth) ? parseField(date, person.dateBirth) : undefined;
    const issue = isString(person.identityDocument?.issueDate) ? parseField(date, person.identityDocument.issueDate) : undefined;
    if (birth?.ok && issue?.ok && issue.value < birth.value) {
      ctx.addIssue({ code: 'custom', path: ['identityDocument', 'issueDate'], message: 'must not be before dateBirth' });
    }
  }, evenWithSiblingProblems);
}

function createProfileSchema(today: Date): z.ZodType<BankProfile> {
  const date = pastDate(localIsoDate(today));
  return object({
    organization: object({
      name: required(text),
      inn: required(inn10),
      kpp: required(kpp),
      ogrn: required(ogrn),
      regDate: required(date),
      address,
    }),
    representative: object({
      representativeType: withDefault(text, 'authorized'),
      person: createPersonSchema(date),
      attorney: object({
        contentId: optional(uuid),
        signatureIds: z.array(required(uuid), { error: 'must be an array of content ids' }).optional(),
        fileType: withDefault(oneOf(['pdf', 'xml'] as const), 'pdf'),
        file: optional(text),
        signatureFiles: z.array(required(text), { error: 'must be an array of paths' }).optional(),
      })
        .superRefine((a, ctx) => {
          if ((a.contentId === undefined) === (a.file === undefined))
            ctx.addIssue({ code: 'custom', message: 'needs contentId (an upload) or file (a path beside the profile), one of them' });
          if (a.file !== undefined && a.signatureIds !== undefined)
            ctx.addIssue({
              code: 'custom',
              path: ['signatureIds'],
              message: 'must be empty when file is given: signatureFiles name its signatures',
            });
        }, evenWithSiblingProblems)
        .transform((a): ProfileAttorney => ({
          ...(a.contentId !== undefined && { contentId: a.contentId }),
          signatureIds: a.signatureIds ?? [],
          fileType: a.fileType,
          ...(a.file !== undefined && { file: { path: a.file } }),
          ...(a.signatureFiles && { signatureFiles: a.signatureFiles.map((path) => ({ path })) }),
        }))
        .optional(),
    }),
    excel: z.boolean({ error: 'must be true or false' }).optional(),
  });
}

/** Validates a parsed profile; unknown extra fields are allowed and dropped. */
export function parseProfile(json: unknown, options: ProfileOptions = {}): ProfileParse {
  const result = createProfileSchema(options.today ?? new Date()).safeParse(json);
  if (result.success) return { ok: true, profile: result.data };
  return {
    ok: false,
    problems: result.error.issues.map((issue) => ({
      field: issue.path.length > 0 ? issue.path.join('.') : '(profile)',
      message: issue.message,
    })),
  };
}

/** Reads and validates the profile file; throws `ProfileError` with every problem when it cannot be used. */
export async function loadProfile(file: string, options: ProfileOptions = {}): Promise<BankProfile> {
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ProfileError(file, [{ field: '(file)', message: `cannot be read${code ? ` (${code})` : ''}` }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(content.replace(/^\uFEFF/, ''));
  } catch {
    // V8's message quotes the text around the error, which may be personal data.
    throw new ProfileError(file, [{ field: '(file)', message: 'is not valid JSON' }]);
  }
  const result = parseProfile(json, options);
  if (!result.ok) throw new ProfileError(file, result.problems);
  return result.profile;
}
