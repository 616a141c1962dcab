/**
 * How an input was read (format, encoding, delimiter, mapping), as a string the
 * batch keeps: it names the batch's fingerprint, and lets the attention file and
 * retries read the same input the same way later.
 */
import { createHash } from 'node:crypto';
import { InputError } from '../errors.js';
import { fileSha256 } from './file-hash.js';
import type { InputEncoding } from './decode.js';
import type { CanonicalField } from './fields.js';
import type { Mapping, MappedField } from './mapping.js';
import { openInput, type InputFile, type InputFormat } from './open-input.js';

export interface ReadingOptions {
  format?: InputFormat | undefined;
  encoding?: InputEncoding | undefined;
  delimiter?: string | undefined;
  mapping?: Mapping | undefined;
  /** xlsx: the sheet read (undefined: the first). */
  sheet?: string | undefined;
  /** The docflow type's own columns (src/docflows/) its rows were read with; undefined: a registration's. */
  columns?: readonly string[] | undefined;
  /** `--again`: extracts ordered again on purpose, the batch their order (src/docflows/extract/). */
  again?: boolean | undefined;
}

interface StoredReading {
  format: InputFormat | null;
  encoding: InputEncoding | null;
  delimiter: string | null;
  mapping: {
    columns: Array<[string, MappedField]>;
    defaults: Partial<Record<CanonicalField, string>>;
    /** Only when the mapping has any: a mapping without them keeps the fingerprint it had before they existed. */
    values?: Array<[CanonicalField, Array<[string, string]>]>;
  } | null;
  /** Only when given: a reading stored before workbooks were read keeps its form, and its fingerprint. */
  sheet?: string;
  /** Only for a type other than a registration: the same file read as lifts is another batch. */
  columns?: string[];
  /** Only when given: the same extracts ordered again are another batch. */
  again?: true;
}

function storedMapping(mapping: Mapping): NonNullable<StoredReading['mapping']> {
  const stored: NonNullable<StoredReading['mapping']> = {
    columns: [...mapping.columns.entries()].sort(),
    defaults: { ...mapping.defaults },
  };
  if (mapping.values && mapping.values.size > 0)
    stored.values = [...mapping.values.entries()]
      .map(([field, words]): [CanonicalField, Array<[string, string]>] => [field, [...words.entries()].sort()])
      .sort();
  return stored;
}

export function serializeReading(r: ReadingOptions): string {
  const stored: StoredReading = {
    format: r.format ?? null,
    encoding: r.encoding ?? null,
    delimiter: r.delimiter ?? null,
    mapping: r.mapping ? storedMapping(r.mapping) : null,
    ...(r.sheet !== undefined && { sheet: r.sheet }),
    ...(r.columns !== undefined && { columns: [...r.columns] }),
    ...(r.again === true && { again: true as const }),
  };
  return JSON.stringify(stored);
}

export function parseReading(text: string | undefined): ReadingOptions {
  const stored = JSON.parse(text || '{}') as Partial<StoredReading>;
  const options: ReadingOptions = {};
  if (stored.format) options.format = stored.format;
  if (stored.encoding) options.encoding = stored.encoding;
  if (stored.delimiter) options.delimiter = stored.delimiter;
  if (stored.sheet !== undefined) options.sheet = stored.sheet;
  if (stored.columns !== undefined) options.columns = stored.columns;
  if (stored.again === true) options.again = true;
  if (stored.mapping) {
    const { columns, defaults, values } = stored.mapping;
    options.mapping = {
      columns: new Map(columns),
      defaults,
      ...(values && { values: new Map(values.map(([field, words]) => [field, new Map(words)])) }),
    };
  }
  return options;
}

const NO_OPTIONS = serializeReading({});

/**
 * The file's sha256 combined with the reading options asked for: the same bytes
 * read with another mapping or encoding are other rows, so another batch.
 * Without options it is the file's own sha256.
 */
export async function inputFingerprint(file: string, reading: ReadingOptions): Promise<string> {
  const sha = await fileSha256(file);
  const options = serializeReading(reading);
  return options === NO_OPTIONS ? sha : createHash('sha256').update(`${sha}\n${options}`).digest('hex');
}

/**
 * A batch's input opened again, read as it was when loaded, after checking it is
 * still the same (the fingerprint): rows are joined to outcomes by position.
 */
export async function reopenInput(
  batch: { id: string; file: string; fingerprint: string; reading?: string },
  file = batch.file,
): Promise<InputFile> {
  const reading = parseReading(batch.reading);
  const now = await inputFingerprint(file, reading).catch((err: unknown) => {
    throw new InputError(
      `The input of batch ${batch.id} (${file}) cannot be read any more (${(err as Error).message}); give it with --input.`,
      { cause: err },
    );
  });
  if (now !== batch.fingerprint) {
    throw new InputError(
      `${file} is not the input batch ${batch.id} was loaded from (its content differs); give the original with --input.`,
    );
  }
  return openInput(file, reading);
}
