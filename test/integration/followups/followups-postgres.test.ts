/**
 * The follow-up commands on PostgreSQL (DATABASE_URL), with the built CLI against the real
 * sandbox over HTTP and Redis: a cancel whose answer is lost is never sent again (the news feed
 * gives its docflow to the next invocation); `--document` is checked before anything is sent and
 * uploaded once, only when an action goes out; a duplicate the registry completed is reported as
 * needing a lift, never cancelled.
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { docflowSchema } from '../../../src/domain/gateway.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { DOCFLOW_PATH, encumbranceRequest, post, SESSION } from '../../helpers/sandbox-http.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';
import { waitFor } from '../../helpers/wait-for.js';

/** Each step of a docflow's life; docflows stop in `sent` (holdSent) until the test lets one complete. */
const LIFE_MS = 300;
const ACTION = 'action_request';
const BANK = '7701934587';

const it = harness({
  per: 'file',
  label: 'followups-pg',
  engine: 'postgres',
  sandbox: { sessions: [SESSION], lifecycleMs: LIFE_MS, holdSent: true, seed: 11 },
});

describe('follow-ups on PostgreSQL: a lost answer, a document, a registered duplicate', () => {
  const batch = 'fu';

  it('never sends a cancel twice when its answer was lost, uploads its document once, and reports a registered duplicate as needing a lift', async ({
    dir,
    sandbox,
    env,
    db: store,
  }) => {
    const docflow = (id: string) => sandbox.docflows().find((d) => d.docflowId === id);
    const actions = () => sandbox.docflows().filter((d) => d.type === ACTION);
    expect(store.url).toMatch(/^postgres/);
    copyFileSync(join(ROOT, 'samples', 'deals.csv'), join(dir, 'deals.csv'));
    const input = join(dir, 'deals.csv');
    const run = await runCli(
      ['run', input, '--profile', 'samples/bank-profile.json', '--batch', batch, '--out', join(dir, 'run.csv')],
      env,
      120_000,
    );
    expect([0, 3], run.stderr).toContain(run.code);
    const [a, b] = readCsvFile(join(dir, 'run.csv')).filter((r) => r.outcome === 'queued');
    await waitFor(() => [a!.docflowId!, b!.docflowId!].every((id) => docflow(id)?.state === 'sent'), {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'the docflows sent',
    });
    const cancel = (...more: string[]) =>
      runCli(['cancel', batch, '--cause', 'the loan was refused', '--input', input, '--feed-lag-ms', '0', ...more], env, 120_000);

    // A document that is not there: refused before anything is sent or uploaded.
    const uploads = sandbox.stats().contents.uploads;
    const missing = await cancel('--rows', a!.row!, '--document', join(dir, 'consent.pdf'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--document: .*nothing was sent/);
    expect(actions()).toHaveLength(0);
    expect(sandbox.stats().contents.uploads).toBe(uploads);

    // The gateway makes the action and its answer is lost: the row says so and the command exits 3.
    writeFileSync(join(dir, 'consent.pdf'), '%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
    writeFileSync(join(dir, 'consent.pdf.sig'), TEST_SIGNATURE);
    sandbox.configure({ faultLost: 1 });
    const lost = await cancel('--rows', a!.row!, '--document', join(dir, 'consent.pdf'));
    expect(lost.code, lost.stderr + lost.stdout).toBe(3);
    expect(lost.stdout).toMatch(new RegExp(`row ${a!.row} ${a!.dealId} \\(docflow ${a!.docflowId}.*\\): answer lost`));
    expect(actions()).toHaveLength(1);
    // The document and its signature, uploaded once.
    expect(sandbox.stats().contents.uploads - uploads).toBe(2);

    // Run again: the news feed shows the action the lost answer made; nothing is sent, nothing uploaded.
    sandbox.configure({ faultLost: 0 });
    const again = await cancel('--rows', a!.row!, '--document', join(dir, 'consent.pdf'));
    expect(again.code, again.stderr + again.stdout).toBe(0);
    expect(again.stdout).toContain('0 cancel sent, 1 sent before');
    expect(again.stdout).toContain(`(action ${actions()[0]!.docflowId})`);
    expect(actions()).toHaveLength(1);
    expect(sandbox.stats().contents.uploads - uploads).toBe(2);
    expect(docflow(a!.docflowId!)?.state).toBe('error');

    // A second docflow of deal b that the registry completed: a lift's work, not a cancel's.
    sandbox.configure({ holdSent: false });
    const answer = await post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: 'other-system' }));
    expect(answer.status, answer.text).toBe(200);
    const registered = docflowSchema.parse(answer.body).docflowId;
    await waitFor(() => docflow(registered)?.state === 'completed', {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'the duplicate registered',
    });
    await store.db.kysely
      .insertInto('duplicates')
      .values({
        docflow_id: registered,
        bank: BANK,
        type: 'encumbrance_request',
        deal_id: b!.dealId!,
        kept_docflow_id: b!.docflowId!,
        request_id: 'other-system',
        batch,
        row: Number(b!.row),
        how: 'feed-request-id',
        seen_at: Date.now(),
      })
      .execute();
    const duplicates = await cancel('--duplicates');
    expect(duplicates.code, duplicates.stderr + duplicates.stdout).toBe(3);
    expect(duplicates.stdout).toContain(
      `(docflow ${registered}, completed): needs a lift: a second docflow of the deal, registered: it needs a lift (realty-batch run <lifts file> --type lift)`,
    );
    expect(actions()).toHaveLength(1);

    // The one request that went out is in the audit, in PostgreSQL, its answer lost; nothing for what was not sent.
    const audit = await store.db.kysely.selectFrom('operator_actions').selectAll().where('batch', '=', batch).execute();
    expect(audit.map((x) => [x.action, x.deal_id, x.detail])).toEqual([
      ['cancel', a!.dealId, `cancel on docflow ${a!.docflowId}: its answer was lost`],
    ]);
  });
});
