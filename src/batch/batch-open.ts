/**
 * Whether a load may open a batch (the same input, no live loader, the same --resubmit), and who
 * loads one: a process of this host that no longer exists need not wait for its heartbeat to run out.
 */
import { hostname } from 'node:os';
import { UsageError } from '../errors.js';

/** What a batch's hash says before a load opens it (nulls where it says nothing). */
export interface OpenedBefore {
  fingerprint: string | null | undefined;
  file: string | null | undefined;
  state: string | null | undefined;
  loadingUntil: string | null | undefined;
  loader: string | null | undefined;
  resubmit: string | null | undefined;
}

/**
 * Whether a load may open the batch, and whether it starts afresh: throws UsageError when
 * the batch holds other rows, is being loaded by a live process, or was loaded with
 * another --resubmit setting.
 */
export function mayOpen(
  meta: { id: string; fingerprint: string; resubmit?: boolean },
  created: boolean,
  before: OpenedBefore,
  now: number,
): boolean {
  const { fingerprint, file, state, loadingUntil, loader, resubmit } = before;
  if (!created && fingerprint !== meta.fingerprint) {
    throw new UsageError(
      `Batch ${meta.id} holds other rows (${file ?? 'another file'}, or the same file read with other --format/--encoding/--delimiter/--mapping); give this input a new --batch.`,
    );
  }
  const alive = state === 'loading' && Number(loadingUntil ?? 0) > now && loaderMayLive(loader);
  if (alive) throw new UsageError(`Batch ${meta.id} is being loaded by another process right now; wait for it, or give a new --batch.`);
  // A batch that loaded once stays loaded: the same input again adds no rows, and
  // its workers must not stop while it is read a second time. One whose loader
  // died resumes where it was; one whose load failed starts again.
  const fresh = created || state === 'failed' || !state;
  // Its rows' tries were made as it was first loaded: a second load may not change what they send.
  if (!fresh && (resubmit === '1') !== (meta.resubmit ?? false)) {
    throw new UsageError(
      meta.resubmit
        ? `Batch ${meta.id} was loaded without --resubmit; its rows cannot be sent again now: give this load a new --batch to resubmit its deals.`
        : `Batch ${meta.id} was loaded with --resubmit; load it again with --resubmit (or give a new --batch).`,
    );
  }
  return fresh;
}

/** This process, as `<host>:<pid>`: who is loading a batch. */
export const LOADER = `${hostname()}:${process.pid}`;

/**
 * False only when the loader was a process of this host that no longer exists
 * (killed, crashed): its batch need not wait for the heartbeat to run out.
 */
export function loaderMayLive(loader: string | null | undefined): boolean {
  const at = loader?.lastIndexOf(':') ?? -1;
  if (!loader || at < 0 || loader.slice(0, at) !== hostname()) return true;
  const pid = Number(loader.slice(at + 1));
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
