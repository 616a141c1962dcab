/**
 * The registry's record of mortgages, as it stands now: the registry file's objects with the
 * records they came with, changed as docflows complete (a registration adds a record, a lift
 * removes one). Keyed by cadastral number, so objects sharing one share their records.
 */
import type { EncumbranceRecord, RegistryObject } from './registry.js';

/** `GET /__sandbox/registry`: each object's records, in the order the objects came. */
export interface RegistryEntryView {
  cadastralNumber: string;
  encumbrances: EncumbranceRecord[];
}

export class RegistryBook {
  private readonly byCadastralNumber = new Map<string, EncumbranceRecord[]>();

  constructor(objects: readonly RegistryObject[]) {
    for (const object of objects) {
      const records = this.entry(object.objectCn);
      for (const record of object.encumbrances ?? []) {
        if (!records.some((r) => r.number === record.number)) records.push({ ...record });
      }
    }
  }

  private entry(cadastralNumber: string): EncumbranceRecord[] {
    let records = this.byCadastralNumber.get(cadastralNumber);
    if (records === undefined) this.byCadastralNumber.set(cadastralNumber, (records = []));
    return records;
  }

  /** An object of the registry file, or one a registration has taught the registry. */
  knows(cadastralNumber: string): boolean {
    return this.byCadastralNumber.has(cadastralNumber);
  }

  /** The object's records now (copies: a view, not a handle). */
  recordsOf(cadastralNumber: string): EncumbranceRecord[] {
    return (this.byCadastralNumber.get(cadastralNumber) ?? []).map((r) => ({ ...r }));
  }

  /**
   * A registration: the registry learns of an object it did not know (the file holds only what
   * suggest needs, not every object a bank may register on).
   */
  add(cadastralNumber: string, record: EncumbranceRecord): void {
    const records = this.entry(cadastralNumber);
    if (!records.some((r) => r.number === record.number)) records.push({ ...record });
  }

  /** A lift; false when the object holds no record of this number. */
  remove(cadastralNumber: string, number: string): boolean {
    const records = this.byCadastralNumber.get(cadastralNumber);
    const at = records?.findIndex((r) => r.number === number) ?? -1;
    if (records === undefined || at === -1) return false;
    records.splice(at, 1);
    return true;
  }

  view(): RegistryEntryView[] {
    return [...this.byCadastralNumber].map(([cadastralNumber, records]) => ({
      cadastralNumber,
      encumbrances: records.map((r) => ({ ...r })),
    }));
  }
}
