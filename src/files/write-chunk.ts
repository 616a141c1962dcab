/**
 * One write into a stream that respects back-pressure and can never hang: the
 * wait for 'drain' also ends on 'error' and on 'close'. A stream that fails
 * while a writer waits for 'drain' never emits 'drain'; waiting on 'drain'
 * alone hangs for ever.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';

export async function writeChunk(stream: Writable, chunk: unknown): Promise<void> {
  if (stream.errored) throw stream.errored;
  if (stream.destroyed || stream.writableEnded) throw closedError();
  if (stream.write(chunk)) return;
  const stop = new AbortController();
  try {
    // events.once rejects on 'error'; 'close' without an error is a stream gone before it drained.
    await Promise.race([
      once(stream, 'drain', { signal: stop.signal }),
      once(stream, 'close', { signal: stop.signal }).then(() => {
        throw stream.errored ?? closedError();
      }),
    ]);
  } finally {
    // Removes the listener of the wait that lost (its promise rejects into the race, handled).
    stop.abort();
  }
}

function closedError(): Error {
  return Object.assign(new Error('the file was closed before everything was written'), { code: 'ERR_STREAM_DESTROYED' });
}
