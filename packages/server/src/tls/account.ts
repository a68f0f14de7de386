/**
 * ACME accounts: one per CA and team. The caller stores the returned key (encrypted) and URL and
 * passes the key back next time; the account is found again by its key, so a lost or stale URL
 * (a CA that forgot it, as Pebble does on restart) never blocks issuance.
 */
import type * as acme from 'acme-client';
import { loadAcme } from './acme-module.js';
import { type AcmeTransport, type AcmeTransportOptions, withAcmeTransport } from './acme-transport.js';
import { classifyAcmeFailure } from './classify-error.js';
import { TlsError } from './errors.js';

/** ZeroSSL-style external account binding: a key id and a base64url HMAC key from the CA. */
export interface ExternalAccountBinding {
  kid: string;
  hmacKey: string;
}

export interface AcmeAccount {
  accountUrl: string;
  /** PEM private key of the account; store it encrypted, never log it. */
  accountKeyPem: string;
  /** True when this call registered the account, false when the key already had one. */
  created: boolean;
}

export interface AccountOptions {
  directoryUrl: string;
  /** Contact the CA writes to about expiring certificates and policy changes. */
  email?: string;
  externalAccountBinding?: ExternalAccountBinding;
  log?: (line: string) => void;
}

export interface EnsureAccountOptions extends AccountOptions, Omit<AcmeTransportOptions, 'caCertsPem'> {
  /** The key of the team's account with this CA; a new key is generated when absent. */
  accountKeyPem?: string;
  /** ACME_CA_CERTS: extra CA bundle trusted for the CA's own HTTPS. */
  caCertsPem?: string;
}

export interface ClientOptions {
  directoryUrl: string;
  accountKeyPem: string;
  externalAccountBinding?: ExternalAccountBinding;
  /** First wait between status polls; it doubles up to 30 s. */
  pollIntervalMs?: number;
}

/** ECDSA P-256 (ES256): accepted by Let's Encrypt and ZeroSSL, small and fast to sign with. */
export async function generateAccountKey(): Promise<string> {
  return (await (await loadAcme()).crypto.createPrivateEcdsaKey('P-256')).toString();
}

export async function acmeClient(options: ClientOptions): Promise<acme.Client> {
  const min = options.pollIntervalMs ?? 2_000;
  const { Client } = await loadAcme();
  return new Client({
    directoryUrl: options.directoryUrl,
    accountKey: options.accountKeyPem,
    ...(options.externalAccountBinding ? { externalAccountBinding: options.externalAccountBinding } : {}),
    // Enough polls for about four minutes at the default interval; CAs validate in seconds.
    backoffAttempts: 12,
    backoffMin: min,
    backoffMax: Math.max(min, 30_000),
  });
}

const DOES_NOT_EXIST = 'urn:ietf:params:acme:error:accountDoesNotExist';

/**
 * Within a transport: finds the account of the client's key (`onlyReturnExisting`, which needs
 * no EAB) or registers one. Terms of service are agreed on the operator's behalf: choosing the CA
 * in Siteplane's configuration is that agreement.
 */
export async function openAccount(
  client: acme.Client,
  transport: AcmeTransport,
  options: AccountOptions,
): Promise<{ accountUrl: string; created: boolean }> {
  const { directoryUrl, log } = options;
  const fail = (error: unknown): TlsError =>
    error instanceof TlsError ? error : classifyAcmeFailure({ step: 'account', directoryUrl, error, record: transport.record });

  transport.reset();
  try {
    const existing = await client.createAccount({ onlyReturnExisting: true });
    const accountUrl = client.getAccountUrl();
    if (existing.status !== 'valid') {
      throw new TlsError(
        'account_failed',
        `The ACME account ${accountUrl} at ${directoryUrl} is ${existing.status}; create a new account key for this CA.`,
      );
    }
    log?.(`Using ACME account ${accountUrl}`);
    return { accountUrl, created: false };
  } catch (error) {
    if (transport.record.problem?.type !== DOES_NOT_EXIST) throw fail(error);
  }

  transport.reset();
  try {
    await client.createAccount({
      termsOfServiceAgreed: true,
      ...(options.email ? { contact: [`mailto:${options.email}`] } : {}),
    });
  } catch (error) {
    throw fail(error);
  }
  const accountUrl = client.getAccountUrl();
  log?.(`Registered ACME account ${accountUrl} at ${directoryUrl}`);
  return { accountUrl, created: true };
}

/** Finds or creates the account of a team with a CA; returns what the caller should store. */
export async function ensureAccount(options: EnsureAccountOptions): Promise<AcmeAccount> {
  const accountKeyPem = options.accountKeyPem ?? (await generateAccountKey());
  return withAcmeTransport(options, async (transport) => {
    const client = await acmeClient({ ...options, accountKeyPem });
    const { accountUrl, created } = await openAccount(client, transport, options);
    return { accountUrl, accountKeyPem, created };
  });
}
