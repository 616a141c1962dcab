/**
 * The client's operations after creation (read, send, sign, download) against the real
 * sandbox: the happy path, and every failure raised as creation raises it, so that
 * decide() gives them the same policy (401 pause, 403 final, 501 and 5xx retried,
 * no answer retried).
 */
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { describe, expect, afterAll } from 'vitest';
import { ApiHttpError, ApiNetworkError } from '../../../src/errors.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import { DOCFLOW_TYPE, type Docflow, type DocflowRequest, type EncumbranceOptions } from '../../../src/domain/gateway.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { decide } from '../../../src/worker/deal/gateway-failure.js';
import { harness } from '../../helpers/harness.js';
import { DOCFLOW_PATH, encumbranceRequest, post, readExample, withSandbox } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

const example = readExample<DocflowRequest<EncumbranceOptions>>('encumbrance-request.json');
const request = (requestId: string, signed = true): DocflowRequest<EncumbranceOptions> => {
  const body = structuredClone(example);
  body.requestId = requestId;
  if (!signed) delete body.options.appliedDocuments.mortgageAgreement.content.signatures;
  return body;
};
const POLL = { timeoutMs: 10_000, intervalMs: 10 };

// The sandbox once for the file, a folder of each test's own for what it downloads, no database.
const it = harness({
  per: 'file',
  each: ['dir'],
  label: 'client-download',
  engine: 'none',
  sandbox: { registry: [], sessions: ['good', 'limited'], restrictedSessions: ['limited'], lifecycleMs: 50 },
});

describe('the client after creation, against the sandbox', () => {
  let sandbox: RunningSandbox;
  let client: RealtyClient;
  const clientFor = (sessionId: string, timeoutMs = 5000) => createRealtyClient({ baseUrl: sandbox.url, sessionId, timeoutMs });
  const until = (docflowId: string, state: string) =>
    waitFor(async () => ((await client.getDocflow(docflowId)).state === state ? client.getDocflow(docflowId) : false), {
      ...POLL,
      what: state,
    });
  /** The failure of a call, and what the worker's policy does with it. */
  const failure = async (call: () => Promise<unknown>) => {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    return { err, decision: decide(err) };
  };

  it.beforeAll(({ sandbox: started }) => {
    sandbox = started;
    client = clientFor('good');
  });
  // Before the harness closes the sandbox.
  afterAll(async () => {
    await client.close();
  });

  it('signs every application file, sends the docflow, follows it to completed and streams its extract to disk', async ({ dir }) => {
    const created = await client.createDocflow(DOCFLOW_TYPE, request('c-life', false));
    expect(created.status).toBe(201);
    const read = await client.getDocflow(created.docflow.docflowId);
    const files = (read.requirements?.signature ?? []).flatMap((s) => s.files);
    expect(files).toHaveLength(2);

    const unsent = await failure(() => client.sendDocflow(read.docflowId));
    expect((unsent.err as ApiHttpError).status).toBe(400);
    expect((unsent.err as ApiHttpError).body?.errors).toHaveLength(2);

    for (const file of files) {
      const application = await client.downloadFile(read.docflowId, file.id);
      expect(application.contentType).toBe('application/pdf');
      expect(application.fileName).toBe(`${file.id}.pdf`);
      const bytes = await application.bytes();
      expect(bytes.length).toBe(application.length);
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      await client.signFile(read.docflowId, file.id, Buffer.from(`signature of ${file.id}`));
    }
    const sent: Docflow = await client.sendDocflow(read.docflowId);
    expect(sent).toMatchObject({ docflowId: read.docflowId, state: 'queued', type: DOCFLOW_TYPE });

    const done = await until(read.docflowId, 'completed');
    const extract = done.result?.files?.[0];
    expect(extract?.type).toBe('egrnExtract');
    const download = await client.downloadFile(read.docflowId, extract!.id);
    const path = join(dir, download.fileName ?? 'extract.pdf');
    await pipeline(download.stream, createWriteStream(path));
    const onDisk = await readFile(path);
    expect(onDisk.length).toBe(download.length);
    expect(onDisk.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const signature = await client.downloadFile(read.docflowId, extract!.signatures![0]!.id);
    expect(signature.contentType).toBe('application/x-pkcs7-signature');
    expect((await signature.bytes()).toString()).toContain('PKCS7');
  });

  it('raises 401 on every operation, which pauses, without the session id in the message', async () => {
    const docflow = await client.getDocflow((await client.createDocflow(DOCFLOW_TYPE, request('c-401', false))).docflow.docflowId);
    const stranger = clientFor('secret-session-value');
    try {
      const fileId = docflow.requirements?.signature?.[0]?.files[0]?.id ?? 'x';
      for (const call of [
        () => stranger.getDocflow(docflow.docflowId),
        () => stranger.sendDocflow(docflow.docflowId),
        () => stranger.signFile(docflow.docflowId, fileId, Buffer.from('sig')),
        () => stranger.downloadFile(docflow.docflowId, fileId),
      ]) {
        const { err, decision } = await failure(call);
        expect((err as ApiHttpError).status).toBe(401);
        expect(decision).toEqual({ action: 'pause' });
        expect((err as Error).message).not.toContain('secret-session-value');
      }
    } finally {
      await stranger.close();
    }
  });

  it('raises 403 for a restricted account on send and sign (final), and 404 for an unknown docflow (final)', async () => {
    const docflow = await client.getDocflow((await client.createDocflow(DOCFLOW_TYPE, request('c-403', false))).docflow.docflowId);
    const limited = clientFor('limited');
    try {
      const fileId = docflow.requirements?.signature?.[0]?.files[0]?.id ?? 'x';
      for (const call of [
        () => limited.sendDocflow(docflow.docflowId),
        () => limited.signFile(docflow.docflowId, fileId, Buffer.from('sig')),
      ]) {
        const { err, decision } = await failure(call);
        expect((err as ApiHttpError).status).toBe(403);
        expect(decision).toEqual({ action: 'record', outcome: 'forbidden' });
      }
      // Reading is not restricted.
      expect((await limited.getDocflow(docflow.docflowId)).state).toBe('suspended');
    } finally {
      await limited.close();
    }
    const unknown = await failure(() => client.getDocflow('00000000-0000-4000-8000-000000000000'));
    expect((unknown.err as ApiHttpError).status).toBe(404);
    expect(unknown.decision).toEqual({ action: 'record', outcome: 'rejected' });
  });

  it('raises 501 and 5xx faults on every operation, retried as creation is', async () => {
    const docflow = await client.getDocflow((await client.createDocflow(DOCFLOW_TYPE, request('c-faults', false))).docflow.docflowId);
    const fileId = docflow.requirements?.signature?.[0]?.files[0]?.id ?? 'x';
    const operations = () => [
      () => client.getDocflow(docflow.docflowId),
      () => client.sendDocflow(docflow.docflowId),
      () => client.signFile(docflow.docflowId, fileId, Buffer.from('sig')),
      () => client.downloadFile(docflow.docflowId, fileId),
    ];
    const faults = [
      { patch: { fault501: 1 }, statuses: [501], decision: { action: 'retry', exhausted: 'unavailable' } },
      { patch: { fault5xx: 1 }, statuses: [500, 502, 503], decision: { action: 'retry', exhausted: 'failed' } },
    ] as const;
    for (const { patch, statuses, decision } of faults) {
      sandbox.configure(patch);
      try {
        for (const call of operations()) {
          const failed = await failure(call);
          expect(failed.err).toBeInstanceOf(ApiHttpError);
          expect(statuses).toContain((failed.err as ApiHttpError).status);
          expect(failed.decision).toEqual(decision);
        }
      } finally {
        sandbox.configure({ fault501: 0, fault5xx: 0 });
      }
    }
    expect(sandbox.stats().operationCalls).toMatchObject({
      get: { '501': 1 },
      send: { '501': 1 },
      signature: { '501': 1 },
      file: { '501': 1 },
    });
  });

  it('raises a network error, retried, on a reset connection and on an answer slower than the timeout', async () => {
    const { docflow } = await client.createDocflow(DOCFLOW_TYPE, request('c-net'));
    sandbox.configure({ faultReset: 1 });
    try {
      for (const call of [
        () => client.getDocflow(docflow.docflowId),
        () => client.sendDocflow(docflow.docflowId),
        () => client.downloadFile(docflow.docflowId, 'x'),
      ]) {
        const { err, decision } = await failure(call);
        expect(err).toBeInstanceOf(ApiNetworkError);
        expect(decision).toEqual({ action: 'retry', exhausted: 'failed' });
      }
    } finally {
      sandbox.configure({ faultReset: 0 });
    }
    sandbox.configure({ latencyMs: 300 });
    const impatient = clientFor('good', 100);
    try {
      for (const call of [
        () => impatient.getDocflow(docflow.docflowId),
        () => impatient.downloadFile(docflow.docflowId, 'x'),
        () => impatient.signFile(docflow.docflowId, 'x', Buffer.from('s')),
      ]) {
        const { err } = await failure(call);
        expect(err).toBeInstanceOf(ApiNetworkError);
        expect((err as ApiNetworkError).reason).toBe('TIMEOUT');
      }
    } finally {
      sandbox.configure({ latencyMs: 0 });
      await impatient.close();
    }
  });
});

describe('the later operations and the seeded creation faults', () => {
  it('repeats the seeded creation faults whether or not docflows are read between the calls', async () => {
    const statuses = async (readsBetween: number): Promise<number[]> => {
      const seen: number[] = [];
      await withSandbox({ seed: 11, fault501: 0.5 }, async (sandbox) => {
        const reader = createRealtyClient({ baseUrl: sandbox.url, sessionId: 'demo-session', timeoutMs: 5000 });
        try {
          for (let i = 0; i < 16; i += 1) {
            for (let r = 0; r < readsBetween; r += 1)
              await reader.getDocflow('00000000-0000-4000-8000-000000000000').catch(() => undefined);
            seen.push((await post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `f-${i}` }))).status);
          }
        } finally {
          await reader.close();
        }
      });
      return seen;
    };
    const quiet = await statuses(0);
    expect(new Set(quiet)).toEqual(new Set([200, 501]));
    // The reads meet faults of their own stream; the creations' stream is not shifted.
    expect(await statuses(3)).toEqual(quiet);
  });
});
