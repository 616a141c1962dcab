// The second part of `npm run demo`: a deal's life after creation, with documents by path.
// samples/deals-with-files.csv names its agreements as PDF files: they are uploaded once each,
// the docflows are created, one waits for signatures; `to-sign` fetches its application files,
// the demo signs them with a test signature (a bank uses its own tools), `sign` sends it, the
// follower (`track`) sees every deal through to completed, and `documents` downloads the extracts.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Runs the CLI; fails the demo unless it exits with one of `ok`. */
function cliStep(ctx, args, ok = [0]) {
  const r = spawnSync(process.execPath, [ctx.cli, ...args], { cwd: ctx.root, env: ctx.env, encoding: 'utf8' });
  if (!ok.includes(r.status ?? -1)) ctx.fail(`realty-batch ${args[0]} exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function demoLife(ctx) {
  const { root, say, fail } = ctx;
  const out = (name) => join(root, 'out', name);
  for (const dir of ['to-sign', 'documents']) rmSync(out(dir), { recursive: true, force: true });
  say('after creation: samples/deals-with-files.csv (agreements as PDF files), followed to registration');
  cliStep(
    ctx,
    [
      'run',
      'samples/deals-with-files.csv',
      '--profile',
      'samples/bank-profile.json',
      '--batch',
      'files',
      '--out',
      out('files.results.csv'),
      '--rejects',
      out('files.rejects.csv'),
    ],
    [0, 3],
  );
  const uploads = (await fetch(`${ctx.sandboxUrl}/__sandbox/stats`).then((r) => r.json())).contents?.uploads ?? 0;
  say(`files: ${uploads} files uploaded once each through /contents, then the docflows named them`);

  // The fleet's follower of the news feed: every state change of every docflow.
  const track = spawn(process.execPath, [ctx.cli, 'track', '--poll-ms', '100'], { cwd: root, env: ctx.env, stdio: 'ignore' });
  try {
    cliStep(ctx, ['to-sign', 'files', '--dir', out('to-sign')]);
    let signatures = 0;
    for (const deal of readdirSync(out('to-sign'), { withFileTypes: true }).filter((e) => e.isDirectory())) {
      for (const file of readdirSync(join(out('to-sign'), deal.name)).filter((f) => !f.endsWith('.sig') && !f.startsWith('.'))) {
        // A real detached CMS signature by its structure (the samples' test key, test only), as `sign`
        // requires; it signs agreement-a.pdf, not this file: the sandbox does not verify signatures.
        writeFileSync(join(out('to-sign'), deal.name, `${file}.sig`), readFileSync(join(root, 'samples', 'agreement-a.pdf.sig')));
        signatures++;
      }
    }
    say(`to-sign: the application files in out/to-sign/; the demo signed ${signatures} with a test signature`);
    cliStep(ctx, ['sign', 'files', '--dir', out('to-sign')]);

    let status;
    for (let i = 0; i < 150; i++) {
      status = JSON.parse(cliStep(ctx, ['status', 'files', '--json'], [0, 3]));
      if (status.registered) break;
      await sleep(200);
    }
    if (!status?.registered) fail(`the files batch did not reach registration: ${JSON.stringify(status?.states)}`);
    say(
      `registered: ${Object.entries(status.states)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ')}`,
    );
    cliStep(ctx, ['documents', 'files', '--dir', out('documents')]);
    const manifest = readFileSync(out('documents/manifest.csv'), 'utf8').trim().split('\n').length - 1;
    cliStep(ctx, ['results', 'files', '--out', out('files.results.csv')], [0, 3]);
    say(`documents: ${manifest} result files (extracts and signatures) in out/documents/, listed in manifest.csv`);
  } finally {
    track.kill('SIGTERM');
  }
}
