/** `realty-batch documents <batch> --dir <d>`: the registry's result files of every completed docflow of a batch. */
import type { Command } from 'commander';
import { downloadDocuments } from '../../results/documents.js';
import { registerBatchFilesCommand } from '../batch-files-command.js';
import type { CliContext } from '../environment.js';
import { createProgress } from '../progress.js';

export function registerDocumentsCommand(program: Command, context: CliContext): Command {
  const spec = {
    name: 'documents',
    description:
      'download the result files (the extract and its signatures) of every completed docflow of a batch to <dir>/<dealId>/, with manifest.csv; run again, it downloads only what is missing',
    dir: 'where the files go: <dir>/<dealId>/<fileId>.<ext> and <dir>/manifest.csv',
    stopping: 'stopping after the files being downloaded',
    manifest: true,
  };
  return registerBatchFilesCommand(program, context, spec, async (options, env) => {
    const manifest = options.manifestCopy;
    const progress = createProgress('documents', { unit: 'rows', logger: env.logger });
    try {
      const summary = await downloadDocuments({
        ...options,
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
}
