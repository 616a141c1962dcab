/** What a bank clerk should do with a row that needs a person, in a sentence. */
import type { OutcomeRecord } from '../outcomes/types.js';

export function hintFor(record: OutcomeRecord, batch: string): string {
  const numbers = record.candidates?.join(', ');
  switch (record.outcome) {
    case 'invalid':
      return 'correct the fields named in errors, then load this file again';
    case 'not_found':
      return numbers
        ? `the register has no object at exactly this address (nearest: ${numbers}); correct the address, or put the right cadastral number in cadastralNumber`
        : 'the register has no object at this address; correct the address, or put the cadastral number in cadastralNumber';
    case 'ambiguous':
      return `put one of ${numbers ?? 'the cadastral numbers in errors'} in cadastralNumber`;
    case 'rejected':
      return 'the registry refused the request; correct what errors names, then load this file again';
    case 'forbidden':
      return (
        "the bank's account may not submit this deal; ask the registry administrator for access, then run: realty-batch retry " +
        `${batch} --outcome forbidden --force`
      );
    case 'unavailable':
      return `the state register did not answer (501); run later: realty-batch retry ${batch}`;
    case 'failed':
      if (record.errorCode === 'ERR_UNCERTAIN') {
        return `its last try may have created a docflow: do not submit it by hand before checking the gateway; realty-batch retry ${batch} looks for it in the news feed first`;
      }
      return `the gateway failed after ${record.attempts} tries; run later: realty-batch retry ${batch}`;
    default:
      return '';
  }
}
