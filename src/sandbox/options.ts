/** The sandbox's public shapes, and the checks on what may be configured at runtime. */
import { z } from 'zod';
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
}

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
    | 'requestIds'
    | 'newsLagMs'
    | 'newsOutage'
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
}

export interface SandboxDocflow {
  docflowId: string;
  requestId?: string;
  type: string;
  state: 'queued' | 'suspended';
  status: 200 | 201;
  createdAt: string;
  /** The property as the request named it (`options.object`'s cadastral number and address): no person's data. */
  object?: { cadastralNumber?: unknown; address?: unknown };
}

export interface RunningSandbox {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  port: number;
  stats(): SandboxStats;
  docflows(): SandboxDocflow[];
  configure(patch: SandboxConfigPatch): void;
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
  requestIds: z.enum(REQUEST_IDS_MODES).optional(),
  // Same bound as latencyMs: a lag past an hour would hide the feed from any test or rehearsal.
  newsLagMs: z.number().min(0).max(3_600_000).optional(),
  newsOutage: z.boolean().optional(),
});

/** Throws one readable sentence naming every bad setting. */
export function checkConfigPatch(patch: unknown): SandboxConfigPatch {
  const result = configPatchSchema.safeParse(patch);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || 'settings'}: ${issue.message}`).join('; ');
  throw new Error(`The sandbox settings are not valid (${problems}).`);
}
