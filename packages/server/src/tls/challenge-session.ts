/**
 * Publishes the answers to an order's challenges and takes every one of them down again, whether
 * the order succeeded or not. All answers go up before the CA is asked to validate any: the
 * wildcard and the bare domain share one TXT name, and removing one answer while the CA still
 * checks the other would fail it.
 */

import type { ChallengeType } from './certificate-names.js';
import { dns01RecordName } from './certificate-names.js';
import type { Dns01Hooks, Http01Hooks } from './challenge-hooks.js';
import { TlsError } from './errors.js';

export interface ChallengeRef {
  type: string;
  url: string;
  token: string;
  status: string;
}

export interface PublishedChallenge {
  /** Certificate name (`*.example.com`). */
  name: string;
  type: ChallengeType;
  challenge: ChallengeRef;
  /** The ACME authorization the challenge belongs to. */
  authorizationUrl: string;
  /** For DNS-01: the record name and value, to wait for visibility. */
  txt?: { fqdn: string; value: string };
}

interface Undo {
  what: string;
  run: () => Promise<void>;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class ChallengeSession<H> {
  private readonly undo: Undo[] = [];

  constructor(
    private readonly hooks: { http01?: Http01Hooks; dns01?: Dns01Hooks<H> },
    private readonly log: (line: string) => void,
  ) {}

  async publish(
    name: string,
    type: ChallengeType,
    challenge: ChallengeRef,
    keyAuthorization: string,
    authorizationUrl: string,
  ): Promise<PublishedChallenge> {
    if (type === 'http-01') {
      const http01 = this.hooks.http01;
      if (!http01) throw new TypeError('http01 hooks are required for HTTP-01 challenges');
      const token = challenge.token;
      // Registered before publishing: a publish that fails halfway may still have written the token.
      this.undo.push({ what: `HTTP-01 token ${token} for ${name}`, run: () => http01.remove(token) });
      this.log(`Publishing the HTTP-01 token for ${name}`);
      try {
        await http01.publish(token, keyAuthorization);
      } catch (error) {
        throw new TlsError('challenge_failed', `Could not publish the HTTP-01 token for ${name}: ${reason(error)}`, {
          domain: name,
        });
      }
      return { name, type, challenge, authorizationUrl };
    }

    const dns01 = this.hooks.dns01;
    if (!dns01) throw new TypeError('dns01 hooks are required for DNS-01 challenges');
    const fqdn = dns01RecordName(name);
    this.log(`Setting TXT record ${fqdn} for ${name}`);
    let handle: H;
    try {
      handle = await dns01.setTxt(fqdn, keyAuthorization);
    } catch (error) {
      throw new TlsError('dns_provider_failed', `Could not create the TXT record ${fqdn} for ${name}: ${reason(error)}`, {
        domain: name,
      });
    }
    this.undo.push({ what: `TXT record ${fqdn} for ${name}`, run: () => dns01.removeTxt(handle) });
    return { name, type, challenge, authorizationUrl, txt: { fqdn, value: keyAuthorization } };
  }

  /** Waits until the CA can see every TXT record (when the hooks can tell). */
  async waitVisible(published: readonly PublishedChallenge[]): Promise<void> {
    const waitVisible = this.hooks.dns01?.waitVisible?.bind(this.hooks.dns01);
    if (!waitVisible) return;
    const records = published.flatMap((p) => (p.txt ? [{ name: p.name, ...p.txt }] : []));
    if (records.length > 0) this.log(`Waiting for ${records.length} TXT record(s) to become visible`);
    await Promise.all(
      records.map(async ({ name, fqdn, value }) => {
        try {
          await waitVisible(fqdn, value);
        } catch (error) {
          if (error instanceof TlsError) throw error;
          throw new TlsError(
            'dns_provider_failed',
            `The TXT record ${fqdn} for ${name} did not become visible: ${reason(error)}`,
            {
              domain: name,
            },
          );
        }
      }),
    );
  }

  /** Removes everything published, newest first; returns what could not be removed. */
  async cleanup(): Promise<string[]> {
    const leftovers: string[] = [];
    for (const step of this.undo.splice(0).reverse()) {
      try {
        await step.run();
        this.log(`Removed ${step.what}`);
      } catch (error) {
        leftovers.push(step.what);
        this.log(`Could not remove ${step.what}: ${reason(error)}`);
      }
    }
    return leftovers;
  }
}
