import { describe, it, expect } from 'vitest';
import { ApiHttpError, ApiNetworkError, ApiResponseError, DocumentChangedError, LoginRefusedError } from '../../src/errors.js';
import { decide, describeApiError, retryDelay } from '../../src/worker/deal/gateway-failure.js';

const http = (status: number, extra: Partial<ConstructorParameters<typeof ApiHttpError>[0]> = {}) =>
  new ApiHttpError({ status, endpoint: 'docflows', ...extra });

describe('what each gateway answer becomes', () => {
  it('pauses the queue when the fleet login is refused, as for a refused session', () => {
    expect(decide(new LoginRefusedError(400))).toEqual({ action: 'pause' });
  });

  it.each([
    [400, { action: 'record', outcome: 'rejected' }],
    [401, { action: 'pause' }],
    [403, { action: 'record', outcome: 'forbidden' }],
    [501, { action: 'retry', exhausted: 'unavailable' }],
    [500, { action: 'retry', exhausted: 'failed' }],
    [502, { action: 'retry', exhausted: 'failed' }],
    [503, { action: 'retry', exhausted: 'failed' }],
    [429, { action: 'retry', exhausted: 'failed' }],
  ])('HTTP %i decides %o', (status, expected) => {
    expect(decide(http(status))).toEqual(expected);
  });

  it('records invalid, never retried, when a file the row names changed after the load (DOCUMENT_CHANGED, the field named)', () => {
    const err = new DocumentChangedError('agreementSignatureFiles', 2, 'content');
    expect(decide(err)).toEqual({ action: 'record', outcome: 'invalid' });
    expect(describeApiError(err)).toEqual({
      errorCode: 'DOCUMENT_CHANGED',
      errorMessage: expect.stringMatching(/^agreementSignatureFiles: file 2 changed on disk after the load \(its sha256/),
    });
  });

  it('retries timeouts, resets and unreadable answers, then records failed', () => {
    expect(decide(new ApiNetworkError('docflows', 'UND_ERR_HEADERS_TIMEOUT'))).toEqual({ action: 'retry', exhausted: 'failed' });
    expect(decide(new ApiNetworkError('docflows', 'ECONNRESET'))).toEqual({ action: 'retry', exhausted: 'failed' });
    expect(decide(new ApiResponseError('docflows', 200, 'docflowId missing'))).toEqual({ action: 'retry', exhausted: 'failed' });
  });
});

describe('the delay before the next try', () => {
  it('doubles the first delay with each failed try, within a 20 % jitter', () => {
    const mid = () => 0.5;
    expect(retryDelay(1, 1000, http(501), mid)).toBe(1000);
    expect(retryDelay(2, 1000, http(501), mid)).toBe(2000);
    expect(retryDelay(4, 1000, http(501), mid)).toBe(8000);
    expect(retryDelay(1, 1000, http(501), () => 0)).toBe(800);
    expect(retryDelay(1, 1000, http(501), () => 0.999999)).toBe(1200);
  });

  it('waits what Retry-After says for a 429', () => {
    expect(retryDelay(1, 1000, http(429, { retryAfterSeconds: 7 }))).toBe(7000);
  });

  it('never waits more than an hour', () => {
    expect(retryDelay(30, 30_000, http(501))).toBe(60 * 60 * 1000);
  });
});

describe('the error as a results cell', () => {
  it('keeps code, message, target and nested errors of a 400', () => {
    const err = http(400, {
      body: {
        code: 'validation',
        message: 'The request is not valid',
        target: 'options',
        errors: [{ code: 'required', message: 'is required', target: 'options.object.cadastralNumber' }],
      },
    });
    const d = describeApiError(err);
    expect(d.errorCode).toBe('validation');
    expect(d.httpStatus).toBe(400);
    expect(d.errorMessage).toBe(
      '400: validation: The request is not valid @ options; required: is required @ options.object.cadastralNumber',
    );
  });
});
