/**
 * Files opened in LibreOffice headless, as a person opens them in a spreadsheet, and saved as
 * CSV "as shown": what the tests read back is the text the cells show. Each call has its own
 * LibreOffice profile, so calls may run side by side. Installed by scripts/prepare-tests.mjs
 * (Debian's libreoffice-calc-nogui); without it the test fails saying what to install.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';

const run = promisify(execFile);

/** How Russian Excel opens a CSV of ours: `;`, `"`, UTF-8 (76), from line 1. */
export const RUSSIAN_EXCEL_CSV = 'CSV:59,34,76,1';
/** Saved as CSV with `,`, `"`, UTF-8, every cell as it is shown (token 9). */
const AS_SHOWN = 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true';

export function sofficeMissing(): string | undefined {
  return spawnSync('sh', ['-c', 'command -v soffice'], { stdio: 'ignore' }).status === 0
    ? undefined
    : 'soffice (LibreOffice) is not installed: run `npm test` (its preparation installs it) or `sudo apt-get install -y libreoffice-calc-nogui`.';
}

/**
 * `file` opened in LibreOffice (a CSV read with `infilter`, a workbook as it is) and saved with
 * the filter `to` into `outDir`, with a LibreOffice profile of its own: the saved file's path.
 */
async function convert(file: string, to: string, outDir: string, infilter?: string): Promise<string> {
  const missing = sofficeMissing();
  if (missing) throw new Error(missing);
  const work = await mkdtemp(join(tmpdir(), 'realty-batch-soffice-'));
  try {
    const args = [
      `-env:UserInstallation=${pathToFileURL(join(work, 'profile')).href}`,
      '--headless',
      '--norestore',
      ...(infilter ? [`--infilter=${infilter}`] : []),
      '--convert-to',
      to,
      '--outdir',
      outDir,
      file,
    ];
    await run('soffice', args, { timeout: 120_000 });
    return join(outDir, `${basename(file, extname(file))}.${to.split(':')[0]}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * `file` opened in LibreOffice (a CSV read with `infilter`, a workbook as it is) and its first
 * sheet's cells as shown, row by row.
 */
export async function cellsAsShown(file: string, infilter?: string): Promise<string[][]> {
  const out = await mkdtemp(join(tmpdir(), 'realty-batch-soffice-out-'));
  try {
    const text = await readFile(await convert(file, AS_SHOWN, out, infilter), 'utf8');
    return parse(text, { relax_column_count: true }) as string[][];
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/**
 * `file` (a workbook) opened in LibreOffice and saved again as `.xlsx` ("Calc MS Excel 2007
 * XML"), as a person who opened the bank's export and pressed Save would: the new file, in `dir`.
 */
export function savedAsXlsx(file: string, dir: string): Promise<string> {
  return convert(file, 'xlsx:Calc MS Excel 2007 XML', dir);
}
