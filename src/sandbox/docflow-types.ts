/**
 * The docflow types the sandbox knows, by the name in `POST /realty/v1/docflows/{type}`:
 * one module each under types/. The sandbox keeps its own list rather than the client's,
 * so that it emulates the gateway whatever the product sends.
 */
import type { Settlement, StoredDocflow } from './docflow-record.js';
import type { RegistryBook } from './encumbrances.js';
import { actionRequest } from './types/action-request.js';
import { additionalPacketRequest } from './types/additional-packet-request.js';
import { cessationEncumbranceRequest } from './types/cessation-encumbrance-request.js';
import { encumbranceRequest } from './types/encumbrance-request.js';
import { objectRequest } from './types/object-request.js';
import type { DocflowTypeSpec } from './types/spec.js';

const SPECS: readonly DocflowTypeSpec[] = [
  encumbranceRequest,
  cessationEncumbranceRequest,
  objectRequest,
  additionalPacketRequest,
  actionRequest,
];

export const SANDBOX_DOCFLOW_TYPES: readonly string[] = SPECS.map((s) => s.type);

/** The documentation's list of types names the packet `additional_package_request`, its own page `additional_packet_request`. */
const ALIASES: Readonly<Record<string, DocflowTypeSpec>> = { additional_package_request: additionalPacketRequest };

const BY_NAME = new Map<string, DocflowTypeSpec>([...SPECS.map((s): [string, DocflowTypeSpec] => [s.type, s]), ...Object.entries(ALIASES)]);

export function docflowTypeOf(name: string): DocflowTypeSpec | undefined {
  return BY_NAME.get(name);
}

/** The registry's answer when a docflow would complete (SandboxState's `settle`). */
export function settleDocflow(registry: RegistryBook, docflow: StoredDocflow, at: number): Settlement {
  return (BY_NAME.get(docflow.type) ?? encumbranceRequest).settle({ registry, at }, docflow);
}
