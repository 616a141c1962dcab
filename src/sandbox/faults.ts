/**
 * Transient faults and the random source behind them. With a seed the same sequence of
 * calls meets the same sequence of faults, so a test can reproduce a run exactly.
 */

export type RandomSource = () => number;

/** mulberry32: 32-bit state, good enough spread for fault rolls, and one line to seed. */
export function createRandom(seed?: number): RandomSource {
  if (seed === undefined) return Math.random;
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FaultRates {
  fault501: number;
  fault5xx: number;
  faultReset: number;
  faultLost: number;
}

/** What happens to a request instead of being handled: an error status, or a dropped socket. */
export type InjectedFault = 501 | 500 | 502 | 503 | 'reset';

const SERVER_ERRORS = [500, 502, 503] as const;

/**
 * Rolls the before-handling faults in a fixed order (501, 5xx, reset). A rate of 0 draws
 * nothing, so turning one fault on does not shift the sequence of another.
 */
export function pickFault(rates: FaultRates, random: RandomSource): InjectedFault | undefined {
  if (rates.fault501 > 0 && random() < rates.fault501) return 501;
  if (rates.fault5xx > 0 && random() < rates.fault5xx) {
    return SERVER_ERRORS[Math.floor(random() * SERVER_ERRORS.length)] ?? 500;
  }
  if (rates.faultReset > 0 && random() < rates.faultReset) return 'reset';
  return undefined;
}

/** Rolled only once a docflow has been created: the answer is lost, the docflow is not. */
export function rollLost(rates: FaultRates, random: RandomSource): boolean {
  return rates.faultLost > 0 && random() < rates.faultLost;
}

/** For the command line: `--fault-501 0.2`. Anything but a number in [0, 1] is refused. */
export function parseProbability(flag: string, value: string): number {
  const trimmed = value.trim();
  const parsed = trimmed === '' ? Number.NaN : Number(trimmed);
  if (!Number.isFinite(parsed) || parsed < 0 || parsed > 1) {
    throw new Error(`${flag} must be a probability between 0 and 1, but "${value}" was given.`);
  }
  return parsed;
}
