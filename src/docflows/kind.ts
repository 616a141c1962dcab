/**
 * A docflow type as a module (docs/architecture.md, "Where new work goes"): its input columns and their
 * validation, and the body its docflow is created with. The pipeline (load, claim, send,
 * follow, results, attention, inbox, dashboard, documents) is shared and knows the types only
 * through the registry of these (registry.ts).
 */
import type { Deal } from '../domain/deal.js';
import type { BankProfile } from '../input/profile.js';
import type { OwnColumns } from '../input/validate-deal.js';
import type { DocflowRequest, DocflowType } from '../domain/gateway.js';

export interface DocflowKind {
  /** The gateway's name: the path's last part at creation, and the ledger's type. */
  readonly type: DocflowType;
  /** What the command line calls it (`--type lift`), beside the gateway's name. */
  readonly name: string;
  /** A few words for people: a summary's, a help text's. */
  readonly title: string;
  /** Its columns beside the object's and the owners' (docs/input-format.md): headers the input may have. */
  readonly columns: readonly string[];
  /** Reads those columns into the deal. */
  readonly own: OwnColumns;
  /**
   * The docflow's body for a row (its files uploaded: their content ids are in the deal), the
   * object's cadastral number as the row gave it or suggest found it. The claim gives the requestId.
   */
  buildRequest(deal: Deal, cadastralNumber: string, profile: BankProfile, baseUrl: string, requestId?: string): DocflowRequest<object>;
  /** Its docflow sends the profile's power of attorney (a lift): a worker uploads its file once a batch. */
  readonly attorney?: boolean;
  /**
   * The attention file's hint when the registry refused one (src/results/hints.ts): what it
   * refused, in English and in Russian, and the flags that load its file again to send it anew.
   */
  readonly refused: { readonly en: string; readonly ru: string; readonly flags: string };
  /** The deal's key in the ledger when it is more than its dealId (an extract ordered again on purpose); default the dealId. */
  ledgerKey?(deal: Deal): string;
}
