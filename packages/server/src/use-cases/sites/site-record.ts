import type { Database } from '../../storage/schema.js';

type SiteRow = Database['sites'];
type OperationRow = Pick<Database['operations'], 'uuid' | 'kind' | 'status' | 'created_at' | 'finished_at'>;

/** The site record of ARCHITECTURE §2 (snake_case, no password or secret). */
export interface SiteRecord {
  uuid: string;
  server: string;
  server_user: string;
  type: string;
  domain: string;
  free_domain: boolean;
  free_domain_base: string | null;
  status: string;
  ssl: Record<string, unknown>;
  supports_livewire: boolean;
  options: Record<string, unknown>;
  database: { name: string | null; user: string | null; engine: string } | null;
  port: number | null;
  failure: unknown;
  operation: { uuid: string; kind: string; status: string } | null;
  /** An environment change waits for the next successful deploy. */
  deploy_needed: boolean;
  created_at: string;
  updated_at: string;
}

export function siteRecord(row: SiteRow, operation: OperationRow | null | undefined): SiteRecord {
  return {
    uuid: row.uuid,
    server: row.server_uuid,
    server_user: row.server_user_uuid,
    type: row.type,
    domain: row.domain,
    free_domain: row.free_domain === 1,
    free_domain_base: row.free_domain_base,
    status: row.status,
    ssl: JSON.parse(row.ssl) as Record<string, unknown>,
    supports_livewire: row.supports_livewire === 1,
    options: JSON.parse(row.options) as Record<string, unknown>,
    database: row.db_engine ? { name: row.db_name, user: row.db_user, engine: row.db_engine } : null,
    port: row.port,
    failure: row.failure ? JSON.parse(row.failure) : null,
    operation: operation ? { uuid: operation.uuid, kind: operation.kind, status: operation.status } : null,
    deploy_needed: row.deploy_needed === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
