import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, afterAll } from 'vitest';
import { ApiHttpError, ApiNetworkError } from '../../../src/errors.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import { DOCFLOW_TYPE, type DocflowRequest, type EncumbranceOptions } from '../../../src/domain/gateway.js';
import type { RegistryObject, RunningSandbox } from '../../../src/sandbox/index.js';
import { harness } from '../../helpers/harness.js';
import { readExample } from '../../helpers/sandbox-http.js';

const example = readExample<DocflowRequest<EncumbranceOptions>>('encumbrance-request.json');
const registry = readExample<RegistryObject[]>('suggest-response.json').map((o) => ({
  ...o,
  region: 'Новосибирский',
  city: 'Новосибирск',
}));
const withRequestId = (
  requestId: string,
  changes: (o: EncumbranceOptions) => void = () => undefined,
): DocflowRequest<EncumbranceOptions> => {
  const body = structuredClone(example);
  body.requestId = requestId;
  changes(body.options);
  return body;
};

// The sandbox once for the file, and nothing else of the harness's.
const it = harness({
  per: 'file',
  label: 'client',
  engine: 'none',
  sandbox: {
    registry,
    sessions: ['good', 'limited'],
    restrictedSessions: ['limited'],
    egronRegions: ['Республика Крым'],
    // These tests are about creation: docflows stay as created (test/integration/realty/client-lifecycle.test.ts follows their life).
    lifecycleMs: 86_400_000,
  },
});

describe('the gateway client against the sandbox', () => {
  let sandbox: RunningSandbox;
  let client: RealtyClient;
  const clientFor = (sessionId: string, timeoutMs = 5000) => createRealtyClient({ baseUrl: sandbox.url, sessionId, timeoutMs });

  it.beforeAll(({ sandbox: started }) => {
    sandbox = started;
    client = clientFor('good');
  });
  // Before the harness closes the sandbox.
  afterAll(async () => {
    await client.close();
  });

  it('parses the published suggest answer without loss, 12-digit ids included', async () => {
    const candidates = await client.suggest(readExample('suggest-request.json'));
    expect(candidates.map((c) => c.objectCn).sort()).toEqual(['54:35:000000:5013', '54:35:000000:5911']);
    expect(candidates[0]!.subjectId).toBe(150000000000);
    expect(candidates.find((c) => c.objectCn === '54:35:000000:5911')!.settlementId).toBe(150401379000);
  });

  it('answers 200 with a queued docflow for the published request', async () => {
    const created = await client.createDocflow(DOCFLOW_TYPE, withRequestId('client-200'));
    expect(created.status).toBe(200);
    expect(created.docflow.state).toBe('queued');
    expect(created.docflow.type).toBe(DOCFLOW_TYPE);
    expect(created.docflow.docflowId).toMatch(/[0-9a-f-]{36}/);
  });

  it('answers 201 with a suspended docflow when the agreement carries no signatures', async () => {
    const created = await client.createDocflow(
      DOCFLOW_TYPE,
      withRequestId('client-201', (o) => delete o.appliedDocuments.mortgageAgreement.content.signatures),
    );
    expect(created.status).toBe(201);
    expect(created.docflow.state).toBe('suspended');
  });

  it('raises 400 with the gateway Error object: code, target and nested errors', async () => {
    const err = await client
      .createDocflow(
        DOCFLOW_TYPE,
        withRequestId('client-400', (o) => ((o.object as { cadastralNumber?: string }).cadastralNumber = 'not-a-number')),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiHttpError);
    const http = err as ApiHttpError;
    expect(http.status).toBe(400);
    expect(http.body?.code).toBe('validation');
    const targets = JSON.stringify(http.body);
    expect(targets).toContain('options.object.cadastralNumber');
    expect(http.body?.errors?.length).toBeGreaterThan(0);
  });

  it('raises 400 for a suggest without a region name', async () => {
    const err = await client.suggest({ region: { name: '' } }).catch((e: unknown) => e);
    expect((err as ApiHttpError).status).toBe(400);
  });

  it('raises 401 for a session the gateway does not know, without the session id in the message', async () => {
    const stranger = clientFor('secret-session-value');
    const err = await stranger.createDocflow(DOCFLOW_TYPE, withRequestId('client-401')).catch((e: unknown) => e);
    await stranger.close();
    expect((err as ApiHttpError).status).toBe(401);
    expect(String((err as Error).message)).not.toContain('secret-session-value');
  });

  it('raises 403 for an account whose access is restricted', async () => {
    const limited = clientFor('limited');
    const err = await limited.createDocflow(DOCFLOW_TYPE, withRequestId('client-403')).catch((e: unknown) => e);
    await limited.close();
    expect((err as ApiHttpError).status).toBe(403);
  });

  it('raises 501 for a region the register does not serve', async () => {
    const err = await client
      .createDocflow(
        DOCFLOW_TYPE,
        withRequestId('client-501', (o) => ((o.object.address as { region: string }).region = 'Республика Крым')),
      )
      .catch((e: unknown) => e);
    expect((err as ApiHttpError).status).toBe(501);
  });

  it('raises a network error, not an HTTP one, when the connection is reset', async () => {
    sandbox.configure({ faultReset: 1 });
    try {
      const err = await client.createDocflow(DOCFLOW_TYPE, withRequestId('client-reset')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiNetworkError);
    } finally {
      sandbox.configure({ faultReset: 0 });
    }
  });

  it('raises a network error when the answer takes longer than the timeout', async () => {
    sandbox.configure({ latencyMs: 300 });
    const impatient = clientFor('good', 100);
    try {
      const err = await impatient.createDocflow(DOCFLOW_TYPE, withRequestId('client-timeout')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiNetworkError);
      expect((err as ApiNetworkError).reason).toMatch(/TIMEOUT/);
    } finally {
      sandbox.configure({ latencyMs: 0 });
      await impatient.close();
    }
  });

  it('gives up at the deadline on a body that trickles in: one deadline covers the answer and its whole body', async () => {
    // A byte every 20 ms: undici's own timers (headers, and the gap between body chunks)
    // never fire; only the call's deadline ends it. Without it the call would last 20 s.
    const timers = new Set<NodeJS.Timeout>();
    const trickling = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('[');
      const timer = setInterval(() => res.write(' '), 20);
      timers.add(timer);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => trickling.listen(0, '127.0.0.1', resolve));
    const { port } = trickling.address() as AddressInfo;
    const impatient = createRealtyClient({ baseUrl: `http://127.0.0.1:${port}`, sessionId: 'good', timeoutMs: 300 });
    try {
      const started = performance.now();
      const err = await impatient.suggest({ region: { name: 'trickle' } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiNetworkError);
      expect((err as ApiNetworkError).reason).toBe('TIMEOUT');
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      for (const timer of timers) clearInterval(timer);
      await impatient.close().catch(() => undefined);
      trickling.closeAllConnections();
      await new Promise((resolve) => trickling.close(resolve));
    }
  });

  it('reads the news feed from now, then every docflow created after a token, each with its requestId', async () => {
    const start = await client.news();
    expect(start.news).toEqual([]);
    const a = await client.createDocflow(DOCFLOW_TYPE, withRequestId('client-news-a'));
    const b = await client.createDocflow(
      DOCFLOW_TYPE,
      withRequestId('client-news-b', (o) => delete o.appliedDocuments.mortgageAgreement.content.signatures),
    );
    const page = await client.news(start.lastToken);
    expect(page.news.map((i) => [i.docflow.requestId, i.docflow.docflowId, i.docflow.state])).toEqual([
      ['client-news-a', a.docflow.docflowId, 'queued'],
      ['client-news-b', b.docflow.docflowId, 'suspended'],
    ]);
    expect(page.lastToken).toBe(page.news[1]!.token);
    expect((await client.news(page.lastToken)).news).toEqual([]);
  });

  it("raises the feed's failures as it raises the others: a 503 with its status, an unknown token as 400", async () => {
    sandbox.configure({ newsOutage: true });
    try {
      const down = await client.news('0').catch((e: unknown) => e);
      expect(down).toBeInstanceOf(ApiHttpError);
      expect((down as ApiHttpError).status).toBe(503);
    } finally {
      sandbox.configure({ newsOutage: false });
    }
    const unknown = await client.news('999999').catch((e: unknown) => e);
    expect((unknown as ApiHttpError).status).toBe(400);
  });
});
