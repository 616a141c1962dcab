/** The persons of a row whose names a text about it may carry: the deal's owners and the bank profile's representative. */
import type { Deal } from '../domain/deal.js';
import type { BankProfile } from '../input/profile.js';
import type { PersonNames } from './name-filter.js';

export function personsOf(deal: Deal | undefined, profile?: BankProfile): PersonNames[] {
  const persons: PersonNames[] = (deal?.owners ?? []).map(({ surname, name, patronymic }) => ({ surname, name, patronymic }));
  const representative = profile?.representative?.person;
  if (representative) persons.push({ surname: representative.surname, name: representative.name, patronymic: representative.patronymic });
  return persons;
}
