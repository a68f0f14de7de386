/** Stable error codes. Clients match on these; only the server's http/ layer maps them to statuses. */
export const ERROR_CODES = {
  // request level
  malformed_json: 'The body is not valid JSON.',
  unsupported_media_type: 'The body must be application/json (or, where an endpoint says so, application/gzip).',
  body_too_large: 'The body is larger than the service accepts.',
  invalid_query: 'A query parameter is invalid.',
  validation_failed: 'One or more fields are invalid.',
  unauthenticated: 'A valid bearer token is required.',
  forbidden: 'The token does not allow this action.',
  not_found: 'No such record.',
  route_not_found: 'No such endpoint.',
  method_not_allowed: 'The endpoint does not accept this method.',
  conflict: 'The record is busy with another operation.',
  idempotency_key_reused: 'The Idempotency-Key was used with another request.',
  idempotency_key_in_progress: 'A request with this Idempotency-Key is still being processed.',
  rate_limited: 'Too many requests.',
  quota_exceeded: 'The team holds as many records of this kind as its quota allows (SITEPLANE_QUOTA_*).',
  not_implemented: 'This feature is not built yet.',
  internal: 'Internal error.',
  upstream_unavailable: 'A provider could not be reached.',
  upstream_auth_failed: 'A provider rejected the credentials.',
  upstream_rate_limited: 'A provider rate-limited the request.',
  upstream_not_found: 'A provider does not know the record.',
  upstream_error: 'A provider answered with an error.',
  // version-control profiles (spec §4.2): each way a provider can fail keeps its own code
  provider_auth_failed: "The version-control provider rejected the profile's credentials.",
  provider_rate_limited: 'The version-control provider rate-limited the profile; retry after Retry-After seconds.',
  provider_unreachable: 'The version-control provider could not be reached.',
  provider_error: 'The version-control provider answered with an error or an unreadable answer.',
  repository_not_found: 'The version-control provider has no such repository for this profile.',
  // connections to tenant-chosen targets (servers, VC providers, git remotes): the egress policy
  target_not_allowed: 'The target is at an address this Siteplane does not connect to (SITEPLANE_ALLOWED_TARGETS).',
  target_unreachable: 'The target could not be reached.',
  target_timeout: 'The target did not answer in time.',
  // certificates of temporary names in the operator's zone (FREE_DOMAIN_ZONE): limits reached, retry at Retry-After
  certificate_retry_limited: "The name's certificate orders failed too often in the last hour, or the CA asked to wait.",
  zone_certificates_exhausted:
    "The temporary-domain zone's certificate budget (FREE_DOMAIN_CERTIFICATES_PER_WEEK) is spent for now.",
  team_certificates_exhausted:
    "The team's share of the temporary-domain zone's certificates (FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK) is spent for now.",
  // deployments
  not_deployable: 'Sites of this type are not deployed from a repository.',
  source_missing: 'The site has no source: bind it to a repository first (PUT …/source).',
  deployment_finished: 'The deployment has finished; there is nothing to cancel.',
  no_rollback_target: 'No kept release to roll back to.',
  invalid_artifact: 'The uploaded artifact is not a gzip-compressed tar archive.',
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

/** Codes of single field violations, reported in `errors[].code`. */
export const FIELD_CODES = [
  'required',
  'invalid_type',
  'invalid_format',
  'invalid_value',
  'too_short',
  'too_long',
  'out_of_range',
  'unknown_field',
  'not_allowed_for_type',
  'not_allowed_with_free_domain',
  'not_allowed_without_database',
  'not_allowed',
  'conflicting_values',
  'not_found',
  'provider_mismatch',
  'wildcard_not_allowed_for_type',
  'requires_wildcard',
  'requires_ssl',
  'one_per_server',
  'database_taken',
  'database_user_taken',
  'domain_taken',
  'port_taken',
  'reserved_prefix',
  'db_server_version_conflict',
  'db_family_not_supported',
  /** The engine cannot be installed from the package sources this Siteplane uses (DB_ENGINE_SOURCE). */
  'db_engine_unavailable',
  'node_too_old',
  /** The PHP version is not in the distribution's repository and PHP_SOURCE=distribution. */
  'php_version_unavailable',
  'not_applicable',
  'must_equal',
  'invalid_characters',
  'name_taken',
  'duplicate',
  'insecure_url',
  'provider_auth_failed',
  'repository_not_found',
  /** The address (or an address the name resolves to) is not public and not in SITEPLANE_ALLOWED_TARGETS. */
  'target_not_allowed',
  /** `connection: "local"` while SITEPLANE_LOCAL_SERVER is off. */
  'local_server_disabled',
  /** The account may not own sites: root, the server's SSH user, a system account, or a member of sudo/wheel/adm/root. */
  'privileged_user',
] as const;
export type FieldCode = (typeof FIELD_CODES)[number];

export interface FieldError {
  /** JSON path of the field, dotted (`options.databaseUser`, `dnsProfile.uuid`). */
  field: string;
  code: FieldCode;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
  request_id: string;
}
