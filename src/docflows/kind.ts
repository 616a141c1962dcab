/**
 * A docflow type as a module (docs/architecture.md, "Where new work goes"): its input columns and their
 * validation, its own fields of a deal, the body its docflow is created with, and its code in our
 * requestIds. The pipeline (load, claim, send, follow, results, attention, inbox, dashboard,
 * documents) is shared and knows the types only through the registry of these (registry.ts).
 */
import type { Deal, RowDocument } from '../domain/deal.js';
import type { BankProfile } from '../input/profile.js';
import type { OwnColumns } from '../input/validate-deal.js';
import type { DocflowRequest, DocflowType } from '../domain/gateway.js';

/**
 * `Own`: the fields a row of this type adds to the deal (a lift's `{ lift?: LiftFields }`), declared
 * in the type's folder; its deals are `Deal & Own`. A deal holds one type's own fields only, so a
 * kind's methods find nothing in another type's deal.
 */
export interface DocflowKind<Own extends object = object> {
  /** The gateway's name: the path's last part at creation, and the ledger's type. */
  readonly type: DocflowType;
  /**
   * Its code in our requestIds (`<inn>:<code>:<try>:<dealId>`, src/realty/request-id.ts):
   * letters, one type's alone, and never changed, since the ledgers in the field hold them.
   */
  readonly code: string;
  /** What the command line calls it (`--type lift`), beside the gateway's name. */
  readonly name: string;
  /** A few words for people: a summary's, a help text's. */
  readonly title: string;
  /** Its columns beside the object's and the owners' (docs/input-format.md): headers the input may have. */
  readonly columns: readonly string[];
  /** Reads those columns into the deal's own part. */
  readonly own: OwnColumns<Own>;
  /**
   * The documents its own fields apply, in the order they are uploaded, with the columns that
   * name their files; none when the deal holds none (or is another type's). Absent: it has none.
   */
  documents?(deal: Deal & Own): RowDocument[];
  /**
   * The deal with its own fields copied as deep as its documents, so that content ids put in
   * the copy's documents leave the deal as it was. Absent: it has no documents.
   */
  copy?(deal: Deal & Own): Deal & Own;
  /**
   * The docflow's body for a row (its files uploaded: their content ids are in the deal), the
   * object's cadastral number as the row gave it or suggest found it. The claim gives the requestId.
   */
  buildRequest(
    deal: Deal & Own,
    cadastralNumber: string,
    profile: BankProfile,
    baseUrl: string,
    requestId?: string,
  ): DocflowRequest<object>;
  /** Its docflow sends the profile's power of attorney (a lift): a worker uploads its file once a batch. */
  readonly attorney?: boolean;
  /**
   * The attention file's hint when the registry refused one (src/results/hints.ts): what it
   * refused, in English and in Russian, and the flags that load its file again to send it anew.
   */
  readonly refused: { readonly en: string; readonly ru: string; readonly flags: string };
  /** The deal's key in the ledger when it is more than its dealId (an extract ordered again on purpose); default the dealId. */
  ledgerKey?(deal: Deal & Own): string;
}

/** A docflow made on a batch's docflow, not from a row (src/followups/): only its code in our requestIds. */
export interface FollowUpKind {
  readonly type: DocflowType;
  /** As DocflowKind's. */
  readonly code: string;
}
