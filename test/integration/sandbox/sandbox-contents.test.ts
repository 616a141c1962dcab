/** The sandbox's `POST /realty/v1/contents` (realty-api-notes.md) and --strict-contents, over HTTP. */
import { request } from 'undici';
import { describe, expect } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { harness } from '../../helpers/harness.js';
import { AUTH, DOCFLOW_PATH, encumbranceRequest, post } from '../../helpers/sandbox-http.js';

// The sandbox's own defaults (its options given as none), and with strictContents.
const it = harness({ sandbox: {} });
const strict = harness({ sandbox: { strictContents: true } });

const upload = async (sandbox: RunningSandbox, body: Buffer, contentType: string, headers: Record<string, string> = AUTH) => {
  const answer = await request(`${sandbox.url}/realty/v1/contents`, {
    method: 'POST',
    headers: { ...headers, 'content-type': contentType },
    body,
  });
  return { status: answer.statusCode, location: answer.headers.location, body: (await answer.body.json()) as Record<string, unknown> };
};

describe('sandbox: POST /contents', () => {
  it('answers 201 with the content pointer and its Location for each of the four content types, and counts uploads and bytes', async ({
    sandbox,
  }) => {
    const types = ['application/pdf', 'application/xml', 'application/x-pkcs7-signature', 'application/pgp-signature'];
    for (const type of types) {
      const answer = await upload(sandbox, Buffer.from('%PDF-1.4 tiny'), type);
      expect(answer.status).toBe(201);
      expect(answer.body.contentLink).toBe(`${sandbox.url}/realty/v1/contents/${String(answer.body.id)}`);
      expect(answer.location).toBe(answer.body.contentLink);
    }
    expect(sandbox.stats().contents).toEqual({ uploads: 4, bytes: 4 * 13, refusedDocflows: 0 });
  });

  it('refuses another content type and an empty body with 400, and an unknown session with 401, counting none', async ({ sandbox }) => {
    expect((await upload(sandbox, Buffer.from('x'), 'image/png')).status).toBe(400);
    expect((await upload(sandbox, Buffer.alloc(0), 'application/pdf')).status).toBe(400);
    expect((await upload(sandbox, Buffer.from('x'), 'application/pdf', { authorization: 'auth.sid nobody' })).status).toBe(401);
    expect(sandbox.stats().contents.uploads).toBe(0);
  });

  strict(
    'with strictContents refuses a docflow naming a content it never received, naming where, and takes one naming uploaded contents',
    async ({ sandbox }) => {
      const refused = await post(sandbox, DOCFLOW_PATH, encumbranceRequest());
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        code: 'validation',
        errors: [{ target: 'options.appliedDocuments.mortgageAgreement.content.info.contentPointer.id' }, {}, {}],
      });
      const pdf = await upload(sandbox, Buffer.from('%PDF-1.4'), 'application/pdf');
      const sig = await upload(sandbox, Buffer.from('sig'), 'application/x-pkcs7-signature');
      const pointer = (answer: typeof pdf) => ({ id: answer.body.id, contentLink: answer.body.contentLink });
      const taken = await post(
        sandbox,
        DOCFLOW_PATH,
        encumbranceRequest({
          'options.appliedDocuments.mortgageAgreement.content.info.contentPointer': pointer(pdf),
          'options.appliedDocuments.mortgageAgreement.content.signatures': [pointer(sig)],
        }),
      );
      expect(taken.status).toBe(200);
      expect(sandbox.stats().contents).toMatchObject({ uploads: 2, refusedDocflows: 1 });
    },
  );
});
