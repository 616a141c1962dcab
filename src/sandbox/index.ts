/**
 * The gateway sandbox: a standalone emulator of the realty API contract for development,
 * tests and the demo. It imports nothing of the worker side, only the contract types.
 */
export { startSandbox } from './server.js';
export { parseProbability } from './faults.js';
export { loadRegistry, type EncumbranceRecord, type RegistryObject } from './registry.js';
export { SANDBOX_DOCFLOW_TYPES } from './docflow-types.js';
export { DEFAULT_LIFECYCLE_MS, REQUEST_IDS_MODES } from './options.js';
export type { RequestIdsMode, RunningSandbox, SandboxConfigPatch, SandboxDocflow, SandboxOptions, SandboxStats } from './options.js';
