import type { SiteplaneClient } from '@siteplane/sdk';
import { client } from './config.js';
import { UsageError } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

/** The one record whose `field` is `wanted`; none or several is a usage error (exit 2) that says which. */
function pick(records: Record<string, unknown>[], field: string, wanted: string, what: string, hint: string): string {
  const found = records.filter((r) => r[field] === wanted);
  if (found.length === 1) return String(found[0]?.uuid);
  if (found.length === 0) throw new UsageError(`No ${what} named "${wanted}" (${hint} lists them)`);
  throw new UsageError(
    `${found.length} ${what}s are named "${wanted}": ${found.map((r) => String(r.uuid)).join(', ')}; give the uuid instead`,
  );
}

/** A server by uuid or by name. */
export async function resolveServer(api: SiteplaneClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  return pick(await api.listServers(), 'name', ref, 'server', '`siteplane servers list`');
}

/** A user of that server by uuid or by username. */
export async function resolveServerUser(api: SiteplaneClient, server: string, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  return pick(await api.listServerUsers(server), 'username', ref, 'user', `\`siteplane servers users ${server}\``);
}

/**
 * A site by uuid or by domain. The API lists sites per server, so the servers are read and then
 * their sites; a deleted site keeps its record but not its name (the domain may be taken again).
 */
export async function resolveSite(api: SiteplaneClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  const sites = (await Promise.all((await api.listServers()).map((s) => api.listSites(String(s.uuid))))).flat();
  return pick(
    sites.filter((s) => s.status !== 'deleted'),
    'domain',
    ref.toLowerCase(),
    'site',
    '`siteplane sites list <server>`',
  );
}

/** A version-control profile by uuid or by name. */
export async function resolveVcProfile(api: SiteplaneClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  return pick(await api.listVcProfiles(), 'name', ref, 'version-control profile', '`siteplane vc list`');
}

/** A DNS profile by uuid or by name. */
export async function resolveDnsProfile(api: SiteplaneClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  return pick(await api.listDnsProfiles(), 'name', ref, 'DNS profile', '`siteplane dns list`');
}

/** A site by domain or uuid, through the configured client. */
export const siteRef = (site: string): Promise<string> => resolveSite(client(), site);
