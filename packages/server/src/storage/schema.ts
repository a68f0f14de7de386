import type { Generated } from 'kysely';

/**
 * Tables as both dialects see them. Times are ISO-8601 UTC strings and JSON is text, so the same
 * queries and migrations serve SQLite and PostgreSQL.
 */
export interface Database {
  accounts: { uuid: string; name: string; created_at: string };
  teams: { uuid: string; account_uuid: string; name: string; created_at: string };
  tokens: {
    uuid: string;
    account_uuid: string;
    team_uuid: string | null;
    name: string;
    scope: 'read' | 'write';
    hash: string;
    created_at: string;
    revoked_at: string | null;
  };
  servers: {
    uuid: string;
    team_uuid: string;
    name: string;
    ip: string;
    connection: 'ssh' | 'local' | 'dry-run';
    ssh_port: number;
    ssh_user: string;
    public_key: string | null;
    private_key_enc: string | null;
    host_key_sha256: string | null;
    facts: string;
    facts_source: 'declared' | 'detected' | 'none';
    facts_at: string | null;
    status: 'unverified' | 'verified' | 'unreachable';
    created_at: string;
    updated_at: string;
    deleted_at: string | null;
  };
  server_users: { uuid: string; server_uuid: string; username: string; created_at: string };
  dns_profiles: {
    uuid: string;
    team_uuid: string;
    provider: string;
    name: string;
    credentials_enc: string;
    verified_at: string | null;
    created_at: string;
  };
  vc_profiles: {
    uuid: string;
    team_uuid: string;
    provider: string;
    name: string;
    base_url: string | null;
    token_enc: string | null;
    repositories_enc: string | null;
    account_login: string | null;
    created_at: string;
  };
  sites: {
    uuid: string;
    team_uuid: string;
    server_uuid: string;
    server_user_uuid: string;
    type: string;
    domain: string;
    free_domain: number;
    free_domain_base: string | null;
    status: string;
    ssl: string;
    supports_livewire: number;
    options: string;
    runtime: string;
    secrets_enc: string | null;
    db_engine: string | null;
    db_name: string | null;
    db_user: string | null;
    db_create: number;
    db_install_engine: number;
    db_sha2: number;
    port: number | null;
    singleton_type: string | null;
    failure: string | null;
    created_at: string;
    updated_at: string;
    deleted_at: string | null;
    /** Migration 009: 1 after an environment change, until a deploy of that environment succeeds. */
    deploy_needed?: number;
  };
  server_databases: {
    server_uuid: string;
    name_key: string;
    name: string;
    engine: string;
    site_uuid: string | null;
    created_at: string;
  };
  server_database_users: {
    server_uuid: string;
    name_key: string;
    name: string;
    engine: string;
    site_uuid: string | null;
    created_at: string;
  };
  site_resources: { site_uuid: string; seq: number; kind: string; ref: string; details: string; created_at: string };
  operations: {
    uuid: string;
    site_uuid: string;
    team_uuid: string;
    /** `ssl`: issue, renew or redeploy the site's certificate (issue 4), after the site is installed. */
    kind: 'create' | 'delete' | 'ssl' | 'deploy' | 'rollback';
    status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
    params: string;
    error: string | null;
    created_at: string;
    started_at: string | null;
    finished_at: string | null;
  };
  operation_steps: {
    operation_uuid: string;
    idx: number;
    name: string;
    status: 'running' | 'succeeded' | 'failed' | 'aborted';
    exit_code: number | null;
    started_at: string;
    finished_at: string | null;
  };
  operation_logs: { operation_uuid: string; seq: number; at: string; line: string };
  jobs: {
    uuid: string;
    operation_uuid: string;
    site_uuid: string;
    kind: string;
    status: 'queued' | 'running' | 'done' | 'failed';
    attempts: number;
    max_attempts: number;
    run_at: string;
    lease_until: string | null;
    locked_by: string | null;
    last_error: string | null;
    created_at: string;
    /** Migration 007: the site's team, for the fair claim (set on every insert; older rows backfilled). */
    team_uuid: string;
  };
  /** Migration 004: scoped to the token's team set; the response sealed; a reservation leased to its request. */
  /** Migration 010: per server, bumped by PostgreSQL triggers on every change to its site list (empty on SQLite). */
  site_list_versions: { server_uuid: string; version: string | number };
  /** Minute: whole minutes since the epoch. */
  rate_limit_counts: { key: string; minute: number; count: number };
  idempotency_keys: {
    account_uuid: string;
    /** SHA-256 (hex) of the token's team uuids, sorted, joined by commas. */
    team_set: string;
    key: string;
    method: string;
    path: string;
    body_hash: string;
    status_code: number | null;
    response: string | null;
    headers: string | null;
    created_at: string;
    /** Who holds the reservation while the first request runs; null once its response is stored. */
    reservation: string | null;
    /** The reservation is taken over after this (its process died); extended while the request runs. */
    reserved_until: string | null;
  };
  /** Migration 002 (TLS): ACME accounts per owner (team uuid or `siteplane`) and CA directory. */
  acme_accounts: {
    uuid: string;
    owner: string;
    directory_url: string;
    account_url: string | null;
    email: string | null;
    key_enc: string;
    created_at: string;
    updated_at: string;
  };
  /** One per subject (`site:<uuid>`, `zone:<zone>`); material_enc seals {fullChainPem, privateKeyPem}. */
  certificates: {
    uuid: string;
    scope: string;
    owner: string;
    directory_url: string;
    domains: string;
    material_enc: string | null;
    serial: string | null;
    not_before: string | null;
    expires_at: string | null;
    lock_until: string | null;
    locked_by: string | null;
    next_attempt_at: string | null;
    last_error: string | null;
    created_at: string;
    updated_at: string;
    /** Migration 006: an order held back by a limit; the renewal scheduler queues it again then. */
    deferred_until: string | null;
  };
  /** The certificate deployed on each site's server, and when the scheduler should renew it. */
  site_certificates: {
    site_uuid: string;
    certificate_uuid: string;
    serial: string;
    expires_at: string;
    renew_after: string;
    deployed_at: string;
  };
  /** Migration 006: orders for temporary names in the operator's zone, counted against the CA's budgets. */
  free_domain_issuances: {
    uuid: string;
    zone: string;
    name: string;
    team_uuid: string;
    site_uuid: string;
    /** 1 when the name had a certificate already (exempt from the weekly budgets). */
    renewal: number;
    outcome: 'ordering' | 'issued' | 'failed';
    retry_after: string | null;
    created_at: string;
    updated_at: string;
  };
  /** Migration 007: per team, the number of the claim that last served it (jobs/queue.ts, fair claim). */
  team_claims: { team_uuid: string; last_served: number };
  /** Migration 008: a site's push webhook; the secret sealed, the trigger URL's token only hashed (SHA-256 hex). */
  site_webhooks: {
    site_uuid: string;
    team_uuid: string;
    secret_enc: string;
    trigger_hash: string;
    /** JSON array of branch patterns; null = the branch of the site's source. */
    branches: string | null;
    /** JSON {provider, repository, hook_id} when the hook was created at the provider. */
    registered: string | null;
    /** Migration 016: the profile the registered hook was created through (null: none; before 016, filled by 017 where the site's source names the hook's repository). */
    vc_profile_uuid: string | null;
    secret_rotated_at: string;
    trigger_rotated_at: string;
    created_at: string;
    updated_at: string;
  };
  /** The last 100 hooks received per site, with what became of each. */
  webhook_deliveries: {
    uuid: string;
    site_uuid: string;
    provider: string;
    delivery_id: string | null;
    event: string | null;
    outcome: 'accepted' | 'ignored' | 'rejected';
    reason: string | null;
    detail: string | null;
    branch: string | null;
    commit_sha: string | null;
    deployment_uuid: string | null;
    created_at: string;
  };
  /** Delivery ids that started a deployment in the last day. */
  webhook_delivery_ids: { site_uuid: string; provider: string; delivery_id: string; created_at: string };
  /** Migration 010: the per-team change log (storage/event-log.ts); PostgreSQL answers seq and xid as strings. */
  events: {
    seq: Generated<number | string>;
    team_uuid: string;
    kind: string;
    subject_uuid: string;
    /** JSON; never a secret. */
    payload: string;
    /** The writing transaction's id on PostgreSQL (0 on SQLite): readers order by (xid, seq). */
    xid: Generated<number | string>;
    created_at: string;
  };
  /** Migration 014: outgoing webhooks, each with its place in the change log (PostgreSQL answers bigints as strings). */
  outgoing_webhooks: {
    uuid: string;
    team_uuid: string;
    url: string;
    /** JSON array of event types (families expanded when stored). */
    events: string;
    /** The `whsec_…` signing secret, sealed. */
    secret_enc: string;
    cursor_xid: number | string;
    cursor_seq: number | string;
    cursor_floor: number | string;
    attempts: number;
    next_attempt_at: string | null;
    lease_token: string | null;
    lease_until: string | null;
    created_at: string;
    /** Migration 015: 0 while paused (the cursor waits; events are delivered on resume). */
    enabled: number;
    /** Migration 015: the secret before the last rotation, sealed; it also signs until it expires. */
    previous_secret_enc: string | null;
    previous_secret_expires_at: string | null;
  };
  /** Migration 014: every attempt to deliver an event to an outgoing webhook. */
  outgoing_webhook_deliveries: {
    uuid: string;
    webhook_uuid: string;
    event_seq: number | string;
    event_type: string;
    attempt: number;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    next_attempt_at: string | null;
    delivered_at: string | null;
    created_at: string;
    /** Migration 015: the delivery this attempt resends by hand (POST …/resend); null for the dispatcher's. */
    resend_of: string | null;
  };
  /** Migration 009: what a site deploys from; the clone URL and deploy key sealed. */
  site_sources: {
    site_uuid: string;
    vc_profile_uuid: string;
    provider: string;
    repository: string;
    branch: string;
    app_folder: string | null;
    clone_url_enc: string;
    auth: 'token' | 'deploy_key' | 'none';
    deploy_public_key: string | null;
    deploy_private_key_enc: string | null;
    /** Migration 010: the provider's id of the deploy key Siteplane registered there. */
    deploy_key_provider_id: string | null;
    /** Migration 010: hosted providers with `access: deploy_key` only; null otherwise. */
    deploy_key_status: 'registered' | 'not_registered' | null;
    /** Migration 010: why the key is not registered (the provider's refusal). */
    deploy_key_reason: string | null;
    created_at: string;
    updated_at: string;
  };
  /** Migration 010: a registered deploy key's removal at its provider, attempted once (best effort). */
  deploy_key_removals: {
    uuid: string;
    site_uuid: string;
    vc_profile_uuid: string;
    provider: string;
    repository: string;
    provider_key_id: string;
    cause: 'unbound' | 'rebound' | 'site_deleted';
    outcome: 'removed' | 'already_gone' | 'failed';
    detail: string | null;
    created_at: string;
  };
  /** Migration 015: every removal of a site's push webhook at its provider, with its outcome. */
  webhook_removals: {
    uuid: string;
    site_uuid: string;
    vc_profile_uuid: string | null;
    provider: string;
    repository: string;
    provider_hook_id: string;
    cause: 'disabled' | 'replaced' | 'site_deleted';
    outcome: 'removed' | 'already_gone' | 'failed';
    detail: string | null;
    created_at: string;
  };
  /** Migration 009: the settings a user changed (JSON); the rest follow the type's defaults. */
  site_deploy_settings: { site_uuid: string; settings: string; updated_at: string };
  /** Migration 009: one row per variable, its value sealed. */
  site_environment: { site_uuid: string; key: string; scope: 'build' | 'runtime'; value_enc: string; updated_at: string };
  /** Migration 009: a deployment or rollback, beside the operation that runs it (status is the operation's). */
  deployments: {
    uuid: string;
    site_uuid: string;
    team_uuid: string;
    operation_uuid: string;
    kind: 'deploy' | 'rollback';
    trigger: string;
    branch: string | null;
    requested_commit: string | null;
    commit_sha: string | null;
    commit_message: string | null;
    commit_author: string | null;
    release: string;
    /** The live release when the deployment was asked for (a rollback leaves it). */
    from_release: string | null;
    /** SHA-256 of the environment the deploy ran with (keys, scopes, values). */
    environment_hash: string | null;
    ran_migrations: number;
    /** A rollback's answer: {environment_changed, migrations_changed} (JSON). */
    rollback_info: string | null;
    /** 1 once a rollback left this release. */
    release_bad: number;
    superseded_by: string | null;
    cancel_requested_at: string | null;
    created_at: string;
    /** git: fetched from the site's source; artifact: an uploaded .tar.gz (storage/artifact-store.ts). */
    source_kind: 'git' | 'artifact';
    artifact_sha256: string | null;
    /** At most SITEPLANE_ARTIFACT_MAX_BYTES (below 2 GiB: an integer column on both databases). */
    artifact_bytes: number | null;
  };
}
