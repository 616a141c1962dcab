/** A batch's status as the batches page gets it, for the page's unit tests: a running 200-row batch unless `fields` say otherwise. */
import type { BatchStatus } from '../../src/batch/batch-status.js';

/** The page's options the unit tests render with. */
export const PAGE_OPTIONS = { boardPath: '/queues', queueName: 'deals', limit: 50 };

export function batchStatus(fields: Partial<BatchStatus>): BatchStatus {
  return {
    batch: 'night',
    type: 'encumbrance_request',
    total: 200,
    outcomes: {},
    done: false,
    registered: false,
    states: {},
    waitingFor: {},
    state: 'loaded',
    file: '/in/night.csv',
    queue: {},
    missing: 0,
    startedAt: '2026-11-24T01:30:00.000Z',
    duplicates: [],
    ...fields,
  };
}
