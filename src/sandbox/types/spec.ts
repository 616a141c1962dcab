/**
 * What the sandbox knows of one docflow type: the checks of its body, what its creation
 * keeps, whether it waits for signatures, and the registry's answer when it would complete.
 * The table of types (../docflow-types.ts) maps each name the gateway accepts to one.
 */
import type { ApiErrorBody } from '../../domain/gateway.js';
import type { NamedContents } from '../content-registry.js';
import type { DocflowFacts, Settlement, StoredDocflow } from '../docflow-record.js';
import type { Problem } from '../docflow-validation.js';
import type { RegistryBook } from '../encumbrances.js';
import type { Signer } from '../lifecycle.js';
import type { SandboxState } from '../state.js';

/** A creation call past every check of its body, its account and its requestId. */
export interface CreationContext {
  state: SandboxState;
  /** The calling session's user: a docflow acted on must be one of theirs. */
  userId: string;
  now: number;
}

export interface SettleContext {
  registry: RegistryBook;
  /** performance.now() milliseconds of the completion. */
  at: number;
}

export interface DocflowTypeSpec {
  /** The name the docflow is shown with (`type`, `docflowType`). */
  readonly type: string;
  /** Every problem of the body; targets `<camelCaseType>.options.<path>` (encumbrance_request: `options.<path>`). */
  check(body: unknown): Problem[];
  /** The content ids the body names, for --strict-contents. */
  contents(body: unknown): NamedContents;
  /** What the completion needs of the request (no person's data). */
  facts(body: unknown): DocflowFacts;
  /** The property as the request names it, for `GET /__sandbox/docflows` and the EGRON regions. */
  objectOf?(body: unknown): StoredDocflow['object'];
  /** Absent: always 200 `queued` (nothing of the applicant's to sign). Else 201 with a requirement when `signed` is false. */
  signing?: { signed(body: unknown): boolean; signers(body: unknown): Signer[] };
  /** Whether the state duty (`--payment`) applies. */
  payable: boolean;
  /** Whether the register may refuse it at random (`--fault-registry`), and how. */
  refusals?: readonly ApiErrorBody[];
  /** How many file ids its result needs. */
  resultIds: number;
  /** A refusal (400) that depends on the sandbox's state, not the body: the docflow acted on. */
  admit?(ctx: CreationContext, facts: DocflowFacts): Problem | undefined;
  /** Once created: what it does at once to the docflow it acts on. */
  created?(ctx: CreationContext, docflow: StoredDocflow): void;
  /** The registry's answer at the moment the docflow would complete. */
  settle(ctx: SettleContext, docflow: StoredDocflow): Settlement;
}

/** `object_request` → `objectRequest`: the documentation's root of a type's targets. */
export function camelCaseOf(type: string): string {
  return type.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
