/** SIGINT and SIGTERM: a command stops cleanly on the first, at once on the second. */
/**
 * SIGINT and SIGTERM: the first asks the command to stop cleanly (the signal
 * aborts), a second exits at once.
 */
export function onShutdownSignals(stopping = 'finishing active jobs'): AbortController {
  const controller = new AbortController();
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  for (const signal of signals) {
    process.on(signal, () => {
      if (controller.signal.aborted) {
        console.error(`realty-batch: ${signal} again, exiting now.`);
        process.exit(130);
      }
      console.error(`realty-batch: ${signal} received, ${stopping} (send it again to exit at once).`);
      controller.abort();
    });
  }
  return controller;
}

/** Resolves once the signal has aborted, at once when it already has. */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
