/**
 * What a load of a type other than a registration needs before its rows are read
 * (src/docflows/): the profile's power of attorney checked as a row's files are, and the order
 * an extract's rows belong to (their ledger key with the dealId).
 */
import { dirname, resolve } from 'node:path';
import { ProfileError } from '../errors.js';
import { createDocumentFileChecker } from '../input/document-files.js';
import { localIsoDate } from '../input/field-checks.js';
import type { BankProfile } from '../input/profile.js';
import type { DocflowKind } from '../docflows/registry.js';

/**
 * The order a batch's rows belong to (an extract's ledger key, src/docflows/extract/): the day
 * the batch was made, so that its retries and a load resumed the next day keep it; or the batch
 * itself when `--again` orders what was ordered that day.
 */
export function orderOf(batch: { batch: string; again?: boolean | undefined }, createdAt: string | undefined): string {
  return batch.again ? `again-${batch.batch}` : localIsoDate(createdAt ? new Date(createdAt) : new Date());
}

/**
 * The profile with its power of attorney's files checked (and hashed) as a row's are, when the
 * type sends it and the profile names it by file: its workers upload those bytes once a batch. A
 * file that fails stops the load before anything is read, naming the profile's field.
 */
export async function checkedProfile(request: {
  profile: BankProfile;
  profileFile?: string | undefined;
  kind?: DocflowKind | undefined;
}): Promise<BankProfile> {
  const { profile } = request;
  const attorney = profile.representative.attorney;
  if (!request.kind?.attorney || !attorney?.file) return profile;
  const checked = { ...attorney, ...(attorney.file && { file: { ...attorney.file } }) };
  const baseDir = request.profileFile ? dirname(resolve(request.profileFile)) : process.cwd();
  const problems = await createDocumentFileChecker({ baseDir }).documents([
    { document: checked, fileField: 'representative.attorney.file', signatureField: 'representative.attorney.signatureFiles' },
  ]);
  if (problems.length > 0) throw new ProfileError(request.profileFile ?? '(given)', problems);
  return { ...profile, representative: { ...profile.representative, attorney: checked } };
}
