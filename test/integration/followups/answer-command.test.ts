/**
 * `realty-batch answer` with the built CLI against the real sandbox over HTTP, Redis and SQLite:
 * one additional packet per deal folder, only to a docflow in processing (`sent`), each other
 * deal said; run again with the same files, nothing is sent again.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { SIGNING_FIXTURES, TEST_SIGNATURE } from '../../helpers/signatures.js';
import { waitFor } from '../../helpers/wait-for.js';

/** Each step of a docflow's life; docflows stop in `sent` (holdSent), so the commands reach each parent there however slow the host. */
const LIFE_MS = 500;
const PACKET = 'additional_packet_request';

const it = harness({ per: 'file', label: 'answer', sandbox: { sessions: ['s'], lifecycleMs: LIFE_MS, holdSent: true, seed: 5 } });

describe('answer: more documents for the docflows in processing', () => {
  const batch = 'answer';

  it('sends one packet per folder to a sent docflow, says why not for every other deal, and never sends the same files twice', async ({
    dir,
    sandbox,
    env,
  }) => {
    copyFileSync(join(ROOT, 'samples', 'deals.csv'), join(dir, 'deals.csv'));
    const run = await runCli(
      ['run', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--batch', batch, '--out', join(dir, 'run.csv')],
      env,
      120_000,
    );
    expect([0, 3]).toContain(run.code);
    const rows = readCsvFile(join(dir, 'run.csv'));
    const queued = rows.filter((r) => r.outcome === 'queued');
    const suspended = rows.filter((r) => r.outcome === 'suspended');
    const invalid = rows.find((r) => r.outcome === 'invalid' && r.dealId);
    expect(queued.length).toBeGreaterThanOrEqual(2);
    expect(suspended.length).toBeGreaterThanOrEqual(1);
    const [a, b] = queued;
    await waitFor(() => [a, b].every((r) => sandbox.docflows().find((d) => d.docflowId === r!.docflowId)?.state === 'sent'), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'two docflows sent',
    });

    // A signed PDF for one deal, an XML for another; a folder for a deal waiting for signatures, one of no deal.
    const answers = join(dir, 'answers');
    const folder = (dealId: string) => {
      mkdirSync(join(answers, dealId), { recursive: true });
      return join(answers, dealId);
    };
    copyFileSync(join(SIGNING_FIXTURES, 'agreement.pdf'), join(folder(a!.dealId!), 'statement.pdf'));
    writeFileSync(join(folder(a!.dealId!), 'statement.pdf.sig'), TEST_SIGNATURE);
    writeFileSync(join(folder(b!.dealId!), 'letter.xml'), '<?xml version="1.0"?><letter>repaid</letter>');
    writeFileSync(join(folder(suspended[0]!.dealId!), 'letter.xml'), '<letter/>');
    writeFileSync(join(folder('NO-SUCH-DEAL'), 'letter.xml'), '<letter/>');
    if (invalid) writeFileSync(join(folder(invalid.dealId!), 'letter.xml'), '<letter/>');

    const out = join(dir, 'answers.csv');
    const first = await runCli(['answer', batch, '--dir', answers, '--out', out], env, 120_000);
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(first.stdout).toContain('answer: 2 packets sent, 0 sent before');
    const packets = sandbox.docflows().filter((d) => d.type === PACKET);
    expect(packets.map((p) => p.parentDocflowId).sort()).toEqual([a!.docflowId, b!.docflowId].sort());
    for (const r of [a!, b!]) {
      const packet = packets.find((p) => p.parentDocflowId === r.docflowId)!;
      expect(first.stdout).toMatch(
        new RegExp(`row ${r.row} ${r.dealId} \\(docflow ${r.docflowId}\\): packet sent \\(packet ${packet.docflowId}, \\w+\\)`),
      );
    }
    expect(first.stdout).toMatch(
      new RegExp(
        `${suspended[0]!.dealId} \\(docflow [^)]+\\): not sent: its docflow is suspended: more documents go only to a docflow in processing`,
      ),
    );
    expect(first.stdout).toContain('NO-SUCH-DEAL: not sent: the folder NO-SUCH-DEAL names no deal of batch answer');
    if (invalid) expect(first.stdout).toContain(`${invalid.dealId}: not sent: the deal has no docflow (its row is invalid)`);
    // The signed statement went up with its signature, the letter alone: three contents.
    const stats = (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as { contents: { uploads: number } };
    expect(stats.contents.uploads).toBe(3);

    // Every deal has its line in the CSV: the packets with their docflow and state, the others with why not.
    const lines = readCsvFile(out);
    expect(Object.keys(lines[0]!)).toEqual(['row', 'dealId', 'docflowId', 'packetDocflowId', 'packetState', 'result', 'reason']);
    expect(
      lines
        .filter((l) => l.result === 'sent')
        .map((l) => l.packetDocflowId)
        .sort(),
    ).toEqual(packets.map((p) => p.docflowId).sort());
    expect(lines.filter((l) => l.result === 'sent').every((l) => l.packetState !== '')).toBe(true);
    const deals = new Set(rows.map((r) => r.dealId).filter(Boolean));
    for (const d of deals) expect(lines.some((l) => l.dealId === d)).toBe(true);
    expect(lines.find((l) => l.dealId === 'NO-SUCH-DEAL')?.result).toBe('skipped');

    // Again, the same files: nothing is uploaded or sent again.
    const again = await runCli(['answer', batch, '--dir', answers, '--out', out, '--json'], env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    const json = JSON.parse(again.stdout) as { lines: Array<{ dealId: string; result: string; packetDocflowId: string }> };
    expect(json.lines.filter((l) => l.result === 'sent')).toEqual([]);
    expect(
      json.lines
        .filter((l) => l.result === 'sent_before')
        .map((l) => l.packetDocflowId)
        .sort(),
    ).toEqual(packets.map((p) => p.docflowId).sort());
    expect(sandbox.docflows().filter((d) => d.type === PACKET)).toHaveLength(2);
    const after = (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as { contents: { uploads: number } };
    expect(after.contents.uploads).toBe(3);
  });
});
