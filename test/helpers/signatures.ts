/**
 * Real detached signatures for tests (test/fixtures/signing/README.md: made with a test key,
 * test only). The load and `sign` refuse anything that is not a signature by its structure.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

export const SIGNING_FIXTURES = join(ROOT, 'test', 'fixtures', 'signing');

/** The detached CMS signature (DER) of the tests' tiny agreement (`agreement.pdf` beside it). */
export const TEST_SIGNATURE = readFileSync(join(SIGNING_FIXTURES, 'agreement.pdf.sig'));
