import { describe, it, expect } from 'vitest';
import { fastNewsPage } from '../../src/realty/news-precheck.js';
import { newsPageSchema } from '../../src/domain/gateway.js';

const docflow = (extra: Record<string, unknown> = {}) => ({
  docflowId: 'df-1',
  docflowType: 'encumbrance_request',
  userId: 'u-1',
  state: 'suspended',
  requestId: '7700000000:1:deal-1',
  ...extra,
});
const page = (...docflows: unknown[]) => ({
  news: docflows.map((d, i) => ({ token: String(i + 1), date: '2026-11-25T01:00:00Z', docflow: d })),
  lastToken: String(docflows.length || 1),
});

/** Pages the plain check must take as they are, each one the schema answers unchanged. */
const accepted: Array<[string, unknown]> = [
  ['an empty page', { news: [], lastToken: '0' }],
  ['plain items, unknown extras', page(docflow({ extra: { a: 1 } }), docflow({ state: 'whatever-new' }))],
  ['no optional field', page({ docflowId: 'df-2', state: 'queued' })],
  [
    'a signature requirement',
    page(
      docflow({
        requirements: { signature: [{ person: { surname: 'И' }, files: [{ id: 'f1', contentLink: 'x', type: 'application' }] }] },
      }),
    ),
  ],
  [
    'a payment requirement',
    page(
      docflow({
        requirements: {
          payment: [
            { uin: '1', amount: 350 },
            { uin: '2', amount: '350.00', payer: 'И. И.' },
            { uin: '3', payer: {} },
          ],
        },
      }),
    ),
  ],
  ['a result with signatures', page(docflow({ state: 'completed', result: { files: [{ id: 'r1', signatures: [{ id: 's1' }] }] } }))],
  ['an empty result', page(docflow({ state: 'completed', result: {} }))],
  [
    'a nested error',
    page(docflow({ state: 'error', error: { code: 'c', message: 'm', context: { a: 1 }, errors: [{ code: 'n', errors: [] }] } })),
  ],
];

/** Pages the schema must decide: it refuses them, or drops a part the plain check would keep. */
const refused: Array<[string, unknown]> = [
  ['not an object', []],
  ['no lastToken', { news: [] }],
  ['an empty lastToken', { news: [], lastToken: '' }],
  ['news not a list', { news: {}, lastToken: '1' }],
  ['an item without a token', { news: [{ date: 'd', docflow: docflow() }], lastToken: '1' }],
  ['a numeric token', { news: [{ token: 1, date: 'd', docflow: docflow() }], lastToken: '1' }],
  ['no date', { news: [{ token: '1', docflow: docflow() }], lastToken: '1' }],
  ['an empty docflowId', page(docflow({ docflowId: '' }))],
  ['no state', page({ docflowId: 'df' })],
  ['a numeric requestId', page(docflow({ requestId: 5 }))],
  ['a null requirements', page(docflow({ requirements: null }))],
  ['requirements as a list', page(docflow({ requirements: [{ signature: [] }] }))],
  ['a payment without uin', page(docflow({ requirements: { payment: [{ amount: 1 }] } }))],
  ['a person as a list', page(docflow({ requirements: { signature: [{ person: [], files: [] }] } }))],
  ['a signer without files', page(docflow({ requirements: { signature: [{ person: {} }] } }))],
  ['a file without id', page(docflow({ result: { files: [{ type: 'x' }] } }))],
  ['a context as a list', page(docflow({ error: { context: [] } }))],
  ['a nested error not an object', page(docflow({ error: { errors: ['x'] } }))],
  ['an error as a string', page(docflow({ error: 'boom' }))],
];

describe('the news page plain check', () => {
  it.each(accepted)('takes %s as the schema answers it', (_, json) => {
    const copy = structuredClone(json);
    expect(fastNewsPage(json)).toBe(json);
    const parsed = newsPageSchema.safeParse(copy);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(copy);
  });

  it.each(refused)('leaves %s to the schema', (_, json) => {
    expect(fastNewsPage(json)).toBeUndefined();
    const parsed = newsPageSchema.safeParse(json);
    // The schema refuses it, or answers it changed (a part it drops): never the page as it came.
    if (parsed.success) expect(parsed.data).not.toEqual(json);
  });
});
