/** Reading a request body already checked: paths that may be absent, strings or nothing. */
import { isRecord } from '../docflow-validation.js';

export const at = (value: unknown, ...path: Array<string | number>): unknown =>
  path.reduce<unknown>((node, key) => {
    if (typeof key === 'number') return Array.isArray(node) ? (node[key] as unknown) : undefined;
    return isRecord(node) ? node[key] : undefined;
  }, value);

export const textAt = (value: unknown, ...path: Array<string | number>): string | undefined => {
  const found = at(value, ...path);
  return typeof found === 'string' ? found : undefined;
};

/** The items of an array, or none. */
export const itemsAt = (value: unknown, ...path: Array<string | number>): unknown[] => {
  const found = at(value, ...path);
  return Array.isArray(found) ? found : [];
};
