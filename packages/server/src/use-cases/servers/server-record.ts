import { EMPTY_FACTS, type ServerFacts } from '../../domain/servers/facts.js';
import type { Database } from '../../storage/schema.js';

/** Server record: never the private key; the public key so it can be authorised on the server. */
export function serverRecord(row: Database['servers']) {
  return {
    uuid: row.uuid,
    team: row.team_uuid,
    name: row.name,
    ip: row.ip,
    connection: row.connection,
    ssh_port: row.ssh_port,
    ssh_user: row.ssh_user,
    public_key: row.public_key,
    host_key_sha256: row.host_key_sha256,
    status: row.status,
    facts: { ...EMPTY_FACTS, ...(JSON.parse(row.facts) as ServerFacts) },
    facts_source: row.facts_source,
    facts_at: row.facts_at,
    created_at: row.created_at,
  };
}
