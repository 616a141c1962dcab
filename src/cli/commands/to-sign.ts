/** `realty-batch to-sign <batch> --dir <d>`: the application files every docflow of a batch waits to have signed. */
import type { Command } from 'commander';
import { downloadToSign } from '../../results/to-sign.js';
import { registerBatchFilesCommand } from '../batch-files-command.js';
import type { CliContext } from '../environment.js';

export function registerToSignCommand(program: Command, context: CliContext): Command {
  const spec = {
    name: 'to-sign',
    description:
      'download the application files every suspended docflow of a batch waits to have signed to <dir>/<dealId>/<fileId>.<ext>, with manifest.csv (signers as initials); run again, it downloads only what is missing',
    dir: 'where the files go: <dir>/<dealId>/<fileId>.<ext> and <dir>/manifest.csv',
    stopping: 'stopping after the files being downloaded',
    manifest: true,
  };
  return registerBatchFilesCommand(program, context, spec, async (options) => {
    const { batch, dir } = options;
    const summary = await downloadToSign(options);
    console.log(
      `to-sign: ${summary.docflows} docflows wait for signatures; ${summary.downloaded} files downloaded, ${summary.skipped} already there; manifest ${summary.manifest}${options.manifestCopy !== undefined ? ` (a copy for a person: ${options.manifestCopy})` : ''}`,
    );
    for (const p of summary.passed) console.log(`  ${p.dealId} (docflow ${p.docflowId}): ${p.reason}`);
    for (const f of summary.failed) console.log(`  ${f.dealId} (docflow ${f.docflowId}): not downloaded: ${f.reason}`);
    if (summary.downloaded + summary.skipped > 0)
      console.log(`  sign each file beside it as <file>.sig, then: realty-batch sign ${batch} --dir ${dir}`);
    if (summary.failed.length > 0) {
      console.log(`  run realty-batch to-sign ${batch} --dir ${dir} again to try them again`);
      context.setExitCode(3);
    }
  });
}
