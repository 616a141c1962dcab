/**
 * The pure parts of the signing round trip: the signer as initials only, whatever the
 * gateway sends of a person, and which files a docflow waits to have signed.
 */
import { describe, expect, it } from 'vitest';
import { personInitials } from '../../src/feed/item-status.js';
import { docflowSchema } from '../../src/domain/gateway.js';
import { stateHintFor } from '../../src/results/hints.js';
import { filesToSign } from '../../src/results/to-sign.js';

describe('personInitials', () => {
  it('gives a full name as initials, surname first, and keeps masked ones as they are', () => {
    expect(personInitials({ surname: 'Кузнецов', name: 'Андрей', patronymic: 'Викторович', snils: '462-398-405 08' })).toBe('К. А. В.');
    expect(personInitials({ surname: 'Т.', name: 'Т.' })).toBe('Т. Т.');
    expect(personInitials({ lastName: 'Смирнова', firstName: 'Ольга' })).toBe('С. О.');
    expect(personInitials('Петров Пётр')).toBe('П. П.');
    expect(personInitials({})).toBeUndefined();
    expect(personInitials(undefined)).toBeUndefined();
  });
});

describe('filesToSign', () => {
  const docflow = (d: Record<string, unknown>) => docflowSchema.parse({ docflowId: 'd-1', ...d });

  it('lists every file of every signer of a suspended docflow, each with its signer as initials and role', () => {
    const files = filesToSign(
      docflow({
        state: 'suspended',
        requirements: {
          signature: [
            { person: { surname: 'Кузнецов', name: 'Андрей' }, role: 'owner', files: [{ id: 'f1', type: 'application' }] },
            { person: { surname: 'Г.', name: 'Е.' }, role: 'representative', files: [{ id: 'f2' }, { id: 'f3' }] },
          ],
        },
      }),
    );
    expect(files).toEqual([
      { fileId: 'f1', signer: 'К. А.', role: 'owner' },
      { fileId: 'f2', signer: 'Г. Е.', role: 'representative' },
      { fileId: 'f3', signer: 'Г. Е.', role: 'representative' },
    ]);
  });

  it('lists nothing for a docflow past its signatures, or suspended on a payment only', () => {
    expect(filesToSign(docflow({ state: 'queued', requirements: { signature: [{ files: [{ id: 'f1' }] }] } }))).toEqual([]);
    expect(filesToSign(docflow({ state: 'suspended', requirements: { payment: [{ uin: '1' }] } }))).toEqual([]);
  });
});

describe('the hint of a deal waiting for signatures', () => {
  it('names the commands that download the files and send the signatures back, in both languages', () => {
    const record = {
      row: 1,
      dealId: 'D-1',
      outcome: 'suspended',
      docflowId: 'd-1',
      attempts: 1,
      finishedAt: '',
      state: 'suspended',
      requirement: 'signature',
    } as const;
    for (const lang of ['en', 'ru'] as const) {
      const hint = stateHintFor(record, 'night', lang);
      expect(hint).toContain('realty-batch to-sign night --dir to-sign');
      expect(hint).toContain('realty-batch sign night --dir to-sign');
    }
  });
});
