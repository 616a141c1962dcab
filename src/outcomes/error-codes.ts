/**
 * Every `errorCode` an outcome can carry, in one table: the code, the outcomes it goes
 * with, what it means and what an operator does about it. The codes this project writes
 * itself are constants of this table (`ERROR_CODES.ERR_UNCERTAIN.code`); the gateway's own
 * codes, and the low-level reasons of a call that got no answer, pass through as they
 * came (the last three entries describe them). docs/results.md's "Error codes" section has a row
 * for each entry (test/unit/error-codes.test.ts holds both to it).
 */
import type { Outcome } from '../domain/outcome.js';

export interface ErrorCodeEntry {
  /** The code as it stands in the results file; `<...>` marks a part that varies. */
  readonly code: string;
  /** The outcomes a row with this code has. */
  readonly outcomes: readonly Outcome[];
  /** What it means, in one sentence. */
  readonly meaning: string;
  /** What an operator does about it. */
  readonly action: string;
}

export const ERROR_CODES = {
  INVALID: {
    code: 'INVALID',
    outcomes: ['invalid'],
    meaning: 'the row failed validation at load; it was never sent, and errorMessage lists `field: problem` for every problem',
    action: 'correct the row in the attention file and load that file',
  },
  DEAL_ID_CONFLICT: {
    code: 'DEAL_ID_CONFLICT',
    outcomes: ['invalid'],
    meaning:
      "the row's dealId belongs to another property: an earlier row of the file has it, or the ledger registered it for another cadastral number (errorMessage names both properties and the earlier docflow); it was not sent, --resubmit included",
    action: 'give this deal its own dealId (and correct any other field errorMessage names), then load the row again',
  },
  DUPLICATE_ROW: {
    code: 'DUPLICATE_ROW',
    outcomes: ['invalid'],
    meaning: 'the row repeats an earlier row of the same file: the same dealId for the same property; the earlier row carries the deal',
    action: 'remove the row (loaded again as it is, it ends already_submitted once the earlier row was sent)',
  },
  DOCUMENT_CHANGED: {
    code: 'DOCUMENT_CHANGED',
    outcomes: ['invalid'],
    meaning:
      'a file the row names (agreementFile, agreementSignatureFiles) changed on disk between the load and its upload (its size or sha256 differ from what the load saw, or it can no longer be read); errorMessage names the field, nothing of the file was remembered as uploaded and no docflow was made',
    action:
      'check the file is the right one, then load the row again (or `realty-batch retry <batch> --outcome invalid --force`, which checks the files again)',
  },
  NOT_FOUND: {
    code: 'NOT_FOUND',
    outcomes: ['not_found'],
    meaning:
      "suggest found no object equal to the row's address; errorMessage names the address searched (as sent to suggest) and says that suggest returned nothing, or how many candidates it returned, naming up to three",
    action: 'give the row its cadastralNumber, or correct its address, and load it again',
  },
  AMBIGUOUS: {
    code: 'AMBIGUOUS',
    outcomes: ['ambiguous'],
    meaning: "suggest found several equal objects at the row's address; errorMessage lists their cadastral numbers",
    action: "choose the right object's cadastralNumber for the row and load it again",
  },
  ERR_UNCERTAIN: {
    code: 'ERR_UNCERTAIN',
    outcomes: ['failed'],
    meaning:
      "a try may have created a docflow (its answer never came, or its worker died during the call) and the news feed could not tell; the deal's claim is kept, so nothing sends it blind",
    action:
      'run `realty-batch retry <batch> --outcome failed` (it looks in the feed first); if the feed still cannot tell, check the gateway and answer with `realty-batch ledger <dealId> --resolve <docflowId>` or `--resolve-none`',
  },
  DUPLICATE_DOCFLOW: {
    code: 'DUPLICATE_DOCFLOW',
    outcomes: ['queued', 'suspended', 'already_submitted'],
    meaning:
      "the gateway holds two docflows for the row's deal: a second one for the same requestId, or an earlier try's docflow the news feed showed only after the next try was sent (the feed later than its allowance); errorMessage says which, otherDocflowId names the other; both are followed",
    action:
      'cancel one of the two at the gateway (the deal keeps docflowId); `realty-batch status` and the attention file list every such row until then',
  },
  ERR_JOB_STALLED: {
    code: 'ERR_JOB_STALLED',
    outcomes: ['failed'],
    meaning:
      'its worker stopped (killed, crashed, lost its lock) more often than BullMQ allows while it ran, never during a call that may have created a docflow',
    action: 'find why the workers stopped (memory, restarts), then `realty-batch retry <batch>` sends it again',
  },
  ERR_JOB_FAILED: {
    code: 'ERR_JOB_FAILED',
    outcomes: ['failed'],
    meaning: 'BullMQ failed the job by itself, for a reason its processor did not record (errorMessage says which)',
    action: 'read errorMessage and the worker log; `realty-batch retry <batch>` sends it again',
  },
  ERR_DATA_REMOVED: {
    code: 'ERR_DATA_REMOVED',
    outcomes: ['failed'],
    meaning: 'the job was run again (a retry from the dashboard) after its deal left Redis, and its row had no outcome',
    action: '`realty-batch retry <batch>` reads the deal from the input again and sends it',
  },
  ERR_INTERNAL: {
    code: 'ERR_INTERNAL',
    outcomes: ['failed'],
    meaning: 'an error of our own side (Redis, a defect) outlasted every try; errorMessage says which',
    action: 'read errorMessage and the worker log, fix the cause, then `realty-batch retry <batch>`',
  },
  ERR_API_RESPONSE: {
    code: 'ERR_API_RESPONSE',
    outcomes: ['failed'],
    meaning:
      'the gateway kept answering 2xx with a body the contract does not allow until --attempts ran out (after a docflow call, the news feed was first asked whether it made one)',
    action: 'report the answer (errorMessage) to the gateway operator; `realty-batch retry <batch>` once it is fixed',
  },
  HTTP_STATUS: {
    code: 'HTTP_<status>',
    outcomes: ['rejected', 'forbidden', 'unavailable', 'failed'],
    meaning: 'the gateway answered this status with no code of its own in its body',
    action:
      'as for the outcome: correct a rejected row, ask for access on forbidden, retry unavailable and failed rows once the gateway is back',
  },
  GATEWAY: {
    code: "<the gateway's code>",
    outcomes: ['rejected', 'forbidden', 'unavailable', 'failed'],
    meaning:
      "the gateway's own error code (its body's `code`), passed through as the gateway sent it, persons masked; errorMessage has its message, target and nested errors",
    action:
      'as for the outcome: correct a rejected row from errorMessage and load it again; ask for access on forbidden; retry the others once the gateway is back',
  },
  NETWORK: {
    code: '<network reason>',
    outcomes: ['failed'],
    meaning:
      'no answer came from the gateway until --attempts ran out; the low-level reason is passed through as Node gave it (ECONNRESET, ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, ...)',
    action: 'check the network path to the gateway, then `realty-batch retry <batch>`',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

/** The codes this project writes itself (not the gateway's, not a network's). */
export type ErrorCode = (typeof ERROR_CODES)[Exclude<keyof typeof ERROR_CODES, 'HTTP_STATUS' | 'GATEWAY' | 'NETWORK'>]['code'];

/** The code of a gateway answer whose body named none: `HTTP_<status>`. */
export function httpStatusCode(status: number): string {
  return `HTTP_${status}`;
}

/**
 * The codes of a `failed` row whose cause is our own machinery, not the row nor the gateway:
 * an error of our side that outlasted every try (ERR_INTERNAL), a job BullMQ failed by itself
 * (ERR_JOB_STALLED, ERR_JOB_FAILED), a job run again after its deal left Redis without an
 * outcome (ERR_DATA_REMOVED), and a try whose fate the feed could not tell (ERR_UNCERTAIN:
 * the feed was not followed in time, or its worker died during the call).
 */
const MACHINERY_CODES: ReadonlySet<string> = new Set([
  ERROR_CODES.ERR_INTERNAL.code,
  ERROR_CODES.ERR_JOB_STALLED.code,
  ERROR_CODES.ERR_JOB_FAILED.code,
  ERROR_CODES.ERR_DATA_REMOVED.code,
  ERROR_CODES.ERR_UNCERTAIN.code,
]);

/**
 * Whether a row's outcome fails its job (the queue's failed set, Bull Board's failed list,
 * `realty_queue_jobs{state="failed"}`) instead of completing it with the record as its return
 * value: only when the machinery failed. A business outcome (not_found, ambiguous, rejected,
 * forbidden, unavailable, a `failed` row the gateway or the network caused) completes its job:
 * the row reached its outcome, and its results line says what a person does about it.
 */
export function failsJob(record: { outcome: string; errorCode?: string | undefined }): boolean {
  return record.outcome === 'failed' && record.errorCode !== undefined && MACHINERY_CODES.has(record.errorCode);
}
