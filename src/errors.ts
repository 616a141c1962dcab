/**
 * Every error the project raises on purpose, each with a stable string `code`.
 * Messages never carry the session id or personal data: they name rows, fields
 * and deal ids, never values of a person.
 */
import type { ApiErrorBody } from './domain/gateway.js';
import type { FieldProblem } from './domain/deal.js';

export abstract class RealtyBatchError extends Error {
  abstract readonly code: string;
  /** The CLI's exit code when this error ends a command (docs/results.md, "Exit codes"). */
  readonly exitCode: number = 1;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Wrong usage of the command line: exit 2. */
export class UsageError extends RealtyBatchError {
  readonly code = 'ERR_USAGE';
  override readonly exitCode = 2;
}

/** Bad configuration (environment, flags that parse but make no sense together). */
export class ConfigError extends RealtyBatchError {
  readonly code = 'ERR_CONFIG';
}

/** An input file that cannot be read to its end (not a row problem: rows become `invalid`). */
export class InputError extends RealtyBatchError {
  readonly code = 'ERR_INPUT_INVALID';
}

/** The bank profile failed validation: every problem is listed, nothing is enqueued. */
export class ProfileError extends RealtyBatchError {
  readonly code = 'ERR_PROFILE_INVALID';
  readonly problems: readonly FieldProblem[];

  constructor(file: string, problems: readonly FieldProblem[]) {
    const unreadable = problems.length === 1 && problems[0]?.field === '(file)';
    super(
      unreadable
        ? `The bank profile ${file} ${problems[0]!.message}.`
        : `The bank profile ${file} is not valid: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}.`,
    );
    this.problems = problems;
  }
}

/** An output file (results, attention, rejects, a summary) could not be written whole: the previous one stays. */
export class OutputError extends RealtyBatchError {
  readonly code = 'ERR_OUTPUT';
}

/** Redis could not be reached or answered with an error that stops the command. */
export class RedisUnavailableError extends RealtyBatchError {
  readonly code = 'ERR_REDIS_UNAVAILABLE';
}

/**
 * The database (the system of record, src/db/) cannot be opened, reached or used: its schema is
 * newer than this version, it belongs to another deployment, or it does not answer.
 */
export class DatabaseError extends RealtyBatchError {
  readonly code = 'ERR_DATABASE';
}

/**
 * The news feed is not known complete to within two poll intervals: a claim waits (src/ledger/claim.ts)
 * and the row's try is not spent (src/worker/deal/failure.ts). Never a row's outcome.
 */
export class FeedNotCompleteError extends Error {
  readonly code = 'ERR_FEED_NOT_COMPLETE';
  constructor(
    message: string,
    readonly behind: { kind: 'behind'; coveredAt: number; now: number; allowMs: number },
  ) {
    super(message);
    this.name = 'FeedNotCompleteError';
  }
}

// --- The load's and the webhook's errors (src/batch/load-batch.ts, enqueue.ts; src/schedule/notify.ts) ---

/**
 * Taking back a batch's jobs (a failed load, or a batch loaded afresh) found some still
 * held by a worker after every pass: exit 1; running the load again finishes it.
 */
export class BatchJobsHeldError extends RealtyBatchError {
  readonly code = 'ERR_BATCH_JOBS_HELD';
  readonly batch: string;

  constructor(batch: string) {
    super(`some jobs of batch ${batch} stayed locked by a worker; run the load again`);
    this.batch = batch;
  }
}

/**
 * A batch loaded afresh found jobs an earlier life of its id left (its row index expired
 * first), and a worker holds some of them, so they cannot be made again yet: exit 1.
 */
export class LeftoverJobsHeldError extends RealtyBatchError {
  readonly code = 'ERR_LEFTOVER_JOBS_HELD';
  readonly batch: string;
  /** How many of the leftover jobs a worker held. */
  readonly held: number;

  constructor(batch: string, held: number) {
    super(`${held} jobs of an earlier load of batch ${batch} are still held by a worker; load again in a minute`);
    this.batch = batch;
    this.held = held;
  }
}

/** The `--notify-url` webhook answered with a status of 300 or more (retried; the run is done either way). */
export class WebhookRefusedError extends RealtyBatchError {
  readonly code = 'ERR_WEBHOOK_REFUSED';
  readonly status: number;

  constructor(status: number) {
    super(`the webhook answered ${status}`);
    this.status = status;
  }
}

// --- end of the load's and the webhook's errors ---

/** The gateway answered with a status other than success, or with a body the contract does not allow. */
export class ApiHttpError extends RealtyBatchError {
  readonly code = 'ERR_API_HTTP';
  readonly status: number;
  readonly endpoint: string;
  readonly body: ApiErrorBody | undefined;
  /** Seconds, from a Retry-After header, when the gateway sent one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(options: { status: number; endpoint: string; body?: ApiErrorBody; retryAfterSeconds?: number; message?: string }) {
    const detail = options.body?.message ?? options.body?.code;
    super(options.message ?? `The gateway answered ${options.status} to ${options.endpoint}${detail ? `: ${detail}` : ''}`);
    this.status = options.status;
    this.endpoint = options.endpoint;
    this.body = options.body;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The gateway refused the session (401) to a command that cannot wait for a new one: it stops, exit 1. */
export class SessionRefusedError extends RealtyBatchError {
  readonly code = 'ERR_SESSION';

  constructor(endpoint: string) {
    super(
      `The gateway refused the session (401 to ${endpoint}): set a valid REALTY_SESSION_ID (or REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID), then run this command again; what it finished is kept.`,
    );
  }
}

/**
 * `POST /auth` refused the credentials (400): nothing else can pass. It names the login and
 * account variables, never the password; commands stop (exit 1), workers pause the queue.
 */
export class LoginRefusedError extends RealtyBatchError {
  readonly code = 'ERR_LOGIN';

  constructor(status: number) {
    super(
      `The gateway refused the login (${status} to auth): check REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID (the account the login belongs to), then run this command again.`,
    );
  }
}

/** No answer from the gateway: timeout, refused or reset connection. */
export class ApiNetworkError extends RealtyBatchError {
  readonly code = 'ERR_API_NETWORK';
  readonly endpoint: string;
  /** The low-level code (`UND_ERR_HEADERS_TIMEOUT`, `ECONNRESET`, ...). */
  readonly reason: string;

  constructor(endpoint: string, reason: string, cause?: unknown) {
    super(`No answer from the gateway to ${endpoint} (${reason})`, { cause });
    this.endpoint = endpoint;
    this.reason = reason;
  }
}

/**
 * The gateway's host could not be reached when a command started (src/cli/gateway-check.ts):
 * names the url (never a session), exit 1, nothing loaded or sent.
 */
export class GatewayUnreachableError extends RealtyBatchError {
  readonly code = 'ERR_GATEWAY_UNREACHABLE';

  constructor(url: string, reason: string) {
    super(
      `The gateway at ${url} cannot be reached (${reason}): check REALTY_API_URL and the network, then run this command again; nothing was loaded or sent.`,
    );
  }
}

/** The gateway answered 2xx with a body that does not match the contract. */
export class ApiResponseError extends RealtyBatchError {
  readonly code = 'ERR_API_RESPONSE';
  readonly status: number;
  readonly endpoint: string;

  constructor(endpoint: string, status: number, detail: string) {
    super(`The gateway's answer to ${endpoint} (${status}) does not match the contract: ${detail}`);
    this.status = status;
    this.endpoint = endpoint;
  }
}

/**
 * A file a row names (`agreementFile`, `agreementSignatureFiles`) is not, as it is read to be
 * uploaded, the file the load checked: its size or its sha256 differ. Nothing of it reached the
 * gateway as a content (the last bytes are held back until the file is known to be the same), no
 * docflow is made, and the row ends `invalid`. It names the field, never the path nor a value.
 */
export class DocumentChangedError extends RealtyBatchError {
  readonly code = 'DOCUMENT_CHANGED';
  /** The column naming the file: `agreementFile`, `agreementSignatureFiles`, `otherDocumentFiles`. */
  readonly field: string;
  /** Which of the signature files (1-based, as the load's messages count them). */
  readonly file: number | undefined;

  /**
   * `replaced`: another file (or a link) stands at its name; `not-regular`: a pipe, a device or a
   * folder does. `sent`: part of it had gone out when the change was seen (changed in place while
   * it streamed); the gateway never got a whole content of it.
   */
  constructor(field: string, file: number | undefined, how: 'size' | 'content' | 'gone' | 'replaced' | 'not-regular', sent = false) {
    const what =
      how === 'gone'
        ? 'it can no longer be read: deleted, moved or its access changed'
        : how === 'replaced'
          ? 'it is no longer the file the load checked: another file or a link stands in its place'
          : how === 'not-regular'
            ? 'it is no longer a regular file: a pipe, a device or a folder stands in its place'
            : `its ${how === 'size' ? 'size' : 'sha256'} is not what the load saw`;
    super(
      `${field}: ${file !== undefined ? `file ${file} ` : ''}changed on disk after the load (${what}); ${sent ? 'part of it was sent, never a whole content, and no docflow was made' : 'nothing was sent for this row'}: check the file, then load the row again`,
    );
    this.field = field;
    this.file = file;
  }
}
