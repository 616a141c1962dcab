/**
 * A docflow's life after its creation, as the public documentation shows it:
 * `queued` → `sent` → `completed` (the register's extract and its signature) or `error`;
 * `suspended` at creation while the application awaits its signers (201), and after
 * `sent` while the state duty is unpaid (`--payment`). Each step comes `lifecycleMs` after
 * the one before; a send, or a payment, starts the count again.
 *
 * Everything a docflow will meet is decided when it is created, from its own random
 * stream (one draw of the sandbox's lifecycle source per docflow, in creation order), so a
 * seeded sandbox repeats every life whatever the timing of the reads. The steps are
 * applied lazily, when anything reads the sandbox, in the order of their own times.
 */
import { createRandom, type RandomSource } from './faults.js';
import type { SandboxFile } from './files.js';
import type { ApiErrorBody, PaymentRequirement } from '../domain/gateway.js';

export interface LifeRates {
  /** Milliseconds between two steps. */
  lifecycleMs: number;
  /** Share of docflows the register refuses (`error`) instead of completing. */
  faultRegistry: number;
  /** Share of sent docflows that stop `suspended` on a payment requirement. */
  payment: number;
  /** Docflows stop in `sent` until cancelled (SandboxOptions.holdSent). */
  holdSent?: boolean;
}

/** A signer of the application, as the requirement shows them: a role and initials only. */
export interface Signer {
  role: string;
  person: Record<string, string>;
}

/** What a docflow's life holds in store, decided at its creation. */
export interface DocflowPlan {
  lifecycleMs: number;
  /** It takes no step from `sent` (LifeRates.holdSent). */
  holdSent?: boolean;
  /** The creation's number (unique in this sandbox) and the object's cadastral number, for the files' pages. */
  seq: number;
  object: string;
  /** The state duty it stops on once sent (`--payment`); none: it goes straight on. */
  payment?: PaymentRequirement & { uin: string; amount: number };
  /** The register's refusal (`--fault-registry`); none: it completes. */
  error?: ApiErrorBody;
  /** The application files, one per signer, of a docflow created without signatures. */
  applications: ReadonlyArray<{ signer: Signer; file: SandboxFile }>;
  /** The result: the extract and its signature, made when it completes. */
  extract: SandboxFile;
  extractSignature: SandboxFile;
  /** Ids for another type's result files (types/), drawn after everything above. */
  resultIds?: readonly string[];
}

const REFUSALS: readonly ApiErrorBody[] = [
  {
    code: 'registrationRefused',
    message: 'The register refused the registration: the object is under an arrest',
  },
  {
    code: 'registrationRefused',
    message: 'The register refused the registration: the right of the pledger is not registered',
  },
  {
    code: 'documentsInvalid',
    message: 'The register refused the registration: the mortgage agreement does not match the register',
  },
];

/** A UUID-shaped id from the docflow's own stream. */
function idFrom(random: RandomSource): string {
  let hex = '';
  for (let i = 0; i < 8; i += 1)
    hex += Math.floor(random() * 0x10000)
      .toString(16)
      .padStart(4, '0');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function digits(random: RandomSource, n: number): string {
  let out = '';
  for (let i = 0; i < n; i += 1) out += String(Math.floor(random() * 10));
  return out;
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const at = (v: unknown, ...path: string[]): unknown => path.reduce<unknown>((o, k) => (isRecord(o) ? o[k] : undefined), v);

/** Initials only: the requirement says who signs without carrying a person's data. */
function masked(person: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['surname', 'name', 'patronymic']) {
    const value = at(person, key);
    if (typeof value === 'string' && value.trim() !== '') out[key] = `${value.trim().charAt(0)}.`;
  }
  return out;
}

/** The participants who sign the application: the owner or both spouses, and each encumbrancer's representative. */
export function signersOf(body: unknown): Signer[] {
  const options = at(body, 'options');
  const signers: Signer[] = [];
  const owner = at(options, 'whoseRightRestricted', 'individualOwnership', 'owner', 'person');
  if (owner !== undefined) signers.push({ role: 'owner', person: masked(owner) });
  for (const spouse of ['spouse1', 'spouse2']) {
    const person = at(options, 'whoseRightRestricted', 'cooperativeOwnership', spouse, 'person');
    if (person !== undefined) signers.push({ role: spouse, person: masked(person) });
  }
  signers.push(...representativesOf(body));
  return signers;
}

/** Each encumbrancer's representative: who alone signs a lift (the bank applies without the owner). */
export function representativesOf(body: unknown): Signer[] {
  const encumbrancers = at(body, 'options', 'whoUseRestriction', 'encumbrancer');
  if (!Array.isArray(encumbrancers)) return [];
  const signers: Signer[] = [];
  encumbrancers.forEach((e, i) => {
    const person = at(e, 'representative', 'person');
    if (person !== undefined)
      signers.push({ role: encumbrancers.length > 1 ? `representative${i + 1}` : 'representative', person: masked(person) });
  });
  return signers;
}

/** Who pays the state duty in the sandbox: the first encumbrancer's organization (not a person), when there is one. */
function payerOf(body: unknown): { name: string; inn: string } | undefined {
  const encumbrancers = at(body, 'options', 'whoUseRestriction', 'encumbrancer');
  const org = Array.isArray(encumbrancers) ? at(encumbrancers[0], 'organization') : undefined;
  if (org === undefined) return undefined;
  const name = at(org, 'name');
  const inn = at(org, 'inn');
  return { name: typeof name === 'string' ? name : '', inn: typeof inn === 'string' ? inn : '' };
}

const NO_APPLICATIONS: DocflowPlan['applications'] = Object.freeze([]);

export interface PlanInput {
  seq: number;
  docflowSeed: number;
  rates: LifeRates;
  body: unknown;
  signed: boolean;
  /** Who signs the application of an unsigned docflow; default signersOf(body). */
  signers?: Signer[];
  /** The object's cadastral number, when not at `options.object.cadastralNumber`. */
  object?: string;
  /** Whether the state duty applies (`--payment`); default true. */
  payable?: boolean;
  /** The register's refusals to pick from (`--fault-registry`); default a registration's. */
  refusals?: readonly ApiErrorBody[];
  /** How many ids to draw for the result files of a type other than encumbrance_request. */
  resultIds?: number;
}

/**
 * Decides a docflow's life. `docflowSeed` is one draw of the lifecycle source; `seq` (the
 * creation's number) makes each payment identifier unique.
 */
export function planDocflow(input: PlanInput): DocflowPlan {
  const { seq, rates, body, signed } = input;
  const random = createRandom(input.docflowSeed);
  const refusals = input.refusals ?? REFUSALS;
  // Always drawn, in this order, whatever the rates: a rate changed does not shift the rest.
  const paymentRoll = random();
  const errorRoll = random();
  const refusal = refusals[Math.floor(random() * refusals.length)] ?? REFUSALS[0]!;
  const uin = `321${digits(random, 9)}${String(seq % 1e8).padStart(8, '0')}`;
  const amount = random() < 0.5 ? 1000 : 4000;
  const extractId = idFrom(random);
  const signatureId = idFrom(random);
  const cadastral = input.object ?? at(body, 'options', 'object', 'cadastralNumber');
  const object = typeof cadastral === 'string' ? cadastral : 'unknown';

  const plan: DocflowPlan = {
    lifecycleMs: rates.lifecycleMs,
    ...(rates.holdSent === true && { holdSent: true }),
    seq,
    object,
    applications: signed
      ? NO_APPLICATIONS
      : (input.signers ?? signersOf(body)).map((signer) => ({
          signer,
          file: { id: idFrom(random), type: 'application', kind: 'application', role: signer.role },
        })),
    extract: { id: extractId, type: 'egrnExtract', kind: 'extract' },
    extractSignature: { id: signatureId, type: 'signature', kind: 'signature' },
  };
  if (input.resultIds !== undefined && input.resultIds > 0) {
    plan.resultIds = Array.from({ length: input.resultIds }, () => idFrom(random));
  }
  if (paymentRoll < rates.payment && input.payable !== false) {
    const payer = payerOf(body);
    plan.payment = payer === undefined ? { uin, amount } : { uin, amount, payer };
  }
  if (errorRoll < rates.faultRegistry) plan.error = refusal;
  return plan;
}

/** A step of a docflow's life waiting for its time. */
export interface Step<D> {
  at: number;
  /** Ties (the same time, a lifecycle of 0) go in the order the steps were made. */
  order: number;
  docflow: D;
  kind: 'sent' | 'settle';
}

/** A binary min-heap of steps by time. */
export class StepQueue<D> {
  private readonly heap: Array<Step<D>> = [];
  private made = 0;

  private static before<D>(a: Step<D>, b: Step<D>): boolean {
    return a.at < b.at || (a.at === b.at && a.order < b.order);
  }

  push(at: number, docflow: D, kind: Step<D>['kind']): void {
    const heap = this.heap;
    heap.push({ at, order: this.made++, docflow, kind });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!StepQueue.before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /** The earliest step due at `now` or before, taken off the queue. */
  popDue(now: number): Step<D> | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined || top.at > now) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && StepQueue.before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && StepQueue.before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }
}
