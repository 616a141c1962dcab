/**
 * The `cessation_encumbrance_request` a lift's row becomes, in the shape of the published
 * example (test/fixtures/gateway-examples/cessation-encumbrance-request.json): the object and
 * owners as a registration sends them, the registry's record of the mortgage, the bank with its
 * power of attorney when the profile has one, and its other documents (an empty list when none).
 */
import type { BankProfile } from '../../input/profile.js';
import { formatRequestId } from '../../realty/request-id.js';
import type { CessationOptions, DocflowRequest } from '../../domain/gateway.js';
import { contentOf, objectOf, whoseRightOf } from '../parties.js';
import type { LiftDeal } from './fields.js';

/** Its code in our requestIds: `<inn>:lift:<try>:<dealId>`. */
export const LIFT_CODE = 'lift';

export function buildLiftRequest(
  deal: LiftDeal,
  cadastralNumber: string,
  profile: BankProfile,
  baseUrl: string,
  requestId: string = formatRequestId(profile.organization.inn, LIFT_CODE, 0, deal.dealId),
): DocflowRequest<CessationOptions> {
  const lift = deal.lift;
  if (!lift) throw new Error("a lift needs the registry's record of the mortgage");
  const { attorney, ...representative } = profile.representative;
  const encumbrancer: CessationOptions['whoUseRestriction']['encumbrancer'][number] = {
    organization: profile.organization,
    representative: attorney
      ? {
          ...representative,
          // A power of attorney is what makes the representative a confidant, whatever the profile's default said.
          representativeType: 'confidant',
          attorney: {
            type: 'powerOfAttorneyBankRepresentative',
            appliedDocument: contentOf(attorney, baseUrl, 'the power of attorney'),
          },
        }
      : representative,
  };
  return {
    requestId,
    options: {
      encumbranceType: lift.encumbranceType,
      object: objectOf(deal, cadastralNumber),
      registrationRecord: { number: lift.recordNumber, date: lift.recordDate },
      whoseRightRestricted: whoseRightOf(deal),
      whoUseRestriction: { encumbrancer: [encumbrancer] },
      appliedDocuments: {
        other: lift.documents.map((document, i) => ({
          documentType: 'other' as const,
          content: contentOf(document, baseUrl, `other document ${i + 1}`),
        })),
      },
    },
  };
}
