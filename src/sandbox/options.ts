/** The sandbox's public shapes, and the checks on what may be configured at runtime. */
import * as z from 'zod';
import type { DocflowState } from '../domain/gateway.js';
import type { RegistryObject } from './registry.js';

export interface SandboxOptions {
  /** 0 = any free port (default 0). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** An array, or the path of a JSON file; default: samples/registry.json of the package. */
  registry?: RegistryObject[] | string;
  /** Session ids accepted after `auth.sid`; default ['demo-session']. */
  sessions?: string[];
  /** Sessions whose docflow creation answers 403. */
  restrictedSessions?: string[];
  /** Who may log in through `POST /auth`: `login:password:accountId` each. */
  users?: string[];
  /** Sessions from `/auth` answer 401 this long after their login (never when 0 or absent). */
  sessionTtlMs?: number;
  /** Regions (options.object.address.region, case- and ё-insensitive) whose docflows answer 501. */
  egronRegions?: string[];
  fault501?: number;
  fault5xx?: number;
  faultReset?: number;
  faultLost?: number;
  /** Added to every /realty/v1 request, in milliseconds. */
  latencyMs?: number;
  /** Makes the faults repeatable. */
  seed?: number;
  /**
   * What a creation call with an already seen requestId does. `ignore` (default) creates a new
   * docflow every time, as the worst real gateway would; `dedupe` answers the first docflow.
   */
  requestIds?: RequestIdsMode;
  /** How long after its creation a docflow appears in the news feed, in milliseconds (default 0). */
  newsLagMs?: number;
  /** While true the news feed answers 503, so tests can see a follower ride out an outage. */
  newsOutage?: boolean;
  /** Milliseconds between two steps of a docflow's life: queued → sent → completed (default 2000). */
  lifecycleMs?: number;
  /** Docflows created while it is set stop in `sent` (in processing) until cancelled: for tests of what acts on a docflow there. */
  holdSent?: boolean;
  /** Share of docflows the register refuses: they end in `error` instead of `completed` (default 0). */
  faultRegistry?: number;
  /** Share of sent docflows that stop `suspended` on a payment requirement until paid (default 0). */
  payment?: number;
  /** Refuse (400) a docflow naming a content id never uploaded through `POST /contents` (default false). */
  strictContents?: boolean;
  /**
   * Called with the time (`Date.now()`) of each gateway call a rate limit counts (suggest and
   * docflow creation) as it arrives: a count by the calls' own times, where reading `stats()`
   * on a timer puts a call in the second the timer ran (the bench's rate figure).
   */
  onCall?: (at: number) => void;
}

export const DEFAULT_LIFECYCLE_MS = 2000;

export const REQUEST_IDS_MODES = ['ignore', 'dedupe'] as const;
export type RequestIdsMode = (typeof REQUEST_IDS_MODES)[number];

export type SandboxConfigPatch = Partial<
  Pick<
    SandboxOptions,
    | 'egronRegions'
    | 'fault501'
    | 'fault5xx'
    | 'faultReset'
    | 'faultLost'
    | 'latencyMs'
    | 'restrictedSessions'
    | 'sessions'
    | 'users'
    | 'sessionTtlMs'
    | 'requestIds'
    | 'newsLagMs'
    | 'newsOutage'
    | 'lifecycleMs'
    | 'holdSent'
    | 'faultRegistry'
    | 'payment'
    | 'strictContents'
  >
>;

export interface SandboxStats {
  docflowsCreated: number;
  suggestCalls: number;
  /** Docflow creation calls by answer: "200", "201", "400", ..., and "reset" / "lost" for dropped sockets. */
  docflowCalls: Record<string, number>;
  /** Creation calls whose requestId already had a docflow: the would-be duplicates. */
  repeatedRequestIds: number;
  /** Distinct requestIds that have more than one docflow: the duplicates that really happened. */
  requestIdsWithSeveralDocflows: number;
  /** Injected faults by kind: "501", "500", "502", "503", "reset", "lost". */
  faultsInjected: Record<string, number>;
  /** Docflows by their state now (states with none are left out). */
  docflowStates: Partial<Record<DocflowState, number>>;
  /** Calls of the later operations (`get`, `send`, `signature`, `file`) by answer, as docflowCalls. */
  operationCalls: Record<string, Record<string, number>>;
  /** Payments made through `/__sandbox/payments/<uin>`. */
  payments: number;
  /** `POST /auth` calls answered 200 (a new session each) and 400 (bad credentials). */
  logins: number;
  loginsRefused: number;
  /** `POST /contents`: contents received (201) and their bytes; docflows refused by --strict-contents. */
  contents: { uploads: number; bytes: number; refusedDocflows: number };
}

export interface SandboxDocflow {
  docflowId: string;
  requestId?: string;
  type: string;
  /** Its state now. */
  state: DocflowState;
  /** The creation's answer: 200 (created queued) or 201 (created suspended for signatures). */
  status: 200 | 201;
  createdAt: string;
  /** The property as the request named it (`options.object`'s cadastral number and address): no person's data. */
  object?: { cadastralNumber?: unknown; address?: unknown };
  /** An additional_packet_request's or action_request's docflow acted on. */
  parentDocflowId?: string;
  /** While the registry holds it `sent` at the applicant's request (an action_request's `suspend`). */
  registrySuspended?: true;
  /** While suspended: what it waits for. */
  requirement?: 'signature' | 'payment';
  /** While suspended on a payment: the payment identifier that pays it. */
  uin?: string;
}

export interface RunningSandbox {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  port: number;
  stats(): SandboxStats;
  docflows(): SandboxDocflow[];
  configure(patch: SandboxConfigPatch): void;
  /** Pays the state duty of a docflow suspended on a payment, as `POST /__sandbox/payments/<uin>`; false when no unpaid docflow has this uin. */
  pay(uin: string): boolean;
  close(): Promise<void>;
}

const probability = z.number().min(0).max(1);
const names = z.array(z.string());

export const configPatchSchema = z.strictObject({
  egronRegions: names.optional(),
  fault501: probability.optional(),
  fault5xx: probability.optional(),
  faultReset: probability.optional(),
  faultLost: probability.optional(),
  // An hour is far beyond any client time-out; more is a typo.
  latencyMs: z.number().min(0).max(3_600_000).optional(),
  restrictedSessions: names.optional(),
  sessions: z.array(z.string().min(1)).optional(),
  users: z.array(z.string().regex(/^[^:]+:.+:[^:]+$/, 'must be login:password:accountId')).optional(),
  // A day: longer is no test of expiry.
  sessionTtlMs: z.number().int().min(0).max(86_400_000).optional(),
  requestIds: z.enum(REQUEST_IDS_MODES).optional(),
  // Same bound as latencyMs: a lag past an hour would hide the feed from any test or rehearsal.
  newsLagMs: z.number().min(0).max(3_600_000).optional(),
  newsOutage: z.boolean().optional(),
  // A day: a life slower than that is a typo in a sandbox.
  lifecycleMs: z.number().min(0).max(86_400_000).optional(),
  holdSent: z.boolean().optional(),
  faultRegistry: probability.optional(),
  payment: probability.optional(),
  strictContents: z.boolean().optional(),
});

/** Throws one readable sentence naming every bad setting. */
export function checkConfigPatch(patch: unknown): SandboxConfigPatch {
  const result = configPatchSchema.safeParse(patch);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || 'settings'}: ${issue.message}`).join('; ');
  throw new Error(`The sandbox settings are not valid (${problems}).`);
}
