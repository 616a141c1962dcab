import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { request } from 'undici';
import {
  loadRegistry,
  parseProbability,
  startSandbox,
  type RegistryObject,
  type RunningSandbox,
  type SandboxDocflow,
  type SandboxStats,
} from '../../../src/sandbox/index.js';
import { AUTH, DOCFLOW_PATH, SUGGEST, call, encumbranceRequest, post, readExample, withSandbox } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

type Candidate = Omit<RegistryObject, 'region' | 'district' | 'city' | 'settlement' | 'autonomousCounty'>;
const published = readExample<Candidate[]>('suggest-response.json');
const suggestRequest = readExample<Record<string, unknown>>('suggest-request.json');
const inNovosibirsk = (o: Candidate, changes: Partial<RegistryObject> = {}): RegistryObject => ({
  ...o,
  region: 'Новосибирский',
  city: 'Новосибирск',
  ...changes,
});
const [first, second] = published as [Candidate, Candidate];
const noSignatures = () => encumbranceRequest({ 'options.appliedDocuments.mortgageAgreement.content.signatures': undefined });

describe('sandbox authorization', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ registry: [inNovosibirsk(first)] });
  });
  afterAll(() => sandbox.close());

  it('answers 401 with an Error object when the Authorization header is absent, on both endpoints', async () => {
    for (const path of [SUGGEST, DOCFLOW_PATH]) {
      const answer = await post(sandbox, path, path === SUGGEST ? suggestRequest : encumbranceRequest(), {});
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ code: 'unauthorized', message: expect.any(String) });
    }
  });

  it('answers 401 for a session it does not accept, on both endpoints, without echoing the id', async () => {
    const headers = { authorization: 'auth.sid not-a-known-session-7f3a' };
    for (const path of [SUGGEST, DOCFLOW_PATH]) {
      const answer = await post(sandbox, path, path === SUGGEST ? suggestRequest : encumbranceRequest(), headers);
      expect(answer.status).toBe(401);
      expect(answer.text).not.toContain('7f3a');
    }
    expect(sandbox.stats().docflowsCreated).toBe(0);
  });

  it('answers 401 when reading a docflow without a session', async () => {
    const answer = await call(sandbox, 'GET', '/realty/v1/docflows/whatever', undefined, {});
    expect(answer.status).toBe(401);
  });
});

describe('sandbox suggest', () => {
  const elsewhere = inNovosibirsk(first, { objectId: '54:35:0:9999', objectCn: '54:35:000000:9999', city: 'Бердск' });
  const registry = [
    inNovosibirsk(first),
    inNovosibirsk(second),
    elsewhere,
    inNovosibirsk(first, { objectId: 'a', objectCn: '54:35:000000:1', house: '390||' }),
    inNovosibirsk(first, { objectId: 'b', objectCn: '54:35:000000:2', house: '39а|2|' }),
    inNovosibirsk(first, { objectId: 'c', objectCn: '54:35:000000:3', apartment: '121' }),
  ];
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ registry });
  });
  afterAll(() => sandbox.close());

  it('answers 400 naming region.name when the region is missing', async () => {
    const { region: _region, ...withoutRegion } = suggestRequest;
    for (const body of [withoutRegion, { ...suggestRequest, region: { name: '  ' } }, { ...suggestRequest, region: 5 }]) {
      const answer = await post(sandbox, SUGGEST, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 'validation', target: 'region.name' });
    }
  });

  it('returns both published objects for the published request, near house 39/1 included, ids intact', async () => {
    await withSandbox({ registry: [inNovosibirsk(first), inNovosibirsk(second)] }, async (own) => {
      const answer = await post(own, SUGGEST, suggestRequest);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.body).toEqual(published);
      expect(answer.text).toContain('"subjectId":150000000000');
      expect(answer.text).not.toContain('Новосибирский');
    });
  });

  it('returns near house numbers (39а) but never a longer number (390) nor another apartment or city', async () => {
    const answer = await post(sandbox, SUGGEST, suggestRequest);
    const ids = (answer.body as Candidate[]).map((c) => c.objectId).sort();
    expect(ids).toEqual(['54:35:0:5013', '54:35:0:5911', 'b']);
  });

  it('does not return a registry object of another city', async () => {
    const answer = await post(sandbox, SUGGEST, { region: { name: 'Новосибирский' }, city: { name: 'Бердск' } });
    expect((answer.body as Candidate[]).map((c) => c.objectId)).toEqual(['54:35:0:9999']);
    const novosibirsk = await post(sandbox, SUGGEST, { ...suggestRequest, house: undefined, room: undefined });
    expect((novosibirsk.body as Candidate[]).map((c) => c.objectId)).not.toContain('54:35:0:9999');
  });

  it('matches names regardless of case, ё, spacing and street-type words, on the alternate path too', async () => {
    const body = {
      region: { name: ' новосибирский ' },
      city: { name: 'НОВОСИБИРСК' },
      street: { name: 'ул.  Татьяны   Снежиной' },
      house: { number: '39/1', buildingNumber: '7' },
      room: { number: '120' },
    };
    const answer = await post(sandbox, '/realty/v1/cadastre/suggest', body);
    expect(answer.status).toBe(200);
    expect((answer.body as Candidate[]).map((c) => c.objectId)).toEqual(['54:35:0:5013']);
  });
});

describe('sandbox docflow creation', () => {
  it('accepts the published encumbrance request as it is with 200 queued', async () => {
    // A life slower than the test: the read finds the docflow as created.
    await withSandbox({ lifecycleMs: 60_000 }, async (sandbox) => {
      const answer = await post(sandbox, DOCFLOW_PATH, readExample('encumbrance-request.json'));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ type: 'encumbrance_request', state: 'queued', requestId: 'client-request-12345' });
      const { docflowId } = answer.body as { docflowId: string };
      const read = await call(sandbox, 'GET', `/realty/v1/docflows/${docflowId}`);
      expect(read.body).toEqual(answer.body);
    });
  });

  it('answers 201 suspended with a signature requirement when the agreement has no signatures', async () => {
    await withSandbox({}, async (sandbox) => {
      for (const signatures of [undefined, []]) {
        const body = encumbranceRequest({
          requestId: `r-${String(signatures)}`,
          'options.appliedDocuments.mortgageAgreement.content.signatures': signatures,
        });
        const answer = await post(sandbox, DOCFLOW_PATH, body);
        expect(answer.status).toBe(201);
        // One application per signer (the owner and the bank's representative), initials only.
        expect(answer.body).toMatchObject({
          state: 'suspended',
          requirements: {
            signature: [
              { role: 'owner', person: { surname: 'Т.', name: 'Т.' }, files: [{ id: expect.any(String), type: 'application' }] },
              { role: 'representative', files: [{ id: expect.any(String), type: 'application' }] },
            ],
          },
        });
        expect(answer.text).not.toContain('Тестов');
      }
    });
  });

  it('answers 400 listing options.object.cadastralNumber when it is missing, and creates nothing', async () => {
    await withSandbox({}, async (sandbox) => {
      const answer = await post(sandbox, DOCFLOW_PATH, encumbranceRequest({ 'options.object.cadastralNumber': undefined }));
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        code: 'validation',
        message: 'The request is not valid',
        target: 'options',
        errors: [{ code: 'required', message: expect.any(String), target: 'options.object.cadastralNumber' }],
      });
      expect(sandbox.stats().docflowsCreated).toBe(0);
    });
  });

  it('lists every problem of a request as nested errors, deep fields included', async () => {
    await withSandbox({}, async (sandbox) => {
      const body = encumbranceRequest({
        'options.object.cadastralNumber': '47-14-1203001-814',
        'options.whoseRightRestricted.individualOwnership.owner.person.snils': undefined,
        'options.whoUseRestriction.encumbrancer.0.organization.inn': '123',
        'options.whoUseRestriction.encumbrancer.0.representative.person.gender': 'unknown',
        'options.appliedDocuments.mortgageAgreement.content.info.contentPointer': undefined,
      });
      const answer = await post(sandbox, DOCFLOW_PATH, body);
      expect(answer.status).toBe(400);
      const errors = (answer.body as { errors: Array<{ code: string; target: string }> }).errors;
      expect(errors.map((e) => [e.code, e.target])).toEqual([
        ['format', 'options.object.cadastralNumber'],
        ['required', 'options.whoseRightRestricted.individualOwnership.owner.person.snils'],
        ['format', 'options.whoUseRestriction.encumbrancer[0].organization.inn'],
        ['format', 'options.whoUseRestriction.encumbrancer[0].representative.person.gender'],
        ['required', 'options.appliedDocuments.mortgageAgreement.content.info.contentPointer'],
      ]);
    });
  });

  it('accepts joint ownership of spouses in place of a single owner', async () => {
    await withSandbox({}, async (sandbox) => {
      const owner = encumbranceRequest().options as { whoseRightRestricted: { individualOwnership: { owner: unknown } } };
      const spouse = owner.whoseRightRestricted.individualOwnership.owner;
      const body = encumbranceRequest({
        'options.whoseRightRestricted': { cooperativeOwnership: { spouse1: spouse, spouse2: spouse } },
      });
      expect((await post(sandbox, DOCFLOW_PATH, body)).status).toBe(200);
    });
  });

  it('answers 400 for malformed JSON and for an unknown docflow type', async () => {
    await withSandbox({}, async (sandbox) => {
      const malformed = await post(sandbox, DOCFLOW_PATH, '{"options": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ code: 'validation', target: 'body' });
      const unknown = await post(sandbox, '/realty/v1/docflows/encumbrance_removal', encumbranceRequest());
      expect(unknown.body).toMatchObject({ code: 'validation', target: 'docflowType' });
      expect(sandbox.stats().docflowCalls['400']).toBe(2);
    });
  });

  it('answers 403 for a restricted session and creates nothing', async () => {
    await withSandbox({ sessions: ['demo-session', 'limited'], restrictedSessions: ['limited'] }, async (sandbox) => {
      const answer = await post(sandbox, DOCFLOW_PATH, encumbranceRequest(), { authorization: 'auth.sid limited' });
      expect(answer.status).toBe(403);
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 0, docflowCalls: { '403': 1 } });
    });
  });

  it('answers 501 egronUnavailable every time for an EGRON region and creates nothing', async () => {
    await withSandbox({ egronRegions: ['НОВОСИБИРСКАЯ'] }, async (sandbox) => {
      for (let i = 0; i < 3; i += 1) {
        const answer = await post(sandbox, DOCFLOW_PATH, encumbranceRequest());
        expect(answer.status).toBe(501);
        expect(answer.body).toMatchObject({ code: 'egronUnavailable' });
      }
      expect(sandbox.docflows()).toEqual([]);
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 0, repeatedRequestIds: 0 });
    });
  });

  it('creates a new docflow for a repeated requestId by default and counts the repeat and the doubled id', async () => {
    await withSandbox({}, async (sandbox) => {
      const once = await post(sandbox, DOCFLOW_PATH, noSignatures());
      const twice = await post(sandbox, DOCFLOW_PATH, readExample('encumbrance-request.json'));
      expect([once.status, twice.status]).toEqual([201, 200]);
      expect((twice.body as { docflowId: string }).docflowId).not.toBe((once.body as { docflowId: string }).docflowId);
      expect(sandbox.docflows().map((d) => d.requestId)).toEqual(['client-request-12345', 'client-request-12345']);
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 2, repeatedRequestIds: 1, requestIdsWithSeveralDocflows: 1 });
      // A third docflow of the same id is one more repeat, still one id with several docflows.
      expect((await post(sandbox, DOCFLOW_PATH, encumbranceRequest())).status).toBe(200);
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 3, repeatedRequestIds: 2, requestIdsWithSeveralDocflows: 1 });
    });
  });

  it('returns the first docflow, same status and body, for a repeated requestId with requestIds dedupe', async () => {
    await withSandbox({ requestIds: 'dedupe' }, async (sandbox) => {
      const once = await post(sandbox, DOCFLOW_PATH, noSignatures());
      const twice = await post(sandbox, DOCFLOW_PATH, readExample('encumbrance-request.json'));
      expect(twice.status).toBe(201);
      expect(twice.body).toEqual(once.body);
      expect(sandbox.docflows()).toHaveLength(1);
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 1, repeatedRequestIds: 1, requestIdsWithSeveralDocflows: 0 });
    });
  });

  it('switches to dedupe at runtime through /__sandbox/config and then answers the first docflow', async () => {
    await withSandbox({}, async (sandbox) => {
      const first = await post(sandbox, DOCFLOW_PATH, encumbranceRequest());
      await post(sandbox, DOCFLOW_PATH, encumbranceRequest());
      expect((await post(sandbox, '/__sandbox/config', { requestIds: 'dedupe' }, {})).status).toBe(204);
      const third = await post(sandbox, DOCFLOW_PATH, encumbranceRequest());
      expect(third.body).toEqual(first.body);
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 2, repeatedRequestIds: 2, requestIdsWithSeveralDocflows: 1 });
      expect((await post(sandbox, '/__sandbox/config', { requestIds: 'sometimes' }, {})).status).toBe(400);
    });
  });

  it('does not count a retry after a 501 as a repeated requestId', async () => {
    await withSandbox({ egronRegions: ['Новосибирская'] }, async (sandbox) => {
      expect((await post(sandbox, DOCFLOW_PATH, encumbranceRequest())).status).toBe(501);
      expect((await post(sandbox, '/__sandbox/config', { egronRegions: [] }, {})).status).toBe(204);
      expect((await post(sandbox, DOCFLOW_PATH, encumbranceRequest())).status).toBe(200);
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 1, repeatedRequestIds: 0, docflowCalls: { '501': 1, '200': 1 } });
    });
  });

  it('makes the next call succeed once configure() turns EGRON off', async () => {
    await withSandbox({ egronRegions: ['Новосибирская'] }, async (sandbox) => {
      expect((await post(sandbox, DOCFLOW_PATH, encumbranceRequest())).status).toBe(501);
      sandbox.configure({ egronRegions: [] });
      expect((await post(sandbox, DOCFLOW_PATH, encumbranceRequest())).status).toBe(200);
    });
  });
});

describe('sandbox faults', () => {
  const statuses = async (seed: number): Promise<number[]> => {
    const seen: number[] = [];
    await withSandbox({ seed, fault501: 0.5 }, async (sandbox) => {
      for (let i = 0; i < 20; i += 1) seen.push((await post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `s-${i}` }))).status);
      expect(sandbox.stats().docflowsCreated).toBe(seen.filter((s) => s === 200).length);
    });
    return seen;
  };

  it('repeats the same sequence of faults for the same seed', async () => {
    const a = await statuses(7);
    expect(await statuses(7)).toEqual(a);
    expect(new Set(a)).toEqual(new Set([200, 501]));
    expect(await statuses(8)).not.toEqual(a);
  });

  it('drops the connection without an answer on a reset and creates nothing', async () => {
    await withSandbox({ faultReset: 1 }, async (sandbox) => {
      await expect(post(sandbox, DOCFLOW_PATH, encumbranceRequest())).rejects.toThrow();
      await expect(post(sandbox, SUGGEST, suggestRequest)).rejects.toThrow();
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 0, docflowCalls: { reset: 1 }, faultsInjected: { reset: 2 } });
    });
  });

  it('creates the docflow on a lost answer while the client sees a socket error', async () => {
    await withSandbox({ faultLost: 1 }, async (sandbox) => {
      await expect(post(sandbox, DOCFLOW_PATH, encumbranceRequest())).rejects.toThrow();
      const listed = await call(sandbox, 'GET', '/__sandbox/docflows', undefined, {});
      expect(listed.body).toEqual([expect.objectContaining({ requestId: 'client-request-12345', status: 200, state: 'queued' })]);
      const stats = (await call(sandbox, 'GET', '/__sandbox/stats', undefined, {})).body as SandboxStats;
      expect(stats).toMatchObject({ docflowsCreated: 1, docflowCalls: { lost: 1 }, faultsInjected: { lost: 1 } });
      sandbox.configure({ faultLost: 0 });
      // By default the retry of a lost answer is a second docflow: the duplicate the product must avoid.
      const retry = await post(sandbox, DOCFLOW_PATH, encumbranceRequest());
      expect((retry.body as { docflowId: string }).docflowId).not.toBe((listed.body as SandboxDocflow[])[0]?.docflowId);
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 2, repeatedRequestIds: 1, requestIdsWithSeveralDocflows: 1 });
    });
  });

  it('does its work within the latency: a client that gives up before the answer still leaves its docflow created', async () => {
    await withSandbox({ latencyMs: 2000 }, async (sandbox) => {
      const gaveUp = request(`${sandbox.url}${DOCFLOW_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...AUTH },
        body: JSON.stringify(encumbranceRequest()),
        signal: AbortSignal.timeout(200),
      });
      await expect(gaveUp).rejects.toThrow();
      // As at a gateway whose work was under way: the timeout a worker sees is not "nothing happened".
      // No deadline but the test's own (vitest.config.ts).
      await waitFor(() => sandbox.stats().docflowsCreated !== 0, { timeoutMs: 30_000, intervalMs: 10, what: 'the docflow' });
      expect(sandbox.docflows()).toEqual([expect.objectContaining({ requestId: 'client-request-12345' })]);
    });
  });

  it('answers 500, 502 or 503 on a 5xx fault and creates nothing', async () => {
    await withSandbox({ fault5xx: 1, seed: 1 }, async (sandbox) => {
      const seen = new Set<number>();
      for (let i = 0; i < 12; i += 1) seen.add((await post(sandbox, DOCFLOW_PATH, encumbranceRequest())).status);
      expect([...seen].every((s) => [500, 502, 503].includes(s))).toBe(true);
      expect(sandbox.stats().docflowsCreated).toBe(0);
    });
  });
});

describe('sandbox housekeeping', () => {
  it('reports every stats field at /__sandbox/stats without a session', async () => {
    await withSandbox({ registry: [inNovosibirsk(first)] }, async (sandbox) => {
      await post(sandbox, SUGGEST, suggestRequest);
      await post(sandbox, DOCFLOW_PATH, encumbranceRequest());
      const answer = await call(sandbox, 'GET', '/__sandbox/stats', undefined, {});
      expect(answer.body).toEqual({
        docflowsCreated: 1,
        suggestCalls: 1,
        docflowCalls: { '200': 1 },
        repeatedRequestIds: 0,
        requestIdsWithSeveralDocflows: 0,
        faultsInjected: {},
        docflowStates: { queued: 1 },
        operationCalls: {},
        payments: 0,
        logins: 0,
        loginsRefused: 0,
        contents: { uploads: 0, bytes: 0, refusedDocflows: 0 },
      });
    });
  });

  it('answers 404 for unknown paths and docflows, 405 for a wrong method, 400 for bad settings', async () => {
    await withSandbox({}, async (sandbox) => {
      expect((await call(sandbox, 'GET', '/realty/v1/nothing')).body).toMatchObject({ code: 'notFound' });
      expect((await call(sandbox, 'GET', '/realty/v1/docflows/unknown-id')).status).toBe(404);
      expect((await call(sandbox, 'GET', SUGGEST)).status).toBe(405);
      expect((await call(sandbox, 'DELETE', '/realty/v1/docflows/x')).status).toBe(405);
      expect((await post(sandbox, '/__sandbox/config', { fault501: 2 }, {})).status).toBe(400);
      await expect(startSandbox({ registry: [], requestIds: 'sometimes' as 'ignore' })).rejects.toThrow(/requestIds/);
    });
  });

  it('closes with idle keep-alive connections open', async () => {
    const sandbox = await startSandbox({ registry: [] });
    await request(`${sandbox.url}/__sandbox/stats`).then((a) => a.body.text());
    const started = Date.now();
    await sandbox.close();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a registry file entry with a message naming the file and the entry index', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-registry-'));
    try {
      const file = join(dir, 'registry.json');
      await writeFile(file, JSON.stringify([inNovosibirsk(first), { ...inNovosibirsk(second), subjectId: '150000000000' }]));
      await expect(loadRegistry(file)).rejects.toThrow(/registry\.json: entry 1 .*subjectId/);
      await writeFile(file, JSON.stringify([inNovosibirsk(first)]));
      expect(await loadRegistry(file)).toEqual([inNovosibirsk(first)]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects a probability outside [0, 1] or not a number, naming the flag', () => {
    expect(() => parseProbability('--fault-501', '1.5')).toThrow(/--fault-501/);
    expect(() => parseProbability('--fault-lost', 'abc')).toThrow(/--fault-lost .*between 0 and 1/);
    expect(() => parseProbability('--fault-5xx', '')).toThrow(/--fault-5xx/);
    expect(parseProbability('--fault-reset', '0.25')).toBe(0.25);
  });
});
