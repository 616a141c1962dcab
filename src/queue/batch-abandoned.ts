/**
 * The one error of the project that is BullMQ's own kind (an UnrecoverableError), kept out
 * of src/errors.ts so that what imports the project's errors (the input's reading, in the
 * load's reading thread among others) does not load BullMQ with them.
 */
import { UnrecoverableError } from 'bullmq';

/**
 * A job of a batch whose load failed or died: it is dropped without an outcome (its load
 * did not finish, so its rows were never the batch's), and loading the input again makes
 * it anew. BullMQ's UnrecoverableError, so that the job is failed at once; the worker's
 * net under the processor knows it by its name and records nothing for it.
 */
export class BatchAbandonedError extends UnrecoverableError {
  readonly code = 'ERR_BATCH_ABANDONED';

  constructor(batch: string) {
    super(`batch ${batch} did not load completely; nothing of it is sent`);
    this.name = 'BatchAbandonedError';
  }
}
