/** The reading flags of `run` and `load` (docs/input-format.md), and the batch id check. */
import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { parseEncodingFlag, type InputEncoding } from '../input/decode.js';
import { loadMapping } from '../input/mapping.js';
import { parseDelimiterFlag, parseFormatFlag, type InputFormat } from '../input/open-input.js';
import { BATCH_ID } from '../redis/keys.js';
import { DEFAULT_KIND, KIND_NAMES, kindNamed, readingColumns, type DocflowKind } from '../docflows/registry.js';

/** What `addInputOptions` puts in a command's `opts()`. */
export interface InputFlags {
  format?: InputFormat;
  encoding: InputEncoding | 'auto';
  delimiter?: string;
  mapping?: string;
  sheet?: string;
  rejects?: string;
  resubmit?: boolean;
  filesRoot?: string;
  type?: string;
  again?: boolean;
}

export function addInputOptions(cmd: Command): Command {
  return cmd
    .option('--format <csv|json|jsonl|xlsx>', 'input format; default from the extension', parseFormatFlag)
    .option('--encoding <auto|utf8|utf8-bom|windows-1251>', 'input encoding', parseEncodingFlag, 'auto')
    .option('--delimiter <auto|,|;|tab>', 'CSV delimiter', parseDelimiterFlag)
    .option('--mapping <map.json>', "a bank's own headers renamed to fields, and defaults")
    .option('--sheet <name>', 'an Excel workbook (.xlsx): the sheet to read; default the first')
    .option(
      '--rejects <file>',
      'where refused records go (input format, encoding, delimiter); default <file stem>.rejects.<ext> beside the input',
    )
    .option('--type <type>', `what every row files: ${KIND_NAMES}; default registration`)
    .option('--again', 'extracts: order again what was ordered today (each batch is an order of its own)')
    .option('--resubmit', 'send deals the ledger says were submitted before')
    .option(
      '--files-root <dir>',
      "rows' agreementFile and agreementSignatureFiles may be absolute paths, and may lie under <dir> (default: only inside the input's folder)",
    );
}

/** The reading options of the input functions, the mapping file read. */
export async function readingOptions(flags: InputFlags) {
  const type = docflowKind(flags.type);
  return {
    format: flags.format,
    encoding: flags.encoding === 'auto' ? undefined : flags.encoding,
    delimiter: flags.delimiter,
    mapping: flags.mapping ? await loadMapping(flags.mapping, type.columns) : undefined,
    ...(flags.sheet !== undefined && { sheet: flags.sheet }),
    rejects: flags.rejects,
    filesRoot: flags.filesRoot,
    ...type,
    ...(flags.again === true && { again: true }),
  };
}

/** `--type`: the rows' docflow type and the columns its input is read with (src/docflows/). */
function docflowKind(flag: string | undefined): { kind: DocflowKind; columns?: readonly string[] } {
  const kind = flag === undefined ? DEFAULT_KIND : kindNamed(flag);
  if (!kind) throw new UsageError(`--type ${JSON.stringify(flag)} is not a docflow type this version files: ${KIND_NAMES}.`);
  const columns = readingColumns(kind);
  return columns ? { kind, columns } : { kind };
}

/** A `--batch` (or `<batch>`) that cannot be a batch id is a usage error before anything connects. */
export function checkBatch(batch: string | undefined): void {
  if (batch !== undefined && !BATCH_ID.test(batch)) {
    throw new UsageError(`--batch ${JSON.stringify(batch)} is not a valid batch id: use letters, digits, '.', '_' or '-' (at most 80).`);
  }
}

/**
 * `<input stem>.results.csv` beside the input: where `run` writes its results, and `results`
 * without `--out` (in the working folder when the input's folder is not on this host).
 */
export function defaultResultsPath(input: string, kind = 'results'): string {
  const name = `${basename(input, extname(input))}.${kind}.csv`;
  return existsSync(dirname(input)) ? join(dirname(input), name) : name;
}
