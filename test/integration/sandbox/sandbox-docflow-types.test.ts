/**
 * The four docflow types beside encumbrance_request, in the real sandbox over HTTP
 * (docflow-types.md): the published examples accepted as they are, the checks of each
 * type, the registry's mortgage records (a registration adds one, a lift removes it), the
 * extracts, and the packets and actions on a docflow in processing.
 */
import { describe, it, expect } from 'vitest';
import { request } from 'undici';
import { docflowSchema, NEWS_PATH, newsPageSchema, type Docflow, type NewsItem } from '../../../src/domain/gateway.js';
import {
  startSandbox,
  type EncumbranceRecord,
  type RegistryObject,
  type RunningSandbox,
  type SandboxDocflow,
} from '../../../src/sandbox/index.js';
import { withPaths } from '../../helpers/json-path.js';
import { AUTH, call, encumbranceRequest, post, readExample, withSandbox } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

/** Short lives for what completes; a parent lives long enough in `sent` for a packet or an action to reach it. */
const LIFE_MS = 40;
const PARENT_MS = 1000;
const POLL = { timeoutMs: 15_000, intervalMs: 10 };

const LIFT = 'cessation_encumbrance_request';
const EXTRACT = 'object_request';
const PACKET = 'additional_packet_request';
const ACTION = 'action_request';

/** The published lift's object, record and bank. */
const LIFTED_OBJECT = '66:41:0704007:1391';
const BANK_INN = '6663003127';
const LIFTED_RECORD: EncumbranceRecord = { number: '2001-118586', date: '2001-12-11', type: 'mortgage', encumbrancerInn: BANK_INN };
/** The published extract request's object (and the published registration's). */
const EXTRACT_OBJECT = '47:14:1203001:814';

type Json = Record<string, unknown>;
const example = (name: string, changes: Record<string, unknown> = {}): Json => withPaths(readExample(`${name}.json`), changes);
const lift = (changes: Record<string, unknown> = {}) => example('cessation-encumbrance-request', changes);
const extract = (changes: Record<string, unknown> = {}) => example('object-request', changes);
const packet = (parent: string, changes: Record<string, unknown> = {}) =>
  example('additional-packet-request', { 'options.docflowId': parent, ...changes });
const action = (parent: string, actionType: string, changes: Record<string, unknown> = {}) =>
  example('action-request', { 'options.docflowId': parent, 'options.actionType': actionType, ...changes });

function registryObject(cadastralNumber: string, encumbrances?: EncumbranceRecord[]): RegistryObject {
  return {
    objectId: cadastralNumber,
    subjectId: 150000000000,
    regionId: 150401000000,
    settlementId: 150401379000,
    srcObject: 1,
    regionKey: 166,
    objectCn: cadastralNumber,
    street: 'ЛЕНИНА|УЛ',
    house: '1||',
    apartment: '81',
    addressNotes: 'г Екатеринбург, ул Ленина, д. 1, 81',
    region: 'Свердловская область',
    ...(encumbrances === undefined ? {} : { encumbrances }),
  };
}

async function create(sandbox: RunningSandbox, type: string, body: unknown, status = 200): Promise<Docflow> {
  const answer = await post(sandbox, `/realty/v1/docflows/${type}`, body);
  expect(answer.status, answer.text).toBe(status);
  return docflowSchema.parse(answer.body);
}

async function refused(sandbox: RunningSandbox, type: string, body: unknown, session?: string) {
  const answer = await post(
    sandbox,
    `/realty/v1/docflows/${type}`,
    body,
    session === undefined ? undefined : { authorization: `auth.sid ${session}` },
  );
  expect(answer.status, answer.text).toBe(400);
  return answer.body as { code: string; target: string; message: string; errors: Array<{ code: string; target: string }> };
}

async function read(sandbox: RunningSandbox, docflowId: string): Promise<Docflow> {
  const answer = await call(sandbox, 'GET', `/realty/v1/docflows/${docflowId}`);
  expect(answer.status, answer.text).toBe(200);
  return docflowSchema.parse(answer.body);
}

const until = (sandbox: RunningSandbox, docflowId: string, state: string) =>
  waitFor(
    async () => {
      const docflow = await read(sandbox, docflowId);
      return docflow.state === state && docflow;
    },
    { ...POLL, what: `docflow ${docflowId} ${state}` },
  );

const recordsOf = async (sandbox: RunningSandbox, cadastralNumber: string): Promise<EncumbranceRecord[] | undefined> => {
  const answer = await call(sandbox, 'GET', '/__sandbox/registry', undefined, {});
  expect(answer.status).toBe(200);
  return (answer.body as Array<{ cadastralNumber: string; encumbrances: EncumbranceRecord[] }>).find(
    (o) => o.cadastralNumber === cadastralNumber,
  )?.encumbrances;
};

async function download(link: string | undefined) {
  const answer = await request(link!, { headers: AUTH });
  const bytes = Buffer.from(await answer.body.arrayBuffer());
  return { status: answer.statusCode, type: answer.headers['content-type'], bytes, text: bytes.toString('utf8') };
}

async function feed(sandbox: RunningSandbox): Promise<NewsItem[]> {
  const answer = await call(sandbox, 'GET', `${NEWS_PATH}?after=0&limit=1000`);
  return newsPageSchema.parse(answer.body).news;
}

/** An encumbrance_request that stays `sent` for PARENT_MS; later docflows get the short life again. */
async function sentParent(sandbox: RunningSandbox, requestId: string): Promise<string> {
  sandbox.configure({ lifecycleMs: PARENT_MS });
  const parent = await create(sandbox, 'encumbrance_request', encumbranceRequest({ requestId }));
  sandbox.configure({ lifecycleMs: LIFE_MS });
  await until(sandbox, parent.docflowId, 'sent');
  return parent.docflowId;
}

describe('sandbox: the other docflow types', () => {
  it('accepts the published lift and extract requests as they are, completes them, and shows them by their own type', async () => {
    const registry = [registryObject(LIFTED_OBJECT, [LIFTED_RECORD]), registryObject(EXTRACT_OBJECT)];
    await withSandbox({ registry, lifecycleMs: LIFE_MS }, async (sandbox) => {
      const lifted = await create(sandbox, LIFT, lift());
      expect(lifted).toMatchObject({ state: 'queued', type: LIFT, docflowType: LIFT, requestId: 'request-M4M5' });
      const ordered = await create(sandbox, EXTRACT, extract());
      expect(ordered).toMatchObject({ state: 'queued', type: EXTRACT, docflowType: EXTRACT });

      const liftDone = await until(sandbox, lifted.docflowId, 'completed');
      expect(liftDone.type).toBe(LIFT);
      expect(await recordsOf(sandbox, LIFTED_OBJECT)).toEqual([]);
      const [notice, ...moreNotices] = liftDone.result?.files ?? [];
      expect(moreNotices).toEqual([]);
      expect(notice?.type).toBe('outdoc');
      const archive = await download(notice?.contentLink);
      expect(archive.status).toBe(200);
      expect(archive.type).toBe('application/zip');
      expect(archive.bytes.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
      // Stored, not compressed: the notice's text is in the archive as it is.
      expect(archive.text).toContain(`number="${LIFTED_RECORD.number}"`);
      expect(archive.text).toContain(LIFTED_OBJECT);

      const extractDone = await until(sandbox, ordered.docflowId, 'completed');
      expect(extractDone.result?.files?.map((f) => f.type)).toEqual(['extract_info:xml', 'extract_info:pdf']);

      const items = await feed(sandbox);
      for (const [docflowId, type] of [
        [lifted.docflowId, LIFT],
        [ordered.docflowId, EXTRACT],
      ] as const) {
        const mine = items.filter((i) => i.docflow.docflowId === docflowId);
        expect(mine.map((i) => i.docflow.state)).toEqual(['queued', 'sent', 'completed']);
        expect(mine.every((i) => i.docflow.docflowType === type && i.docflow.type === type)).toBe(true);
      }
    });
  });

  it('accepts the published packet and action as they are while their parent is sent, the packet under either name', async () => {
    await withSandbox({ lifecycleMs: LIFE_MS }, async (sandbox) => {
      const parent = await sentParent(sandbox, 'parent');
      const more = await create(sandbox, PACKET, packet(parent));
      expect(more).toMatchObject({ state: 'queued', type: PACKET, docflowType: PACKET, requestId: 'client-request-12345' });
      const alias = await create(sandbox, 'additional_package_request', packet(parent, { requestId: 'by-alias' }));
      expect(alias.type).toBe(PACKET);
      const cancel = await create(sandbox, ACTION, example('action-request', { 'options.docflowId': parent }));
      expect(cancel).toMatchObject({ state: 'queued', type: ACTION, docflowType: ACTION });
      for (const id of [more.docflowId, alias.docflowId, cancel.docflowId]) await until(sandbox, id, 'completed');
      const listed = (await call(sandbox, 'GET', '/__sandbox/docflows', undefined, {})).body as SandboxDocflow[];
      expect(listed.filter((d) => d.parentDocflowId === parent).map((d) => d.type)).toEqual([PACKET, PACKET, ACTION]);
      const items = await feed(sandbox);
      expect(items.filter((i) => i.docflow.docflowId === cancel.docflowId).map((i) => i.docflow.docflowType)).toEqual([
        ACTION,
        ACTION,
        ACTION,
      ]);
    });
  });

  it('answers 400 naming the target of each required option missing, and creates nothing', async () => {
    const cases: Array<[string, Json, string]> = [
      [EXTRACT, extract({ 'options.type': undefined }), 'objectRequest.options.type'],
      [EXTRACT, extract({ 'options.cadastralNumber': undefined }), 'objectRequest.options.cadastralNumber'],
      [EXTRACT, extract({ 'options.cadastralNumber': '47-14-1203001-814' }), 'objectRequest.options.cadastralNumber'],
      [EXTRACT, extract({ options: undefined }), 'objectRequest.options'],
      [LIFT, lift({ 'options.encumbranceType': undefined }), 'cessationEncumbranceRequest.options.encumbranceType'],
      [LIFT, lift({ 'options.object': undefined }), 'cessationEncumbranceRequest.options.object'],
      [LIFT, lift({ 'options.object.cadastralNumber': undefined }), 'cessationEncumbranceRequest.options.object.cadastralNumber'],
      [LIFT, lift({ 'options.whoseRightRestricted': undefined }), 'cessationEncumbranceRequest.options.whoseRightRestricted'],
      [LIFT, lift({ 'options.whoUseRestriction': undefined }), 'cessationEncumbranceRequest.options.whoUseRestriction'],
      [LIFT, lift({ 'options.whoUseRestriction.encumbrancer': [] }), 'cessationEncumbranceRequest.options.whoUseRestriction.encumbrancer'],
      [
        LIFT,
        lift({ 'options.whoUseRestriction.encumbrancer.0.organization.inn': undefined }),
        'cessationEncumbranceRequest.options.whoUseRestriction.encumbrancer[0].organization.inn',
      ],
      [
        LIFT,
        lift({ 'options.whoUseRestriction.encumbrancer.0.representative.attorney': undefined }),
        'cessationEncumbranceRequest.options.whoUseRestriction.encumbrancer[0].representative.attorney',
      ],
      [LIFT, lift({ 'options.registrationRecord.date': '2001-13-11' }), 'cessationEncumbranceRequest.options.registrationRecord.date'],
      [PACKET, packet('any', { 'options.docflowId': undefined }), 'additionalPacketRequest.options.docflowId'],
      [PACKET, packet('any', { 'options.additionalDocuments': undefined }), 'additionalPacketRequest.options.additionalDocuments'],
      [
        PACKET,
        packet('any', { 'options.additionalDocuments.0.documents.0.content.info.contentPointer': undefined }),
        'additionalPacketRequest.options.additionalDocuments[0].documents[0].content.info.contentPointer',
      ],
      [
        PACKET,
        packet('any', { 'options.additionalDocuments.0.docflowMember': undefined }),
        'additionalPacketRequest.options.additionalDocuments[0].docflowMember',
      ],
      [ACTION, action('any', 'cancel', { 'options.actionType': undefined }), 'actionRequest.options.actionType'],
      [ACTION, action('any', 'cancel', { 'options.docflowId': undefined }), 'actionRequest.options.docflowId'],
      [ACTION, action('any', 'cancel', { 'options.docflowMember': undefined }), 'actionRequest.options.docflowMember'],
      [
        ACTION,
        action('any', 'cancel', { 'options.docflowMember.0.person.snils': undefined }),
        'actionRequest.options.docflowMember[0].person.snils',
      ],
    ];
    await withSandbox({}, async (sandbox) => {
      for (const [type, body, target] of cases) {
        const error = await refused(sandbox, type, body);
        expect(error, target).toMatchObject({ code: 'validation', target, errors: [expect.objectContaining({ target })] });
        expect(error.errors, target).toHaveLength(1);
      }
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 0, docflowCalls: { '400': cases.length } });
    });
  });

  it('answers 400 for a value outside the enumerations, and takes each value inside them', async () => {
    const registry = [registryObject(EXTRACT_OBJECT)];
    await withSandbox({ registry, lifecycleMs: LIFE_MS }, async (sandbox) => {
      const outside: Array<[string, Json, string]> = [
        [EXTRACT, extract({ 'options.type': 'full' }), 'objectRequest.options.type'],
        [LIFT, lift({ 'options.encumbranceType': 'pledge' }), 'cessationEncumbranceRequest.options.encumbranceType'],
        [
          LIFT,
          lift({ 'options.whoUseRestriction.encumbrancer.0.representative.representativeType': 'proxy' }),
          'cessationEncumbranceRequest.options.whoUseRestriction.encumbrancer[0].representative.representativeType',
        ],
        [ACTION, action('any', 'delete'), 'actionRequest.options.actionType'],
      ];
      for (const [type, body, target] of outside) {
        expect(await refused(sandbox, type, body), target).toMatchObject({
          code: 'validation',
          target,
          errors: [{ code: 'format', target }],
        });
      }
      for (const type of ['info', 'base', 'ownership']) await create(sandbox, EXTRACT, extract({ 'options.type': type }));
      await create(sandbox, LIFT, lift({ 'options.encumbranceType': 'mortgageInLaw' }));
      // By charter: no power of attorney needed.
      const byCharter = lift({
        'options.whoUseRestriction.encumbrancer.0.representative.representativeType': 'authorized',
        'options.whoUseRestriction.encumbrancer.0.representative.attorney': undefined,
        'options.appliedDocuments': {
          other: [{ documentType: 'other', content: { info: { contentPointer: { id: 'c-1' } }, signatures: [{ id: 's-1' }] } }],
        },
      });
      await create(sandbox, LIFT, byCharter);
      // The documentation's table sends an array of objects.
      await create(sandbox, LIFT, lift({ 'options.object': [(lift().options as Json).object] }));
      const unknownType = await refused(sandbox, 'encumbrance_removal', extract());
      expect(unknownType).toMatchObject({ code: 'validation', target: 'docflowType' });
      expect(unknownType.message).toContain(ACTION);
    });
  });

  it('asks the bank to sign a lift whose power of attorney carries no signature (201), its representatives only', async () => {
    await withSandbox({ lifecycleMs: LIFE_MS }, async (sandbox) => {
      const unsigned = await create(
        sandbox,
        LIFT,
        lift({ 'options.whoUseRestriction.encumbrancer.0.representative.attorney.appliedDocument.signatures': undefined }),
        201,
      );
      expect(unsigned.state).toBe('suspended');
      expect(unsigned.requirements?.signature?.map((s) => (s as { role?: string }).role)).toEqual(['representative']);
      expect(JSON.stringify(unsigned.requirements)).not.toMatch(/Иван|00000000055/);
    });
  });

  it('refuses with --strict-contents a lift naming a power of attorney never uploaded, naming where', async () => {
    await withSandbox({ strictContents: true }, async (sandbox) => {
      const error = await refused(sandbox, LIFT, lift());
      const at = 'cessationEncumbranceRequest.options.whoUseRestriction.encumbrancer[0].representative.attorney.appliedDocument';
      expect(error.errors.map((e) => e.target)).toEqual([`${at}.info.contentPointer.id`, `${at}.signatures[0].id`]);
    });
  });

  it('lifts a record when the docflow completes and removes it: a second lift of it, another date or another bank end in error', async () => {
    const otherBank: EncumbranceRecord = { number: '2015-77', date: '2015-03-04', type: 'mortgage', encumbrancerInn: '7707083893' };
    const registry = [registryObject(LIFTED_OBJECT, [LIFTED_RECORD, otherBank])];
    await withSandbox({ registry, lifecycleMs: LIFE_MS }, async (sandbox) => {
      // Both accepted at creation: the registry decides when each would complete, in their order.
      const first = await create(sandbox, LIFT, lift({ requestId: 'lift-1' }));
      const second = await create(sandbox, LIFT, lift({ requestId: 'lift-2' }));
      const wrongDate = await create(
        sandbox,
        LIFT,
        lift({ requestId: 'lift-3', 'options.registrationRecord': { number: otherBank.number, date: '2015-03-05' } }),
      );
      const notOurs = await create(
        sandbox,
        LIFT,
        lift({ requestId: 'lift-4', 'options.registrationRecord': { number: otherBank.number, date: otherBank.date } }),
      );

      await until(sandbox, first.docflowId, 'completed');
      const twice = await until(sandbox, second.docflowId, 'error');
      expect(twice.error).toMatchObject({ code: 'registrationRefused', context: { reason: 'noSuchRecord' } });
      expect(twice.error?.message).toContain(LIFTED_RECORD.number);
      expect(twice).not.toHaveProperty('result');
      expect((await until(sandbox, wrongDate.docflowId, 'error')).error).toMatchObject({ context: { reason: 'dateDiffers' } });
      const another = await until(sandbox, notOurs.docflowId, 'error');
      expect(another.error).toMatchObject({ code: 'registrationRefused', context: { reason: 'anotherEncumbrancer' } });
      expect(another.error?.message).not.toContain(BANK_INN);
      expect(await recordsOf(sandbox, LIFTED_OBJECT)).toEqual([otherBank]);
    });
  });

  it('adds a record when a registration completes, and decides a lift when it would complete, not when it is made', async () => {
    // Each step half a second: both docflows are made long before either completes.
    await withSandbox({ lifecycleMs: PARENT_MS / 2 }, async (sandbox) => {
      const registered = await create(sandbox, 'encumbrance_request', encumbranceRequest({ requestId: 'reg-1' }));
      const createdAt = ((await call(sandbox, 'GET', '/__sandbox/docflows', undefined, {})).body as SandboxDocflow[])[0]!.createdAt;
      // The number its extract shows: the object's, then the creation's (the first).
      const coming = { number: `${EXTRACT_OBJECT}-000001`, date: createdAt.slice(0, 10) };
      const lifted = await create(
        sandbox,
        LIFT,
        lift({ 'options.object.cadastralNumber': EXTRACT_OBJECT, 'options.registrationRecord': coming }),
      );
      // The lift is accepted although the registry holds no such record yet.
      expect(await recordsOf(sandbox, EXTRACT_OBJECT)).toBeUndefined();
      const done = await until(sandbox, registered.docflowId, 'completed');
      expect((await download(done.result?.files?.[0]?.contentLink)).text).toContain(coming.number);
      await until(sandbox, lifted.docflowId, 'completed');
      expect(await recordsOf(sandbox, EXTRACT_OBJECT)).toEqual([]);

      sandbox.configure({ lifecycleMs: LIFE_MS });
      const again = await create(
        sandbox,
        'encumbrance_request',
        encumbranceRequest({ requestId: 'reg-3', 'options.encumbranceType': 'mortgageInLaw' }),
      );
      await until(sandbox, again.docflowId, 'completed');
      const listed = (await call(sandbox, 'GET', '/__sandbox/docflows', undefined, {})).body as SandboxDocflow[];
      expect(await recordsOf(sandbox, EXTRACT_OBJECT)).toEqual([
        { number: `${EXTRACT_OBJECT}-000003`, date: listed[2]!.createdAt.slice(0, 10), type: 'mortgageInLaw', encumbrancerInn: BANK_INN },
      ]);
    });
  });

  it('serves the extract files of each type, naming the object and its records, and ends in error for an object the registry does not know', async () => {
    const registry = [registryObject(EXTRACT_OBJECT, [{ ...LIFTED_RECORD, number: '47-1-2020-5' }])];
    await withSandbox({ registry, lifecycleMs: LIFE_MS }, async (sandbox) => {
      const expected: Record<string, string[]> = {
        info: ['extract_info:xml', 'extract_info:pdf'],
        ownership: ['extract_ownership:xml', 'extract_ownership:pdf'],
        base: ['outdoc'],
      };
      for (const [type, files] of Object.entries(expected)) {
        const created = await create(sandbox, EXTRACT, extract({ 'options.type': type, requestId: `x-${type}` }));
        const done = await until(sandbox, created.docflowId, 'completed');
        expect(
          done.result?.files?.map((f) => f.type),
          type,
        ).toEqual(files);
        for (const file of done.result?.files ?? []) {
          const got = await download(file.contentLink);
          expect(got.status, file.type).toBe(200);
          const format = file.type!.split(':').at(-1);
          expect(got.type, file.type).toBe(format === 'xml' ? 'application/xml' : format === 'pdf' ? 'application/pdf' : 'application/zip');
          expect(got.text, file.type).toContain(EXTRACT_OBJECT);
          expect(got.text, file.type).toContain('47-1-2020-5');
          expect(got.text, file.type).not.toMatch(/Тест|000-000-000/);
          if (format === 'xml') {
            expect(got.text.startsWith('<?xml')).toBe(true);
            expect(file.signatures?.map((s) => s.type)).toEqual(['signature']);
            const signature = await download(file.signatures?.[0]?.contentLink);
            expect(signature).toMatchObject({ status: 200, type: 'application/x-pkcs7-signature' });
          }
          if (format === 'pdf') expect(got.text.startsWith('%PDF-')).toBe(true);
          // The same file twice is the same bytes.
          expect((await download(file.contentLink)).bytes.equals(got.bytes)).toBe(true);
        }
      }
      const unknown = await create(sandbox, EXTRACT, extract({ 'options.cadastralNumber': '66:41:0000000:1' }));
      const failed = await until(sandbox, unknown.docflowId, 'error');
      expect(failed.error).toMatchObject({ code: 'objectNotFound' });
      expect(failed.error?.message).toContain('66:41:0000000:1');
    });
  });

  it("refuses a packet or an action unless its parent exists, is the same account's and is sent", async () => {
    await withSandbox({ sessions: ['demo-session', 'other-bank'], lifecycleMs: LIFE_MS }, async (sandbox) => {
      const done = await create(sandbox, 'encumbrance_request', encumbranceRequest({ requestId: 'done' }));
      await until(sandbox, done.docflowId, 'completed');
      const bodies = (id: string): Array<[string, Json]> => [
        [PACKET, packet(id)],
        [ACTION, action(id, 'cancel')],
        [ACTION, action(id, 'suspend')],
      ];

      // While it is sent: another account may not, the one that made it may.
      const parent = await sentParent(sandbox, 'parent');
      for (const [type, body] of bodies(parent)) {
        expect(await refused(sandbox, type, body, 'other-bank'), `${type} of another account`).toMatchObject({
          errors: [{ code: 'state' }],
        });
      }
      expect((await read(sandbox, parent)).state).toBe('sent');
      await create(sandbox, PACKET, packet(parent));

      sandbox.configure({ lifecycleMs: PARENT_MS });
      const queued = await create(sandbox, 'encumbrance_request', encumbranceRequest({ requestId: 'queued' }));
      sandbox.configure({ lifecycleMs: LIFE_MS });
      for (const id of [done.docflowId, queued.docflowId, '00000000-0000-4000-8000-000000000000']) {
        for (const [type, body] of bodies(id)) {
          const error = await refused(sandbox, type, body);
          const target = `${type === PACKET ? 'additionalPacketRequest' : 'actionRequest'}.options.docflowId`;
          expect(error, `${type} ${id}`).toMatchObject({ code: 'validation', target, errors: [{ code: 'state', target }] });
        }
      }
      expect((await read(sandbox, queued.docflowId)).state).toBe('queued');
      expect(sandbox.stats().docflowsCreated).toBe(4);
    });
  });

  it("cancels a sent parent: it ends in error saying it was cancelled at the applicant's request, and the action completes", async () => {
    await withSandbox({ lifecycleMs: LIFE_MS }, async (sandbox) => {
      const parent = await sentParent(sandbox, 'to-cancel');
      const cancel = await create(sandbox, ACTION, action(parent, 'cancel', { requestId: 'cancel-1' }));
      const cancelled = await read(sandbox, parent);
      expect(cancelled.state).toBe('error');
      expect(cancelled.error).toMatchObject({ code: 'cancelled', context: { actionDocflowId: cancel.docflowId } });
      expect(cancelled.error?.message).toMatch(/cancelled at the applicant's request/);
      expect(cancelled).not.toHaveProperty('result');
      await until(sandbox, cancel.docflowId, 'completed');
      const items = await feed(sandbox);
      expect(items.filter((i) => i.docflow.docflowId === parent).map((i) => i.docflow.state)).toEqual(['queued', 'sent', 'error']);
      // Past the time it would have completed (a docflow made now with half its steps completes after that), it stays cancelled.
      sandbox.configure({ lifecycleMs: PARENT_MS / 2 });
      const witness = await create(sandbox, 'encumbrance_request', encumbranceRequest({ requestId: 'witness' }));
      sandbox.configure({ lifecycleMs: LIFE_MS });
      await until(sandbox, witness.docflowId, 'completed');
      expect((await read(sandbox, parent)).state).toBe('error');
      expect(await refused(sandbox, ACTION, action(parent, 'cancel'))).toMatchObject({ errors: [{ code: 'state' }] });
      // A repeat of the cancellation whose answer was lost gets its first docflow back under dedupe, not a refusal.
      sandbox.configure({ requestIds: 'dedupe' });
      expect((await create(sandbox, ACTION, action(parent, 'cancel', { requestId: 'cancel-1' }))).docflowId).toBe(cancel.docflowId);
    });
  });

  it('holds a suspended parent in sent, saying so and taking no step, until it is resumed', async () => {
    await withSandbox({ lifecycleMs: LIFE_MS }, async (sandbox) => {
      const parent = await sentParent(sandbox, 'to-hold');
      const suspend = await create(sandbox, ACTION, action(parent, 'suspend', { requestId: 'suspend-1' }));
      // A docflow made now that lives half the parent's steps completes after the parent would have.
      sandbox.configure({ lifecycleMs: PARENT_MS / 2 });
      const witness = await create(sandbox, 'encumbrance_request', encumbranceRequest({ requestId: 'witness' }));
      sandbox.configure({ lifecycleMs: LIFE_MS });
      const held = await read(sandbox, parent);
      expect(held.state).toBe('sent');
      expect(held).toMatchObject({
        registrySuspension: { actionDocflowId: suspend.docflowId, message: expect.stringMatching(/suspended/) },
      });
      expect(held).not.toHaveProperty('requirements');
      expect(await refused(sandbox, ACTION, action(parent, 'suspend'))).toMatchObject({ errors: [{ code: 'state' }] });
      await until(sandbox, suspend.docflowId, 'completed');
      await until(sandbox, witness.docflowId, 'completed');
      expect((await read(sandbox, parent)).state).toBe('sent');
      const listed = (await call(sandbox, 'GET', '/__sandbox/docflows', undefined, {})).body as SandboxDocflow[];
      expect(listed.find((d) => d.docflowId === parent)).toMatchObject({ state: 'sent', registrySuspended: true });
      // Documents may still come while it is held.
      await create(sandbox, PACKET, packet(parent));

      const resume = await create(sandbox, ACTION, action(parent, 'resume', { requestId: 'resume-1' }));
      const resumed = await read(sandbox, parent);
      expect(resumed.state).toBe('sent');
      expect(resumed).not.toHaveProperty('registrySuspension');
      expect(await refused(sandbox, ACTION, action(parent, 'resume'))).toMatchObject({ errors: [{ code: 'state' }] });
      await until(sandbox, resume.docflowId, 'completed');
      await until(sandbox, parent, 'completed');
      const items = await feed(sandbox);
      expect(items.filter((i) => i.docflow.docflowId === parent).map((i) => i.docflow.state)).toEqual(['queued', 'sent', 'completed']);
    });
  });

  it('refuses a registry file whose mortgage records are not valid', async () => {
    const bad = (record: Json) =>
      startSandbox({ registry: [{ ...registryObject(LIFTED_OBJECT), encumbrances: [record] }] as unknown as RegistryObject[] });
    await expect(bad({ ...LIFTED_RECORD, type: 'pledge' })).rejects.toThrow(/entry 0 .*encumbrances\.0\.type/);
    await expect(bad({ ...LIFTED_RECORD, date: '2001-02-30' })).rejects.toThrow(/encumbrances\.0\.date/);
    await expect(bad({ ...LIFTED_RECORD, encumbrancerInn: '123' })).rejects.toThrow(/encumbrancerInn/);
  });
});
