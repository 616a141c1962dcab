/** `realty-batch sign <batch> --dir <d>`: the bank's signatures attached, and each docflow whose files are all signed sent. */
import type { Command } from 'commander';
import { signDocflows, type DealSigning } from '../../results/sign.js';
import { registerBatchFilesCommand } from '../batch-files-command.js';
import type { CliContext } from '../environment.js';

const SAID: Record<DealSigning, string> = {
  sent: 'sent',
  already_sent: 'sent before',
  passed: 'left alone',
  missing: 'not sent',
  refused: 'refused',
  failed: 'not sent',
};

export function registerSignCommand(program: Command, context: CliContext): Command {
  const spec = {
    name: 'sign',
    description:
      'attach each <dir>/<dealId>/<file>.sig to the file to-sign downloaded, and send every docflow whose files are all signed; prints per deal what is still missing (exit 3 while something is)',
    dir: 'the folder to-sign wrote, with a <file>.sig beside each file signed',
    stopping: 'stopping after the calls under way',
  };
  return registerBatchFilesCommand(program, context, spec, async (options) => {
    const summary = await signDocflows(options);
    const count = (...results: DealSigning[]) => summary.deals.filter((d) => results.includes(d.result)).length;
    const open = count('missing', 'refused', 'failed');
    console.log(
      `sign: ${summary.deals.length} docflows; ${summary.posted} signatures attached, ${count('sent')} docflows sent (${count('already_sent')} before), ${open} not sent yet`,
    );
    for (const d of summary.deals)
      console.log(`  ${d.dealId} (docflow ${d.docflowId}): ${SAID[d.result]}${d.reason ? `: ${d.reason}` : ''}`);
    if (open > 0) context.setExitCode(3);
  });
}
