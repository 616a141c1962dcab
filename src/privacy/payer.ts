/**
 * Who pays a docflow's state duty, as the payments file and the docflows' states keep it. An
 * organization is no person to mask: its name and INN are printed as the gateway gave them,
 * so the bank's accounting knows which of its entities pays. A person (or a payer this cannot
 * tell from one) becomes initials, and their INN is dropped: a person's INN is personal data.
 *
 * The gateway gives the payer as `{organization: {name, inn}}`, `{name, inn}` (the public
 * documentation's example, docs/gateway.md), a person's fields, or a bare string. A payer is
 * taken for an organization when it says so (`organization`, a legal entity's 10-digit INN, a
 * KPP or an OGRN) or when its name does (a legal form: ООО, АО, ПАО, ...; a name in «quotes»).
 * A 12-digit INN is a person's (an individual entrepreneur's too): initials.
 */

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;

/** The first letter of each word, as `И. П.`: enough for a bank to know whom it concerns. */
export function initials(words: Array<string | undefined>): string | undefined {
  const letters = words.flatMap((w) => (w ?? '').split(/[\s-]+/)).flatMap((w) => (w ? [`${w.charAt(0).toUpperCase()}.`] : []));
  return letters.length > 0 ? letters.join(' ') : undefined;
}

/** A legal entity's INN: 10 digits (a person's has 12). */
const ORGANIZATION_INN = /^\d{10}$/;
/**
 * A legal form at the start of a name, in capitals as Russian registries write it (`Ао` is a
 * surname), or a name in quotes: no person is called so. (Lookaheads, not `\b`: JavaScript's word boundary knows no Cyrillic.)
 */
const ORGANIZATION_NAME =
  /^(?:ООО|ОАО|ЗАО|ПАО|НАО|АО|НКО|АНО|ГУП|МУП|ФГУП|ГБУ|МБУ|ФГБУ|ТСЖ|ЖСК|СНТ|ПК|КБ|АКБ|LLC|JSC|PJSC|Ltd)(?=[\s«"„“']|$)|[«»"„“]/u;
const ORGANIZATION_TYPES: ReadonlySet<string> = new Set([
  'organization',
  'organisation',
  'legal',
  'legalentity',
  'legal_entity',
  'juridical',
  'company',
  'ul',
]);

function looksLikeOrganization(payer: Loose, name: string | undefined, inn: string | undefined): boolean {
  const type = text(payer.type) ?? text(payer.kind) ?? text(payer.payerType);
  if (type !== undefined && ORGANIZATION_TYPES.has(type.toLowerCase().replace(/[\s-]/g, ''))) return true;
  if (inn !== undefined && ORGANIZATION_INN.test(inn)) return true;
  if (text(payer.kpp) !== undefined || text(payer.ogrn) !== undefined) return true;
  return name !== undefined && ORGANIZATION_NAME.test(name);
}

/** `name, INN inn`, or either alone. */
function organization(name: string | undefined, inn: string | undefined): string | undefined {
  return [name, inn && `INN ${inn}`].filter(Boolean).join(', ') || undefined;
}

/**
 * Who pays, as it may be kept and printed: an organization by its name and INN as given, a
 * person by initials (no INN). Undefined when the payer names no one.
 */
export function maskPayer(payer: unknown): string | undefined {
  if (typeof payer === 'string') return ORGANIZATION_NAME.test(payer.trim()) ? payer.trim() : initials([payer]);
  if (!isObject(payer)) return undefined;
  if (isObject(payer.organization)) return organization(text(payer.organization.name), text(payer.organization.inn));
  const person = isObject(payer.person) ? payer.person : payer;
  const name = text(person.name) ?? text(person.fullName);
  const inn = text(person.inn);
  if (!isObject(payer.person) && looksLikeOrganization(payer, name, inn) && text(person.lastName) === undefined)
    return organization(name, inn);
  const named = initials([text(person.lastName), text(person.firstName), text(person.patronymic)]);
  return named ?? initials([name]);
}
