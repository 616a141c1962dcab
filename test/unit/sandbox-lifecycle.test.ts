/** The pure parts of the sandbox's docflow life: the plan, the step queue and the files' bytes. */
import { describe, it, expect } from 'vitest';
import { fileBytes, tinyPdf } from '../../src/sandbox/files.js';
import { planDocflow, signersOf, StepQueue } from '../../src/sandbox/lifecycle.js';
import { encumbranceRequest } from '../helpers/sandbox-http.js';

const RATES = { lifecycleMs: 100, faultRegistry: 0, payment: 0 };

describe('the plan of a docflow life', () => {
  it('is the same for the same seed, and another seed gives other ids', () => {
    const input = { seq: 3, docflowSeed: 42, rates: { ...RATES, payment: 1 }, body: encumbranceRequest(), signed: false };
    expect(planDocflow(input)).toEqual(planDocflow(input));
    expect(planDocflow({ ...input, docflowSeed: 43 }).extract.id).not.toBe(planDocflow(input).extract.id);
  });

  it('stops on a payment and ends in error only when its rolls fall under the rates', () => {
    const body = encumbranceRequest();
    const plan = (payment: number, faultRegistry: number) =>
      planDocflow({ seq: 7, docflowSeed: 1, rates: { ...RATES, payment, faultRegistry }, body, signed: true });
    expect(plan(0, 0)).not.toHaveProperty('payment');
    expect(plan(0, 0)).not.toHaveProperty('error');
    const both = plan(1, 1);
    expect(both.payment).toEqual({
      uin: expect.stringMatching(/^321\d{9}00000007$/),
      amount: expect.any(Number),
      payer: { name: expect.any(String), inn: expect.stringMatching(/^\d{10}$/) },
    });
    expect(both.error).toEqual({ code: expect.any(String), message: expect.any(String) });
    // The rolls are drawn whatever the rates: turning one on does not change the ids.
    expect(both.extract.id).toBe(plan(0, 0).extract.id);
    expect(plan(0, 0).applications).toEqual([]);
  });

  it('asks every participant to sign, by role and initials only', () => {
    const spouses = encumbranceRequest({
      'options.whoseRightRestricted': {
        cooperativeOwnership: {
          spouse1: { person: { surname: 'Ёлкина', name: 'Анна', patronymic: 'Юрьевна', snils: '000-000-000 55' } },
          spouse2: { person: { surname: 'Ёлкин', name: 'Борис' } },
        },
      },
    });
    const signers = signersOf(spouses);
    expect(signers).toEqual([
      { role: 'spouse1', person: { surname: 'Ё.', name: 'А.', patronymic: 'Ю.' } },
      { role: 'spouse2', person: { surname: 'Ё.', name: 'Б.' } },
      { role: 'representative', person: expect.any(Object) },
    ]);
    expect(JSON.stringify(signers)).not.toMatch(/Ёлкин|Анна|000-000/);
    const plan = planDocflow({ seq: 1, docflowSeed: 5, rates: RATES, body: spouses, signed: false });
    expect(plan.applications.map((a) => [a.signer.role, a.file.type])).toEqual([
      ['spouse1', 'application'],
      ['spouse2', 'application'],
      ['representative', 'application'],
    ]);
  });
});

describe('the step queue', () => {
  it('gives back only the steps due, earliest first, ties in the order they were made', () => {
    const queue = new StepQueue<string>();
    for (const [at, name] of [
      [30, 'c'],
      [10, 'a'],
      [20, 'b1'],
      [20, 'b2'],
      [50, 'e'],
      [20, 'b3'],
    ] as const)
      queue.push(at, name, 'sent');
    const due = (now: number) => {
      const out: string[] = [];
      for (let s = queue.popDue(now); s !== undefined; s = queue.popDue(now)) out.push(s.docflow);
      return out;
    };
    expect(due(5)).toEqual([]);
    expect(due(20)).toEqual(['a', 'b1', 'b2', 'b3']);
    expect(due(49)).toEqual(['c']);
    expect(due(1000)).toEqual(['e']);
    expect(due(1000)).toEqual([]);
  });
});

describe('the files', () => {
  it('makes a PDF whose cross-reference table points at every object and escapes its text', () => {
    const pdf = tinyPdf(['a (b) \\ c', 'Ёлка']).toString('latin1');
    expect(pdf.startsWith('%PDF-1.4\n')).toBe(true);
    expect(pdf.endsWith('%%EOF\n')).toBe(true);
    expect(pdf).toContain('(a \\(b\\) \\\\ c)');
    expect(pdf).toContain('(????)');
    const xrefAt = Number(/startxref\n(\d+)\n/.exec(pdf)![1]);
    expect(pdf.slice(xrefAt, xrefAt + 4)).toBe('xref');
    const offsets = [...pdf.slice(xrefAt).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    expect(offsets).toHaveLength(5);
    offsets.forEach((offset, i) => expect(pdf.slice(offset, offset + `${i + 1} 0 obj`.length)).toBe(`${i + 1} 0 obj`));
  });

  it('gives the same bytes for the same file, and a signature of the extract', () => {
    const context = { docflowId: 'df-1', object: '54:35:000000:5911', seq: 1 };
    const extract = { id: 'e', type: 'egrnExtract', kind: 'extract' } as const;
    expect(fileBytes(extract, context).equals(fileBytes(extract, context))).toBe(true);
    expect(fileBytes(extract, context).toString('latin1')).toContain('54:35:000000:5911');
    const signature = fileBytes({ id: 's', type: 'signature', kind: 'signature' }, context).toString();
    expect(signature).toMatch(/^-----BEGIN PKCS7-----\n[A-Za-z0-9+/=]+\n-----END PKCS7-----\n$/);
  });
});
