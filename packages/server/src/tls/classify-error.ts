/**
 * Turns a failed ACME step into a TlsError a user can act on. Pure: it sees only what the step
 * was, the error acme-client threw, and what the transport recorded (problem document, network
 * failure), so every rule here is unit-tested without a CA.
 */
import type { AcmeCallRecord } from './acme-transport.js';
import { TlsError } from './errors.js';

export type AcmeStep = 'account' | 'order' | 'challenge' | 'finalize';

export interface FailedStep {
  step: AcmeStep;
  directoryUrl: string;
  /** The name the step was about; for account steps there is none. */
  domain?: string;
  /** For challenge steps: the challenge type used. */
  challengeType?: string;
  error: unknown;
  record: AcmeCallRecord;
}

const PREFIX = 'urn:ietf:params:acme:error:';

const CERT_ERRORS = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function networkReason(code: string, message: string): string {
  if (CERT_ERRORS.has(code)) {
    return `its TLS certificate is not trusted (${code}); for a private or test CA set ACME_CA_CERTS to its CA bundle`;
  }
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'its host name does not resolve';
  if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') return 'it did not answer in time';
  return `${message} (${code})`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** CA details often end in a full stop; the messages here add their own. */
function sentence(text: string): string {
  return text.trim().replace(/\.+$/, '');
}

/** What the CA is told a user should do for the common validation problems. */
function challengeHint(type: string, challengeType: string | undefined): string {
  switch (type) {
    case 'dns':
      return challengeType === 'dns-01'
        ? ' The CA could not look up the _acme-challenge TXT record; check the DNS profile manages this zone.'
        : ' The CA could not resolve the domain; check its A/AAAA records.';
    case 'connection':
      return ' The CA could not connect to the server on port 80; check the firewall and that the domain points here.';
    case 'unauthorized':
    case 'incorrectResponse':
      return challengeType === 'dns-01'
        ? " The CA did not see the expected _acme-challenge TXT record; check that the DNS profile's provider serves this zone (its nameservers are the domain's)."
        : ' The server answered with something else; check the domain points to this server and nothing intercepts /.well-known/acme-challenge/.';
    case 'caa':
      return ' A CAA record of the domain forbids this CA.';
    default:
      return '';
  }
}

function subject(domain: string | undefined): string {
  return domain ? ` for ${domain}` : '';
}

export function classifyAcmeFailure(failure: FailedStep): TlsError {
  const { step, domain, record, directoryUrl } = failure;
  const problem = record.problem;
  const base = domain ? { domain } : {};

  if (problem && (problem.status === 429 || problem.type === `${PREFIX}rateLimited`)) {
    const when = problem.retryAfterSeconds !== undefined ? ` Try again in ${problem.retryAfterSeconds} s.` : ' Try again later.';
    return new TlsError(
      'rate_limited',
      `The CA refused the request${subject(domain)}: rate limit reached (${sentence(problem.detail)}).${when}`,
      {
        ...base,
        acmeProblem: problem.type,
        ...(problem.retryAfterSeconds !== undefined ? { retryAfterSeconds: problem.retryAfterSeconds } : {}),
      },
    );
  }

  if (!problem && record.network) {
    const reason = networkReason(record.network.code, record.network.message);
    return new TlsError('ca_unreachable', `Cannot reach the ACME CA at ${directoryUrl}${subject(domain)}: ${reason}.`, base);
  }

  if (problem && problem.status >= 500) {
    return new TlsError(
      'ca_unreachable',
      `The ACME CA at ${directoryUrl} failed${subject(domain)} (HTTP ${problem.status}: ${sentence(problem.detail)}); try again later.`,
      { ...base, acmeProblem: problem.type },
    );
  }

  // No answer at all: acme-client hides network errors behind a TypeError.
  if (!problem && failure.error instanceof TypeError) {
    return new TlsError('ca_unreachable', `Cannot reach the ACME CA at ${directoryUrl}${subject(domain)}.`, base);
  }

  const detail = sentence(problem?.detail || messageOf(failure.error));
  const extra = problem ? { acmeProblem: problem.type } : {};
  const type = problem?.type.startsWith(PREFIX) ? problem.type.slice(PREFIX.length) : '';

  if (step === 'account' || type === 'accountDoesNotExist' || type === 'externalAccountRequired') {
    const hint =
      type === 'externalAccountRequired'
        ? ' This CA requires external account binding (an EAB key id and HMAC key from its dashboard, as ZeroSSL issues).'
        : '';
    return new TlsError(
      'account_failed',
      `The ACME CA at ${directoryUrl} refused the account${subject(domain)}: ${detail}.${hint}`,
      {
        ...base,
        ...extra,
      },
    );
  }

  if (step === 'challenge') {
    const via = failure.challengeType ? ` (${failure.challengeType})` : '';
    return new TlsError(
      'challenge_failed',
      `Validation${subject(domain)} failed${via}: ${detail}.${challengeHint(type, failure.challengeType)}`,
      { ...base, ...extra },
    );
  }

  const action = step === 'order' ? 'refused to order a certificate' : 'did not issue the certificate';
  return new TlsError('challenge_failed', `The CA ${action}${subject(domain)}: ${detail}.`, { ...base, ...extra });
}
