import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/docflows/create-registry.js';
import type { DocflowKind } from '../../src/docflows/kind.js';
import {
  DEFAULT_KIND,
  DOCFLOW_TYPE_CODES,
  FOLLOW_UPS,
  KINDS,
  kindOf,
  parseRequestId,
  requestIdOf,
  rowDocuments,
} from '../../src/docflows/registry.js';
import type { AppliedDocument, Deal } from '../../src/domain/deal.js';
import type { DocflowType } from '../../src/domain/gateway.js';
import { convert, problem, text } from '../../src/input/field-checks.js';
import { RecordReader, type DealRecord } from '../../src/input/record-reader.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import { packDealCompact, unpackDealCompact } from '../../src/queue/deal-pack.js';
import { formatRequestId } from '../../src/realty/request-id.js';
import { ROOT } from '../helpers/cli.js';

const BANK = '7701234567';

/** A row's own columns for each type, valid: what its own part of a deal is read from. A new type adds its row here. */
const OWN_ROWS: Record<string, DealRecord> = {
  registration: { agreementContentId: '11111111-2222-4333-8444-555555555555' },
  lift: { recordNumber: '2001-118586', recordDate: '2001-12-11' },
  extract: { extractType: 'info' },
};

/** The keys a type's rows put in the deal beside the object's and the owners'. */
function ownKeys(kind: DocflowKind): string[] {
  const reader = new RecordReader(OWN_ROWS[kind.name] ?? {});
  const own = kind.own.read(reader, { date: text, order: '2026-11-28' });
  expect(reader.problems).toEqual([]);
  return Object.keys(own);
}

/**
 * A registration's agreement is canonical columns: the validator reads it when no type is named
 * (src/input/validate-deal.ts), Deal declares it, and the dashboard shows its ids (mask.ts).
 */
const CANONICAL: Record<string, readonly string[]> = {
  agreement: ['src/domain/deal.ts', 'src/input/validate-deal.ts', 'src/dashboard/mask.ts'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Where a file's code (not its comments) reads or declares the key `key` of an object. */
function namesKey(source: string, key: string): boolean {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return new RegExp(`\\.${key}\\b|\\b${key}\\??\\s*:|\\[['"]${key}['"]\\]`).test(code);
}

describe('the docflow types as modules', () => {
  it("keeps each type's own fields in its folder: no other file of src/ or jobs/ reads or declares them", () => {
    expect(Object.keys(OWN_ROWS).sort()).toEqual(KINDS.map((kind) => kind.name).sort());
    // The sandbox is the gateway's side: its words are the contract's, and it never sees a deal.
    const files = [...sourceFiles('src'), ...sourceFiles('jobs')].filter((file) => !file.startsWith('src/sandbox/'));
    const found: string[] = [];
    for (const kind of KINDS) {
      const folder = `src/docflows/${kind.name}/`;
      const keys = ownKeys(kind);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys)
        for (const file of files)
          if (!file.startsWith(folder) && !CANONICAL[key]?.includes(file) && namesKey(readFileSync(join(ROOT, file), 'utf8'), key))
            found.push(`${file} names ${kind.name}'s ${key}`);
    }
    expect(found).toEqual([]);
  });

  it('gives each type the requestId code the ledgers in the field hold, in the order they were listed', () => {
    expect(Object.entries(DOCFLOW_TYPE_CODES)).toEqual([
      ['encumbrance_request', 'reg'],
      ['cessation_encumbrance_request', 'lift'],
      ['object_request', 'ext'],
      ['additional_packet_request', 'pkt'],
      ['action_request', 'act'],
    ]);
    expect(DEFAULT_KIND.type).toBe('encumbrance_request');
    for (const kind of [...KINDS, ...FOLLOW_UPS])
      expect(parseRequestId(requestIdOf(BANK, 'D|1', 3, kind.type))).toEqual({ bank: BANK, type: kind.type, n: 3, dealId: 'D|1' });
  });
});

describe('a sixth docflow type, built here as its folder would build it', () => {
  /** Its own part: who surveyed the object, and the plans the bank sends (the files a row names). */
  interface SurveyOwn {
    survey?: { surveyor: string; plans: AppliedDocument[] };
  }
  const planFiles = convert((value) => {
    const paths = value.split('|').map((path) => path.trim());
    return paths.every((path) => path !== '') ? paths : problem('must name files separated by |');
  });
  const survey: DocflowKind<SurveyOwn> = {
    // A type the gateway adds is also a name of its contract (src/domain/gateway.ts).
    type: 'survey_request' as DocflowType,
    code: 'srv',
    name: 'survey',
    title: 'surveys',
    columns: ['surveyor', 'planFiles'],
    own: {
      owners: false,
      addressOptional: true,
      read(r) {
        const before = r.problems.length;
        const surveyor = r.required('surveyor', text);
        const plans = (r.required('planFiles', planFiles) ?? []).map((path): AppliedDocument => ({
          signatureIds: [],
          fileType: 'pdf',
          file: { path },
        }));
        return r.problems.length > before || surveyor === undefined ? {} : { survey: { surveyor, plans } };
      },
    },
    documents: (deal) => (deal.survey?.plans ?? []).map((document) => ({ document, fileField: 'planFiles', signatureField: 'planFiles' })),
    copy: (deal) => (deal.survey ? { ...deal, survey: { ...deal.survey, plans: deal.survey.plans.map((d) => ({ ...d })) } } : deal),
    buildRequest: (
      deal,
      cadastralNumber,
      profile,
      _baseUrl,
      requestId = formatRequestId(profile.organization.inn, 'srv', 0, deal.dealId),
    ) => ({
      requestId,
      options: { cadastralNumber, surveyor: deal.survey?.surveyor },
    }),
    refused: { en: 'survey', ru: 'в обследовании', flags: '--type survey --resubmit' },
  };
  const registry = createRegistry([...KINDS, survey], FOLLOW_UPS);
  const read = (record: DealRecord) => {
    const result = createDealValidator({ own: survey.own })(record);
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    return result.deal;
  };
  const row = { dealId: 'S-1', cadastralNumber: '47:14:1203001:814', surveyor: 'Иванов', planFiles: 'plan.pdf | plan 2.pdf' };

  it('is found by either of its names, and a batch stored with its type is of it', () => {
    expect(registry.kindNamed('survey')).toBe(survey);
    expect(registry.kindNamed('survey_request')).toBe(survey);
    expect(registry.kindOf('survey_request')).toBe(survey);
    expect(registry.isDocflowType('survey_request')).toBe(true);
    expect(registry.readingColumns(survey)).toEqual(['surveyor', 'planFiles']);
    expect(registry.kindNames).toContain('survey (survey_request)');
    expect(() => kindOf('survey_request')).toThrow(/not one this version files/);
  });

  it("reads its columns into its own part of the deal, which a waiting job's packing carries whole", () => {
    const deal = read(row);
    expect(deal.owners).toEqual([]);
    expect(deal.survey).toEqual({
      surveyor: 'Иванов',
      plans: [
        { signatureIds: [], fileType: 'pdf', file: { path: 'plan.pdf' } },
        { signatureIds: [], fileType: 'pdf', file: { path: 'plan 2.pdf' } },
      ],
    });
    expect(unpackDealCompact(packDealCompact(deal), deal.dealId)).toEqual(deal);
  });

  it('has its documents checked and uploaded in order, their content ids put in a copy of the deal', () => {
    const deal = read(row);
    const documents = registry.rowDocuments(deal);
    expect(documents.map((d) => [d.document.file?.path, d.fileField])).toEqual([
      ['plan.pdf', 'planFiles'],
      ['plan 2.pdf', 'planFiles'],
    ]);
    expect(registry.namesFiles(deal)).toBe(true);
    // The registry without it finds no documents in such a deal: the type's folder is what knows them.
    expect(rowDocuments(deal)).toEqual([]);
    const sent = registry.withUploaded(deal, [
      { contentId: 'c-1', signatureIds: ['s-1'] },
      { contentId: 'c-2', signatureIds: [] },
    ]) as Deal & SurveyOwn;
    expect(sent.survey!.plans.map((d) => [d.contentId, d.signatureIds])).toEqual([
      ['c-1', ['s-1']],
      ['c-2', []],
    ]);
    expect(deal.survey!.plans.map((d) => d.contentId)).toEqual([undefined, undefined]);
  });

  it('has requestIds of its own code that read back as its type, and leaves every other type’s as they were', () => {
    expect(registry.requestIdOf(BANK, 'S-1', 2, survey.type)).toBe(`${BANK}:srv:2:S-1`);
    expect(registry.parseRequestId(`${BANK}:srv:2:S-1`)).toEqual({ bank: BANK, type: 'survey_request', n: 2, dealId: 'S-1' });
    expect(parseRequestId(`${BANK}:srv:2:S-1`)).toBeUndefined();
    expect(registry.codes).toEqual({ ...DOCFLOW_TYPE_CODES, survey_request: 'srv' });
    for (const kind of KINDS) expect(registry.requestIdOf(BANK, 'S-1', 1, kind.type)).toBe(requestIdOf(BANK, 'S-1', 1, kind.type));
    expect(registry.requestIdOf(BANK, 'S-1')).toBe(requestIdOf(BANK, 'S-1'));
  });

  it('is refused when its code or name is another type’s, or its code is not letters', () => {
    expect(() => createRegistry([...KINDS, { ...survey, code: 'lift' }])).toThrow(/same code lift/);
    expect(() => createRegistry([...KINDS, { ...survey, name: 'extract' }])).toThrow(/same name extract/);
    expect(() => createRegistry([...KINDS, { ...survey, code: 's:1' }])).toThrow(/must be letters/);
    expect(() => createRegistry([...KINDS], [...FOLLOW_UPS, { type: 'survey_request' as DocflowType, code: 'act' }])).toThrow(
      /same code act/,
    );
  });
});
