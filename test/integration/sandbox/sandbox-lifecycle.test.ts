/**
 * A docflow's whole life in the sandbox, over HTTP: queued → sent → completed or error,
 * suspended for signatures (201) or for the state duty, each step `lifecycleMs` after the
 * one before, every change an item of the news feed.
 */
import { describe, it, expect } from 'vitest';
import { request } from 'undici';
import {
  docflowSchema,
  NEWS_PATH,
  newsPageSchema,
  type Docflow,
  type NewsItem,
  type SignatureRequirement,
} from '../../../src/domain/gateway.js';
import type { RunningSandbox, SandboxDocflow, SandboxOptions } from '../../../src/sandbox/index.js';
import { AUTH, DOCFLOW_PATH, call, encumbranceRequest, post, withSandbox } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

const LIFE_MS = 60;
const POLL = { timeoutMs: 10_000, intervalMs: 10 };
const unsigned = (requestId: string) =>
  encumbranceRequest({ requestId, 'options.appliedDocuments.mortgageAgreement.content.signatures': undefined });

async function create(sandbox: RunningSandbox, body: unknown, status = 200): Promise<Docflow> {
  const answer = await post(sandbox, DOCFLOW_PATH, body);
  expect(answer.status, answer.text).toBe(status);
  return docflowSchema.parse(answer.body);
}

async function read(sandbox: RunningSandbox, docflowId: string): Promise<Docflow> {
  const answer = await call(sandbox, 'GET', `/realty/v1/docflows/${docflowId}`);
  expect(answer.status, answer.text).toBe(200);
  return docflowSchema.parse(answer.body);
}

const until = (sandbox: RunningSandbox, docflowId: string, state: string) =>
  waitFor(async () => ((await read(sandbox, docflowId)).state === state ? read(sandbox, docflowId) : false), {
    ...POLL,
    what: `docflow ${state}`,
  });

/** Every item of the feed so far, checked against the client's schema. */
async function feed(sandbox: RunningSandbox): Promise<NewsItem[]> {
  const answer = await call(sandbox, 'GET', `${NEWS_PATH}?after=0&limit=1000`);
  expect(answer.status, answer.text).toBe(200);
  return newsPageSchema.parse(answer.body).news;
}

const statesOf = (items: NewsItem[], docflowId: string) =>
  items.filter((i) => i.docflow.docflowId === docflowId).map((i) => i.docflow.state);

async function download(sandbox: RunningSandbox, link: string | undefined) {
  expect(link).toMatch(new RegExp(`^${sandbox.url}/realty/v1/docflows/`));
  const answer = await request(link!, { headers: AUTH });
  const bytes = Buffer.from(await answer.body.arrayBuffer());
  return { status: answer.statusCode, type: answer.headers['content-type'], length: Number(answer.headers['content-length']), bytes };
}

const listed = async (sandbox: RunningSandbox): Promise<SandboxDocflow[]> =>
  (await call(sandbox, 'GET', '/__sandbox/docflows', undefined, {})).body as SandboxDocflow[];

const life = (options: SandboxOptions = {}) => ({ lifecycleMs: LIFE_MS, ...options });

describe('sandbox docflow life', () => {
  it('takes a docflow queued → sent → completed, one step every lifecycleMs, with the extract and its signature to download', async () => {
    await withSandbox(life(), async (sandbox) => {
      const created = await create(sandbox, encumbranceRequest({ requestId: 'life-1' }));
      expect(created.state).toBe('queued');
      const done = await until(sandbox, created.docflowId, 'completed');
      expect(done).toMatchObject({ docflowId: created.docflowId, requestId: 'life-1', userId: created.userId });
      expect(done).not.toHaveProperty('requirements');
      expect(done).not.toHaveProperty('error');

      const [extract, ...others] = done.result?.files ?? [];
      expect(others).toEqual([]);
      expect(extract).toMatchObject({ type: 'egrnExtract', signatures: [{ type: 'signature' }] });
      const pdf = await download(sandbox, extract?.contentLink);
      expect(pdf).toMatchObject({ status: 200, type: 'application/pdf', length: pdf.bytes.length });
      expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(pdf.bytes.toString('latin1')).toContain(created.docflowId);
      const signature = await download(sandbox, extract?.signatures?.[0]?.contentLink);
      expect(signature).toMatchObject({ status: 200, type: 'application/x-pkcs7-signature' });
      expect(signature.bytes.toString()).toContain('BEGIN PKCS7');
      // The same file twice is the same bytes.
      expect((await download(sandbox, extract?.contentLink)).bytes.equals(pdf.bytes)).toBe(true);

      const items = await feed(sandbox);
      expect(items.map((i) => [i.token, i.docflow.state])).toEqual([
        ['1', 'queued'],
        ['2', 'sent'],
        ['3', 'completed'],
      ]);
      // Each step comes lifecycleMs after the one before, by the dates the feed gives.
      const dates = items.map((i) => Date.parse(i.date));
      expect(dates[1]! - dates[0]!).toBeGreaterThanOrEqual(LIFE_MS - 1);
      expect(dates[1]! - dates[0]!).toBeLessThanOrEqual(LIFE_MS + 1);
      expect(dates[2]! - dates[1]!).toBeGreaterThanOrEqual(LIFE_MS - 1);
      expect(items[2]?.docflow.result).toEqual(done.result);
      expect(items[0]?.docflow).not.toHaveProperty('result');
      expect(sandbox.stats().docflowStates).toEqual({ completed: 1 });
      expect(await listed(sandbox)).toEqual([expect.objectContaining({ docflowId: created.docflowId, state: 'completed', status: 200 })]);
    });
  });

  it('ends a docflow in error with an Error object and no result when the register refuses it (faultRegistry 1)', async () => {
    await withSandbox(life({ faultRegistry: 1 }), async (sandbox) => {
      const created = await create(sandbox, encumbranceRequest({ requestId: 'refused' }));
      const failed = await until(sandbox, created.docflowId, 'error');
      expect(failed.error).toEqual({ code: expect.any(String), message: expect.stringContaining('refused') });
      expect(failed).not.toHaveProperty('result');
      const items = await feed(sandbox);
      expect(statesOf(items, created.docflowId)).toEqual(['queued', 'sent', 'error']);
      expect(items[2]?.docflow.error).toEqual(failed.error);
    });
  });

  it('stops a sent docflow on the state duty (payment 1) until its uin is paid, then sends it on to completed', async () => {
    await withSandbox(life({ payment: 1 }), async (sandbox) => {
      const created = await create(sandbox, encumbranceRequest({ requestId: 'duty' }));
      const waiting = await until(sandbox, created.docflowId, 'suspended');
      const [payment, ...more] = waiting.requirements?.payment ?? [];
      expect(more).toEqual([]);
      expect(waiting.requirements).not.toHaveProperty('signature');
      expect(payment).toEqual({
        uin: expect.stringMatching(/^\d{20}$/),
        amount: expect.any(Number),
        payer: { name: expect.any(String), inn: expect.stringMatching(/^\d{10}$/) },
      });
      expect(await listed(sandbox)).toEqual([expect.objectContaining({ state: 'suspended', requirement: 'payment', uin: payment!.uin })]);

      // Sending does not pay it; paying an unknown uin pays nothing.
      const send = await post(sandbox, `/realty/v1/docflows/${created.docflowId}`, {});
      expect(send.status).toBe(400);
      expect(send.body).toMatchObject({ code: 'validation', target: 'requirements.payment' });
      expect((await post(sandbox, '/__sandbox/payments/00000000000000000000', {}, {})).status).toBe(404);
      expect((await read(sandbox, created.docflowId)).state).toBe('suspended');

      const paid = await post(sandbox, `/__sandbox/payments/${payment!.uin}`, {}, {});
      expect(paid.status).toBe(200);
      expect(paid.body).toEqual({ uin: payment!.uin, docflowId: created.docflowId, amount: payment!.amount });
      expect((await post(sandbox, `/__sandbox/payments/${payment!.uin}`, {}, {})).status).toBe(409);
      await until(sandbox, created.docflowId, 'completed');
      const items = await feed(sandbox);
      expect(statesOf(items, created.docflowId)).toEqual(['queued', 'sent', 'suspended', 'sent', 'completed']);
      expect(items[2]?.docflow.requirements).toEqual({ payment: [payment] });
      expect(items[3]?.docflow).not.toHaveProperty('requirements');
      expect(sandbox.stats().payments).toBe(1);
    });
  });

  it('waits on a 201 docflow until every application file is signed and it is sent, then lives on to completed', async () => {
    await withSandbox(life(), async (sandbox) => {
      const created = await create(sandbox, unsigned('to-sign'), 201);
      expect(created.state).toBe('suspended');
      const signers: SignatureRequirement[] = created.requirements?.signature ?? [];
      expect(signers.map((s) => s.role)).toEqual(['owner', 'representative']);
      const files = signers.flatMap((s) => s.files);
      expect(new Set(files.map((f) => f.id)).size).toBe(2);
      for (const file of files) {
        const pdf = await download(sandbox, file.contentLink);
        expect(pdf).toMatchObject({ status: 200, type: 'application/pdf' });
        expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      }
      // Time passes: a suspended docflow does not move by itself.
      await new Promise((r) => setTimeout(r, 3 * LIFE_MS));
      expect((await read(sandbox, created.docflowId)).state).toBe('suspended');

      const signatures = (fileId: string, body: string) =>
        request(`${sandbox.url}/realty/v1/docflows/${created.docflowId}/files/${fileId}/signatures`, {
          method: 'POST',
          headers: { ...AUTH, 'content-type': 'application/x-pkcs7-signature' },
          body,
        }).then(async (a) => ({ status: a.statusCode, text: await a.body.text() }));
      const sendPath = `/realty/v1/docflows/${created.docflowId}`;

      const none = await post(sandbox, sendPath, {});
      expect(none.status).toBe(400);
      expect(none.body).toMatchObject({
        code: 'validation',
        target: 'requirements.signature',
        errors: files.map((f) => ({ code: 'signatureMissing', target: `files.${f.id}` })),
      });
      expect(await signatures(files[0]!.id, '')).toMatchObject({ status: 400 });
      expect(await signatures('no-such-file', 'sig')).toMatchObject({ status: 404 });
      expect(await signatures(files[0]!.id, 'signature-bytes')).toEqual({ status: 204, text: '' });
      const one = await post(sandbox, sendPath, {});
      expect(one.status).toBe(400);
      expect((one.body as { errors: Array<{ target: string }> }).errors.map((e) => e.target)).toEqual([`files.${files[1]!.id}`]);
      expect(await signatures(files[1]!.id, 'signature-bytes')).toEqual({ status: 204, text: '' });

      const sent = await post(sandbox, sendPath, {});
      expect(sent.status).toBe(200);
      expect(docflowSchema.parse(sent.body)).toMatchObject({ docflowId: created.docflowId, state: 'queued' });
      expect(sent.body).not.toHaveProperty('requirements');
      // Too late to sign; a second send is answered with the docflow as it is.
      expect(await signatures(files[0]!.id, 'again')).toMatchObject({ status: 409 });
      expect((await post(sandbox, sendPath, {})).status).toBe(200);

      const done = await until(sandbox, created.docflowId, 'completed');
      expect(done.result?.files?.[0]?.type).toBe('egrnExtract');
      const items = await feed(sandbox);
      expect(statesOf(items, created.docflowId)).toEqual(['suspended', 'queued', 'sent', 'completed']);
      expect(items[0]?.docflow.requirements).toEqual(created.requirements);
      expect(sandbox.stats().operationCalls.signature).toEqual({ '204': 2, '400': 1, '404': 1, '409': 1 });
    });
  });

  it('shows every change in the feed newsLagMs after it, in token order', async () => {
    const lag = 150;
    await withSandbox(life({ newsLagMs: lag, faultRegistry: 1 }), async (sandbox) => {
      const started = performance.now();
      const created = await create(sandbox, encumbranceRequest({ requestId: 'lagging' }));
      const seen: Array<{ state: string; elapsed: number }> = [];
      await waitFor(
        async () => {
          const items = await feed(sandbox);
          const elapsed = performance.now() - started;
          for (const item of items.slice(seen.length)) seen.push({ state: item.docflow.state, elapsed });
          expect(items.map((i) => i.token)).toEqual(items.map((_, i) => String(i + 1)));
          return seen.length === 3;
        },
        { ...POLL, what: 'three items' },
      );
      expect(seen.map((s) => s.state)).toEqual(['queued', 'sent', 'error']);
      // Item k (counted from 0) changed k lifecycles after the creation, and shows `lag` after that.
      seen.forEach((s, k) => expect(s.elapsed, s.state).toBeGreaterThanOrEqual(lag + k * LIFE_MS - 1));
      expect((await read(sandbox, created.docflowId)).state).toBe('error');
    });
  });

  it('repeats every life with the same seed, and another seed gives other lives', async () => {
    const lives = async (seed: number) => {
      const out: Record<string, { states: string[]; uin?: string | undefined; error?: string | undefined }> = {};
      await withSandbox(life({ seed, lifecycleMs: 20, payment: 0.5, faultRegistry: 0.4 }), async (sandbox) => {
        for (let i = 0; i < 12; i += 1) await create(sandbox, encumbranceRequest({ requestId: `seeded-${i}` }));
        await waitFor(
          async () => {
            for (const d of await listed(sandbox)) if (d.uin !== undefined) sandbox.pay(d.uin);
            return (await listed(sandbox)).every((d) => d.state === 'completed' || d.state === 'error');
          },
          { ...POLL, what: 'every docflow final' },
        );
        for (const item of await feed(sandbox)) {
          const entry = (out[item.docflow.requestId!] ??= { states: [] });
          entry.states.push(item.docflow.state);
          entry.uin ??= item.docflow.requirements?.payment?.[0]?.uin;
          entry.error ??= item.docflow.error?.message;
        }
      });
      return out;
    };
    const first = await lives(5);
    const paths = new Set(Object.values(first).map((l) => l.states.join('>')));
    // Both rolls hit and missed: completed and error, with and without a payment.
    expect(paths).toEqual(
      new Set(['queued>sent>completed', 'queued>sent>error', 'queued>sent>suspended>sent>completed', 'queued>sent>suspended>sent>error']),
    );
    expect(await lives(5)).toEqual(first);
    expect(await lives(6)).not.toEqual(first);
  });

  it('answers 401 without a session and 404 for an unknown docflow or file on every operation', async () => {
    await withSandbox(life(), async (sandbox) => {
      const { docflowId } = await create(sandbox, unsigned('ops'), 201);
      const paths = [
        ['GET', `/realty/v1/docflows/${docflowId}`],
        ['POST', `/realty/v1/docflows/${docflowId}`],
        ['GET', `/realty/v1/docflows/${docflowId}/files/x`],
        ['POST', `/realty/v1/docflows/${docflowId}/files/x/signatures`],
      ] as const;
      for (const [method, path] of paths) {
        const answer = await call(sandbox, method, path, method === 'POST' ? 'sig' : undefined, {});
        expect(answer.status, `${method} ${path}`).toBe(401);
        expect(answer.body).toMatchObject({ code: 'unauthorized' });
        const unknown = await call(
          sandbox,
          method,
          path.replace(docflowId, '00000000-0000-4000-8000-000000000000'),
          method === 'POST' ? 'sig' : undefined,
        );
        expect(unknown.status, `${method} ${path}`).toBe(404);
        expect(unknown.body).toMatchObject({ code: 'notFound', target: 'docflowId' });
      }
      expect((await call(sandbox, 'GET', `/realty/v1/docflows/${docflowId}/files/x`)).body).toMatchObject({ target: 'fileId' });
      expect((await call(sandbox, 'DELETE', `/realty/v1/docflows/${docflowId}/files/x`)).status).toBe(405);
      expect((await call(sandbox, 'GET', `/realty/v1/docflows/${docflowId}/files/x/signatures`)).status).toBe(405);
      expect((await call(sandbox, 'GET', `/realty/v1/docflows/${docflowId}/other/x`)).status).toBe(404);
      expect((await call(sandbox, 'GET', '/__sandbox/payments/1', undefined, {})).status).toBe(405);
    });
  });

  it('takes lifecycleMs, faultRegistry and payment at /__sandbox/config for the docflows created after, and refuses bad ones', async () => {
    await withSandbox({ lifecycleMs: 86_400_000 }, async (sandbox) => {
      const slow = await create(sandbox, encumbranceRequest({ requestId: 'slow' }));
      for (const bad of [{ lifecycleMs: -1 }, { lifecycleMs: 86_400_001 }, { faultRegistry: 2 }, { payment: '0.5' }]) {
        expect((await post(sandbox, '/__sandbox/config', bad, {})).status, JSON.stringify(bad)).toBe(400);
      }
      expect((await post(sandbox, '/__sandbox/config', { lifecycleMs: 0, faultRegistry: 1, payment: 0 }, {})).status).toBe(204);
      const fast = await create(sandbox, encumbranceRequest({ requestId: 'fast' }));
      expect((await read(sandbox, fast.docflowId)).state).toBe('error');
      expect((await read(sandbox, slow.docflowId)).state).toBe('queued');
    });
  });
});
