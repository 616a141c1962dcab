/**
 * The gateway may echo a value it refused ("snils 12345678901 is wrong"): before
 * any of its text reaches a results file or a log line, the deal's personal
 * values are masked.
 */
import type { Deal } from '../input/deal.js';

export function personalValues(deal: Deal): string[] {
  const values: string[] = [];
  for (const o of deal.owners) {
    values.push(o.surname, o.name, o.snils, o.doc.number);
    if (o.patronymic) values.push(o.patronymic);
    if (o.doc.series) values.push(o.doc.series);
    // SNILS as people write it: 123-456-789 01.
    values.push(`${o.snils.slice(0, 3)}-${o.snils.slice(3, 6)}-${o.snils.slice(6, 9)} ${o.snils.slice(9)}`);
  }
  return values.filter((v) => v.length >= 2);
}

export function maskPersonalData(text: string, deal: Deal): string {
  let out = text;
  for (const value of personalValues(deal).sort((a, b) => b.length - a.length)) {
    out = out.split(value).join('***');
  }
  return out;
}
