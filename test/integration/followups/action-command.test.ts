/**
 * `realty-batch cancel|suspend|resume` with the built CLI against the real sandbox over HTTP,
 * Redis and SQLite: an action per chosen docflow, at most once per docflow and action, the
 * parent's new state in the results; `cancel --duplicates` cancels a second docflow in
 * processing and leaves one waiting for signatures unsigned, which `to-sign` skips and says so.
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { docflowSchema } from '../../../src/domain/gateway.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile, type CsvRow } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { DOCFLOW_PATH, encumbranceRequest, post, SESSION } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

/** Each step of a docflow's life; docflows stop in `sent` (holdSent), so every command below reaches each parent there however slow the host. */
const LIFE_MS = 500;
const ACTION = 'action_request';
const BANK = '7701934587';

const it = harness({ per: 'file', label: 'action', sandbox: { sessions: [SESSION], lifecycleMs: LIFE_MS, holdSent: true, seed: 7 } });

describe("cancel, suspend and resume a batch's docflows", () => {
  const batch = 'act';
  let dir: string;
  let sandbox: RunningSandbox;
  let env: Record<string, string>;

  // The file's folder, sandbox and env (its prefix and database), for the helpers below.
  it.beforeAll(({ dir: folder, sandbox: started, env: given }) => {
    dir = folder;
    sandbox = started;
    env = given;
  });

  const docflow = (id: string) => sandbox.docflows().find((d) => d.docflowId === id);
  const actions = () => sandbox.docflows().filter((d) => d.type === ACTION);
  const results = async (): Promise<CsvRow[]> => {
    await runCli(['results', batch, '--out', join(dir, 'results.csv')], env);
    return readCsvFile(join(dir, 'results.csv'));
  };
  const create = async (body: unknown, status: number): Promise<string> => {
    const answer = await post(sandbox, DOCFLOW_PATH, body);
    expect(answer.status, answer.text).toBe(status);
    return docflowSchema.parse(answer.body).docflowId;
  };

  it('cancels once, suspends and resumes, and cancels a duplicate in processing while one waiting for signatures stays unsigned', async ({
    db: store,
  }) => {
    copyFileSync(join(ROOT, 'samples', 'deals.csv'), join(dir, 'deals.csv'));
    const input = join(dir, 'deals.csv');
    const run = await runCli(
      ['run', input, '--profile', 'samples/bank-profile.json', '--batch', batch, '--out', join(dir, 'run.csv')],
      env,
      120_000,
    );
    expect([0, 3]).toContain(run.code);
    // A second docflow of a deal at the gateway, made beside the batch: in processing by the time it is cancelled.
    const second = await create(encumbranceRequest({ requestId: 'other-system' }), 200);
    const rows = readCsvFile(join(dir, 'run.csv'));
    const [a, c] = rows.filter((r) => r.outcome === 'queued');
    const waiting = rows.find((r) => r.outcome === 'suspended')!;
    // The samples give two queued rows and one suspended (samples/README.md).
    expect([a?.docflowId, c?.docflowId, waiting?.docflowId]).toEqual([expect.any(String), expect.any(String), expect.any(String)]);
    await waitFor(() => [a!.docflowId!, c!.docflowId!, second].every((id) => docflow(id)?.state === 'sent'), {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'the docflows sent',
    });

    const cause = ['--cause', 'the deal was withdrawn', '--input', input];
    // First, while every parent is in processing: two duplicates the follower would have found: one in processing, and the row's own docflow that waits for signatures.
    const seen = Date.now();
    await store.db.kysely
      .insertInto('duplicates')
      .values([
        {
          docflow_id: second,
          bank: BANK,
          type: 'encumbrance_request',
          deal_id: c!.dealId!,
          kept_docflow_id: c!.docflowId!,
          request_id: 'other-system',
          batch,
          row: Number(c!.row),
          how: 'feed-request-id',
          seen_at: seen,
        },
        {
          docflow_id: waiting.docflowId!,
          bank: BANK,
          type: 'encumbrance_request',
          deal_id: waiting.dealId!,
          kept_docflow_id: second,
          request_id: '',
          batch,
          row: Number(waiting.row),
          how: 'answer',
          seen_at: seen,
        },
      ])
      .execute();
    const duplicates = await runCli(['cancel', batch, '--duplicates', ...cause], env, 120_000);
    expect(duplicates.code, duplicates.stderr + duplicates.stdout).toBe(3);
    expect(docflow(second)?.state).toBe('error');
    expect(duplicates.stdout).toMatch(new RegExp(`\\(docflow ${second}, error\\): sent`));
    expect(duplicates.stdout).toContain(
      `(docflow ${waiting.docflowId}, suspended): not sent: a second docflow of the deal, waiting for signatures: it is never signed`,
    );
    expect(docflow(waiting.docflowId!)?.state).toBe('suspended');
    expect(actions()).toHaveLength(1);

    // Suspend: the registry holds the docflow in `sent` (resumed below).
    const deals = join(dir, 'deals.txt');
    writeFileSync(deals, `# the deal to hold\n${c!.dealId}\n`);
    const suspend = await runCli(['suspend', batch, '--deals', deals, ...cause], env, 120_000);
    expect(suspend.code, suspend.stderr + suspend.stdout).toBe(0);
    expect(docflow(c!.docflowId!)).toMatchObject({ state: 'sent', registrySuspended: true });
    expect(actions()).toHaveLength(2);

    // Cancel a row: its docflow ends in error, and the results say so.
    const cancel = await runCli(['cancel', batch, '--rows', a!.row!, ...cause], env, 120_000);
    expect(cancel.code, cancel.stderr + cancel.stdout).toBe(0);
    expect(docflow(a!.docflowId!)?.state).toBe('error');
    expect(actions()).toHaveLength(3);
    const cancelled = actions().find((x) => x.parentDocflowId === a!.docflowId)!;
    expect(cancel.stdout).toMatch(
      new RegExp(`row ${a!.row} ${a!.dealId} \\(docflow ${a!.docflowId}, error\\): sent \\(action ${cancelled.docflowId}\\)`),
    );
    expect((await results()).find((r) => r.row === a!.row)?.state).toBe('error');

    // Twice: nothing is sent again.
    const again = await runCli(['cancel', batch, '--rows', a!.row!, ...cause], env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('0 cancel sent, 1 sent before');
    expect(actions()).toHaveLength(3);

    // Resume: the held docflow goes on.
    const resume = await runCli(['resume', batch, '--deals', deals, ...cause], env, 120_000);
    expect(resume.code, resume.stderr + resume.stdout).toBe(0);
    expect(docflow(c!.docflowId!)?.registrySuspended).toBeUndefined();
    expect(actions()).toHaveLength(4);

    // to-sign leaves the duplicate waiting for signatures alone, and says so.
    const toSign = await runCli(['to-sign', batch, '--dir', join(dir, 'to-sign')], env, 120_000);
    expect(toSign.code, toSign.stderr).toBe(0);
    expect(toSign.stdout).toContain(
      `${waiting.dealId} (docflow ${waiting.docflowId}): a second docflow of the deal (DUPLICATE_DOCFLOW): never signed`,
    );
    const manifest = readCsvFile(join(dir, 'to-sign', 'manifest.csv'));
    expect(manifest.some((m) => m.docflowId === waiting.docflowId)).toBe(false);

    // Every action is in the audit, with who asked.
    const audit = await store.db.kysely.selectFrom('operator_actions').selectAll().where('batch', '=', batch).execute();
    expect(audit.map((x) => x.action).sort()).toEqual(['cancel', 'cancel', 'resume', 'suspend']);
    expect(audit.every((x) => x.who !== '')).toBe(true);
  });
});
