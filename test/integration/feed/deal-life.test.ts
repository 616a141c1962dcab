/**
 * A batch followed past creation to its registration (issue 24), with the built CLI against
 * the real sandbox (short lives) and Redis: rows reach completed, error, and suspended on a
 * signature and on a payment; the results file carries each row's state; `payments` lists
 * the duty, paid at the sandbox the deal moves on by itself; `documents` downloads the
 * extracts once; signed and sent, the last rows complete and the batch is registered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { readXlsx } from '../../../src/input/read-xlsx.js';
import { createRealtyClient } from '../../../src/realty/client.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile, type CsvRow } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

interface StatusJson {
  done: boolean;
  registered: boolean;
  states: Record<string, number>;
  waitingFor: Record<string, number>;
  oldestUnfinished?: { row: number; since: string };
}

// Seeded: the same lives every run, among them a payment, a registry error and completions. No
// database of the file's own: the commands use their default place, as they did.
const it = harness({
  per: 'file',
  label: 'life',
  sandbox: { sessions: ['s'], lifecycleMs: 150, payment: 0.3, faultRegistry: 0.2, seed: 7 },
  engine: 'none',
});

describe('the life of a deal after creation', () => {
  let dir: string;
  let sandbox: RunningSandbox;
  const batch = 'life';
  let env: Record<string, string>;
  let tracker: ChildProcess | undefined;
  const poll = (what: string) => ({ timeoutMs: 60_000, intervalMs: 200, what });

  const status = async (): Promise<StatusJson> => {
    const answer = await runCli(['status', batch, '--json'], env);
    return JSON.parse(answer.stdout) as StatusJson;
  };
  const results = async (name = 'results.csv'): Promise<CsvRow[]> => {
    await runCli(['results', batch, '--out', join(dir, name), '--attention', join(dir, 'attention.csv')], env);
    return readCsvFile(join(dir, name));
  };
  const sandboxStats = async () =>
    (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as { operationCalls: Record<string, Record<string, number>> };
  const fileDownloads = async () => Object.values((await sandboxStats()).operationCalls.file ?? {}).reduce((a, b) => a + b, 0);

  // The file's folder, sandbox and env (its prefix), for the helpers below.
  it.beforeAll(({ dir: folder, sandbox: started, env: given }) => {
    dir = folder;
    sandbox = started;
    env = { ...given, LANG: 'C.UTF-8' };
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(() => {
    tracker?.kill('SIGKILL');
  });

  it('follows every row to its state, lists payments, downloads extracts once, and ends registered', async () => {
    const run = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        batch,
        '--out',
        join(dir, 'run.csv'),
        '--rejects',
        join(dir, 'rejects.csv'),
      ],
      env,
      120_000,
    );
    expect(run.code).toBe(3);
    // The night's run is over; the fleet's follower goes on in `track`.
    tracker = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], { cwd: ROOT, env: childEnv(env), stdio: 'ignore' });

    // Every docflow settles: completed, error, or suspended on what the bank must do.
    const settled = await waitFor(async () => {
      const s = await status();
      return (s.states.queued ?? 0) + (s.states.sent ?? 0) + (s.states.unknown ?? 0) === 0 && s;
    }, poll('every docflow settled'));
    expect(settled.done).toBe(true);
    expect(settled.registered).toBe(false);
    expect(settled.states.completed).toBeGreaterThan(0);
    expect(settled.states.error).toBeGreaterThan(0);
    expect(settled.waitingFor.signature).toBe(4);
    expect(settled.waitingFor.payment).toBeGreaterThan(0);
    expect(settled.oldestUnfinished?.row).toBeGreaterThan(0);

    // The results file: the contract's ten columns first, then the state; written twice, the same bytes.
    const rows = await results();
    expect(readFileSync(join(dir, 'results.csv'), 'utf8').split('\n')[0]).toBe(
      'row,dealId,outcome,docflowId,cadastralNumber,httpStatus,attempts,errorCode,errorMessage,finishedAt,state,stateAt,requirement,paymentUin,paymentAmount,registryError,requestId,type,otherDocflowId',
    );
    await results('again.csv');
    expect(readFileSync(join(dir, 'again.csv'))).toEqual(readFileSync(join(dir, 'results.csv')));
    const byState = (state: string, requirement = '') => rows.filter((r) => r.state === state && r.requirement === requirement);
    expect(byState('suspended', 'signature').map((r) => r.outcome)).toEqual(['suspended', 'suspended', 'suspended', 'suspended']);
    const paying = byState('suspended', 'payment');
    expect(paying.length).toBe(settled.waitingFor.payment);
    for (const r of paying) {
      expect(r.paymentUin).toMatch(/^\d+$/);
      expect(Number(r.paymentAmount)).toBeGreaterThan(0);
    }
    const refused = byState('error');
    expect(refused.length).toBe(settled.states.error);
    for (const r of refused) expect(r.registryError).not.toBe('');
    // Rows refused before sending have no state.
    expect(rows.filter((r) => r.outcome === 'invalid').every((r) => r.state === '')).toBe(true);

    // The attention file: the registry's refusals and what waits for the bank, each with its hint.
    const attention = readCsvFile(join(dir, 'attention.csv'));
    const byRow = new Map(attention.map((a) => [a.row, a]));
    for (const r of paying) expect(byRow.get(r.row)?.hint).toContain(`realty-batch payments ${batch}`);
    for (const r of refused) expect(byRow.get(r.row)?.hint).toContain('--resubmit');
    for (const r of byState('suspended', 'signature')) expect(byRow.get(r.row)?.hint).toContain('sign the application files');

    // payments: the deals waiting for the state duty, and nobody's name.
    const payments = await runCli(['payments', batch, '--out', join(dir, 'payments.csv')], env);
    expect(payments.code).toBe(0);
    const duty = readCsvFile(join(dir, 'payments.csv'));
    expect(duty.map((d) => d.dealId)).toEqual(paying.map((r) => r.dealId));
    expect(duty.map((d) => d.uin)).toEqual(paying.map((r) => r.paymentUin));
    expect(Object.keys(duty[0]!)).toEqual(['dealId', 'docflowId', 'uin', 'amount', 'payer', 'since']);
    // Paid at the sandbox, each deal moves on by itself: the follower sees it through.
    for (const d of duty) expect((await fetch(`${sandbox.url}/__sandbox/payments/${d.uin}`, { method: 'POST' })).status).toBe(200);
    await waitFor(async () => {
      const s = await status();
      return (s.waitingFor.payment ?? 0) === 0 && (s.states.sent ?? 0) === 0 && s;
    }, poll('the paid deals to move on'));
    const afterPayment = await runCli(['payments', batch, '--out', join(dir, 'payments.csv')], env);
    expect(afterPayment.stdout).toContain('no deal of batch life waits for a payment');

    // The signing round trip, by hand through the client (the gateway's files, any signature).
    const client = createRealtyClient({ baseUrl: sandbox.url, sessionId: 's', timeoutMs: 5000 });
    try {
      for (const { docflowId } of byState('suspended', 'signature')) {
        const docflow = await client.getDocflow(docflowId!);
        for (const signer of docflow.requirements?.signature ?? [])
          for (const file of signer.files) await client.signFile(docflowId!, file.id, Buffer.from('test signature'));
        await client.sendDocflow(docflowId!);
      }
    } finally {
      await client.close();
    }
    // Sent, a signed deal may stop on the state duty too: the bank pays what `payments` lists until none is left.
    const registered = await waitFor(async () => {
      const s = await status();
      if ((s.waitingFor.payment ?? 0) > 0) {
        await runCli(['payments', batch, '--out', join(dir, 'payments.csv')], env);
        for (const d of readCsvFile(join(dir, 'payments.csv')))
          await fetch(`${sandbox.url}/__sandbox/payments/${d.uin!}`, { method: 'POST' });
      }
      return s.registered && s;
    }, poll('the batch to be registered'));
    expect(registered.states.suspended ?? 0).toBe(0);
    expect(registered.oldestUnfinished).toBeUndefined();

    // documents: every completed docflow's files, written whole, with a manifest; a second run downloads nothing.
    const completed = (await results()).filter((r) => r.state === 'completed');
    const before = await fileDownloads();
    const first = await runCli(['documents', batch, '--dir', join(dir, 'docs')], env, 120_000);
    expect(first.code, first.stderr).toBe(0);
    const manifest = readCsvFile(join(dir, 'docs', 'manifest.csv'));
    expect(new Set(manifest.map((m) => m.dealId))).toEqual(new Set(completed.map((r) => r.dealId)));
    for (const m of manifest) {
      const path = join(dir, 'docs', m.dealId!, m.file!);
      expect(statSync(path).size).toBe(Number(m.bytes));
      expect(m.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(
      manifest.some(
        (m) =>
          readFileSync(join(dir, 'docs', m.dealId!, m.file!))
            .subarray(0, 5)
            .toString() === '%PDF-',
      ),
    ).toBe(true);
    // Nothing half-written is left beside them.
    for (const deal of new Set(manifest.map((m) => m.dealId)))
      expect(readdirSync(join(dir, 'docs', deal!)).filter((f) => f.endsWith('.part'))).toEqual([]);
    const downloaded = (await fileDownloads()) - before;
    expect(downloaded).toBe(manifest.length);

    const copy = join(dir, 'documents.xlsx');
    const second = await runCli(['documents', batch, '--dir', join(dir, 'docs'), '--manifest', copy], env, 120_000);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`0 files downloaded (0.0 MB), ${manifest.length} already there`);
    expect((await fileDownloads()) - before).toBe(downloaded);
    // The manifest for a person, as a workbook: the same lines, ids as the text they are.
    const sheet: string[][] = [];
    for await (const cells of readXlsx(copy).rows()) sheet.push(cells);
    expect(sheet[0]).toEqual(['dealId', 'docflowId', 'file', 'type', 'bytes', 'sha256']);
    expect(sheet.slice(1)).toEqual(manifest.map((m) => [m.dealId, m.docflowId, m.file, m.type, m.bytes, m.sha256]));
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    const notATable = await runCli(['documents', batch, '--dir', join(dir, 'docs'), '--manifest', join(dir, 'documents.txt')], env);
    expect([notATable.code, notATable.stderr]).toEqual([2, expect.stringContaining('--manifest must name a .xlsx or .csv file.')]);
  }, 240_000);
});
