/**
 * The `encumbrance_request` a deal becomes, in the shape of the contract (docs/gateway.md) and
 * the published example. Its requestId is the one the ledger gave the try
 * (src/ledger/entry.ts: the bank, the dealId and the resubmission number).
 */
import type { Deal } from '../../domain/deal.js';
import type { BankProfile } from '../../input/profile.js';
import { formatRequestId } from '../../realty/request-id.js';
import type { DocflowRequest, EncumbranceOptions } from '../../domain/gateway.js';
import { contentOf, encumbrancerOf, objectOf, whoseRightOf } from '../parties.js';

/** Its code in our requestIds: `<inn>:reg:<try>:<dealId>`. */
export const REGISTRATION_CODE = 'reg';

export function buildEncumbranceRequest(
  deal: Deal,
  cadastralNumber: string,
  profile: BankProfile,
  baseUrl: string,
  requestId: string = formatRequestId(profile.organization.inn, REGISTRATION_CODE, 0, deal.dealId),
): DocflowRequest<EncumbranceOptions> {
  if (!deal.agreement) throw new Error('a registration needs its mortgage agreement');
  return {
    requestId,
    options: {
      encumbranceType: 'mortgage',
      object: objectOf(deal, cadastralNumber),
      whoseRightRestricted: whoseRightOf(deal),
      whoUseRestriction: encumbrancerOf(profile),
      appliedDocuments: {
        mortgageAgreement: { documentType: 'mortgageAgreement', content: contentOf(deal.agreement, baseUrl, 'the agreement') },
      },
    },
  };
}
