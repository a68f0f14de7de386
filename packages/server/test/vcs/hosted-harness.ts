/** Builds the contract harness for a hosted provider served by its stand-in. */
import { createVcsProvider } from '../../src/vcs/create-vcs-provider.js';
import type { VcsProfileConfig, VcsProviderName } from '../../src/vcs/provider.js';
import { fullName, type VcsFixture } from '../standins/vcs/fixture.js';
import type { RateBudget, StandinServer } from '../standins/vcs/standin-server.js';
import type { ContractHarness } from './contract.js';

export const BAD_TOKEN = 'sp-wrong-token-9f8e7d6c5b4a';

export interface HostedStandin {
  server: StandinServer;
  budget: RateBudget;
  baseUrl: string;
}

export function hostedHarness(options: {
  provider: VcsProviderName;
  fixture: VcsFixture;
  standin: HostedStandin;
  closedPort: number;
  /** The provider sends ETags and answers 304. */
  conditional: boolean;
  rateLimitSaysWhen: boolean;
}): ContractHarness {
  const { fixture, standin } = options;
  const config = (override: Partial<VcsProfileConfig> = {}): VcsProfileConfig => ({
    provider: options.provider,
    baseUrl: standin.baseUrl,
    token: fixture.token,
    repositories: [],
    ...override,
  });
  const missingOwner = fixture.big.path.slice(0, -1).join('/');
  return {
    provider: (now) => createVcsProvider(config(), { now }),
    unreachableProvider: () => createVcsProvider(config({ baseUrl: `http://127.0.0.1:${options.closedPort}` })),
    badTokenProvider: () => createVcsProvider(config({ token: BAD_TOKEN })),
    secrets: [fixture.token, BAD_TOKEN],
    account: fixture.login,
    expected: {
      names: fixture.repos.map(fullName),
      big: {
        name: fullName(fixture.big),
        defaultBranch: fixture.big.defaultBranch,
        branches: fixture.big.branches.map((b) => ({ name: b.name, commit: b.sha })),
      },
      missingName: `${missingOwner}/does-not-exist`,
    },
    knowsVisibility: true,
    requestCount: () => standin.server.requests.length,
    rateLimit: standin.budget,
    rateLimitSaysWhen: options.rateLimitSaysWhen,
    revalidation: options.conditional
      ? () => ({
          total: standin.server.requests.length,
          sentIfNoneMatch: standin.server.requests.filter((r) => r.ifNoneMatch !== null).length,
          served304: standin.server.requests.filter((r) => r.status === 304).length,
        })
      : undefined,
  };
}
