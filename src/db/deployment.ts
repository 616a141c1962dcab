/**
 * The deployment a database belongs to. At its first start a database takes an id of its own
 * (every batch loaded into it carries that id, and a worker on another database refuses the
 * batch's jobs), and the first command that talks to the gateway binds it to that gateway's URL
 * and account: a later start configured for another gateway or account is refused in one
 * sentence, before anything is sent. (Two deployments sharing one ledger, or one deployment
 * split over two, is how a deal gets filed twice without anyone noticing.)
 */
import { randomUUID } from 'node:crypto';
import { DatabaseError } from '../errors.js';
import type { Database } from './database.js';

export interface Deployment {
  databaseId: string;
  prefix: string;
  gatewayUrl: string;
  account: string;
  createdAt: string;
}

/** The database's deployment, made on its first start (not yet bound to a gateway). */
export async function deploymentOf(db: Database, prefix: string): Promise<Deployment> {
  const found = await read(db);
  if (found) return found;
  await db.kysely
    .insertInto('deployment')
    .values({ id: 1, database_id: randomUUID(), prefix, gateway_url: '', account: '', created_at: new Date().toISOString() })
    .onConflict((c) => c.column('id').doNothing())
    .execute();
  return (await read(db))!;
}

/**
 * Binds the database to the gateway and account this process is configured for (`account`
 * '' when it logs in with a fixed session id: only the URL is known then), or checks that it
 * is bound to them. Returns the database's id.
 */
export async function bindDeployment(db: Database, to: { prefix: string; gatewayUrl: string; account: string }): Promise<string> {
  const d = await deploymentOf(db, to.prefix);
  const url = normalUrl(to.gatewayUrl);
  refuseOther(db, d, url, to.account);
  if (d.gatewayUrl === '' || (d.account === '' && to.account !== '')) {
    // First bound here (or the account learnt now): only while nobody bound it otherwise meanwhile.
    await db.kysely
      .updateTable('deployment')
      .set({ gateway_url: url, ...(to.account !== '' && { account: to.account }) })
      .where('id', '=', 1)
      .where('gateway_url', 'in', ['', url])
      .execute();
    return bindDeployment(db, { ...to, gatewayUrl: url, account: to.account });
  }
  return d.databaseId;
}

/**
 * Checks, without binding, that the database is not the ledger of another gateway or account
 * than this process is configured for: `load` and `retry` put jobs in the queue for workers of
 * this configuration, which would refuse them (or the operator has the wrong DATABASE_URL).
 */
export async function checkDeployment(db: Database, to: { prefix: string; gatewayUrl: string; account: string }): Promise<void> {
  refuseOther(db, await deploymentOf(db, to.prefix), normalUrl(to.gatewayUrl), to.account);
}

/** Refuses, in one sentence, a database bound to another gateway URL or account than `url` and `account`. */
function refuseOther(db: Database, d: Deployment, url: string, account: string): void {
  if (d.gatewayUrl !== '' && d.gatewayUrl !== url) {
    throw new DatabaseError(
      `The database ${db.where} is the ledger of the deployment on ${d.gatewayUrl}, and this process is configured for ${url}: point DATABASE_URL at this deployment's database, or REALTY_API_URL at the gateway the ledger belongs to.`,
    );
  }
  if (d.account !== '' && account !== '' && d.account !== account) {
    throw new DatabaseError(
      `The database ${db.where} is the ledger of gateway account ${d.account}, and this process logs in as account ${account}: point DATABASE_URL at that account's database, or REALTY_ACCOUNT_ID at the account the ledger belongs to.`,
    );
  }
}

async function read(db: Database): Promise<Deployment | undefined> {
  const row = await db.kysely.selectFrom('deployment').selectAll().where('id', '=', 1).executeTakeFirst();
  return (
    row && { databaseId: row.database_id, prefix: row.prefix, gatewayUrl: row.gateway_url, account: row.account, createdAt: row.created_at }
  );
}

/** A URL as compared: no trailing slash. */
const normalUrl = (url: string): string => url.replace(/\/+$/, '');
