/** `realty-batch documents <batch> --dir <d>`: the registry's result files of every completed docflow of a batch. */
import { InvalidArgumentError, type Command } from 'commander';
import { downloadDocuments } from '../../results/documents.js';
import { registerBatchFilesCommand } from '../batch-gateway.js';
import type { CliContext } from '../common.js';
import { createProgress } from '../progress.js';

export function registerDocumentsCommand(program: Command, context: CliContext): Command {
  const spec = {
    name: 'documents',
    description:
      'download the result files (the extract and its signatures) of every completed docflow of a batch to <dir>/<dealId>/, with manifest.csv; run again, it downloads only what is missing',
    dir: 'where the files go: <dir>/<dealId>/<fileId>.<ext> and <dir>/manifest.csv',
    stopping: 'stopping after the files being downloaded',
  };
  const command: Command = registerBatchFilesCommand(program, context, spec, async (options, env) => {
    const { manifest } = command.opts<{ manifest?: string }>();
    const progress = createProgress('documents', { unit: 'rows', logger: env.logger });
    try {
      const summary = await downloadDocuments({
        ...options,
        ...(manifest !== undefined && { manifestCopy: manifest }),
        onProgress: ({ done, docflows, downloaded }) => progress.update({ value: done, total: docflows, rows: downloaded }),
      });
      progress.stop();
      const mb = (summary.bytes / 1024 / 1024).toFixed(1);
      console.log(
        `documents: ${summary.docflows} completed docflows; ${summary.downloaded} files downloaded (${mb} MB), ${summary.skipped} already there; manifest ${summary.manifest}${manifest !== undefined ? ` (a copy for a person: ${manifest})` : ''}`,
      );
      for (const f of summary.failed) console.log(`  ${f.dealId} (docflow ${f.docflowId}): not downloaded: ${f.reason}`);
      if (summary.failed.length > 0) {
        console.log(`  run realty-batch documents ${options.batch} --dir ${options.dir} again to try them again`);
        context.setExitCode(3);
      }
    } finally {
      progress.stop();
    }
  });
  return command.option(
    '--manifest <file>',
    "also write the manifest for a person to <file>: an Excel workbook when it ends in .xlsx (ids as text cells), else a CSV in Russian Excel's form",
    manifestPath,
  );
}

/** `--manifest`: a workbook or a CSV, named so. */
function manifestPath(value: string): string {
  if (!/\.(xlsx|csv)$/i.test(value)) throw new InvalidArgumentError('--manifest must name a .xlsx or .csv file.');
  return value;
}
