/**
 * The gateway may echo a value it refused ("snils 123-456-789 64 is wrong",
 * "КУЗНЕЦОВ АНДРЕЙ"): before any of its text reaches a results file or a log
 * line, the deal's personal values are masked, whatever their case and however
 * their digits are separated.
 */
import type { Deal } from '../input/deal.js';

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A pattern for one value: words case-insensitively, digit runs with any spaces or dashes between digits. */
function patternOf(value: string): string | undefined {
  const digits = value.replace(/\D/g, '');
  if (digits.length >= 4 && digits.length === value.replace(/[\s-]/g, '').length) return digits.split('').join('[\\s-]*');
  return value.trim().length >= 2 ? escape(value.trim()).replace(/\s+/g, '\\s+') : undefined;
}

export function personalPatterns(deal: Deal): RegExp | undefined {
  const parts: string[] = [];
  for (const o of deal.owners) {
    for (const value of [o.surname, o.name, o.patronymic, o.snils, o.doc.number, o.doc.series, o.birthPlace]) {
      const p = value ? patternOf(value) : undefined;
      if (p) parts.push(p);
    }
  }
  if (parts.length === 0) return undefined;
  // Longest first, so a full SNILS is masked before a part of it could be.
  parts.sort((a, b) => b.length - a.length);
  return new RegExp(parts.join('|'), 'giu');
}

export function maskPersonalData(text: string, deal: Deal): string {
  const pattern = personalPatterns(deal);
  return pattern ? text.replace(pattern, '***') : text;
}
