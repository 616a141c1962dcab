/** `--notify-url`: the run's summary POSTed as JSON to a webhook, with retries. */
import pRetry from 'p-retry';
import { request } from 'undici';
import { NOTIFY } from '../config.js';
import { WebhookRefusedError } from '../errors.js';
import type { Logger } from '../logger.js';

export async function notify(
  url: string,
  summary: unknown,
  logger: Logger,
  options: { retries?: number; minTimeoutMs?: number } = {},
): Promise<boolean> {
  try {
    await pRetry(
      async () => {
        const response = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(summary),
          signal: AbortSignal.timeout(NOTIFY.timeoutMs),
        });
        await response.body.dump();
        if (response.statusCode >= 300) throw new WebhookRefusedError(response.statusCode);
      },
      { retries: options.retries ?? NOTIFY.retries, minTimeout: options.minTimeoutMs ?? NOTIFY.firstRetryMs, factor: NOTIFY.backoffFactor },
    );
    return true;
  } catch (err) {
    // The run is done either way; a webhook that does not answer is said loudly, once.
    logger.error({ err: { message: (err as Error).message } }, 'the notify webhook did not take the summary');
    return false;
  }
}
