/**
 * The repositories every stand-in serves, in its own format: more repositories than one page of
 * any provider holds (230, over 100 in each owner, since Bitbucket pages per workspace) and one
 * repository with 250 branches and a default branch that is not `main`, so a client that stops
 * after the first page or assumes `main` fails the contract.
 */
import { createHash } from 'node:crypto';

export interface FixtureBranch {
  name: string;
  sha: string;
}

export interface FixtureRepo {
  /** Owner path and repository name: `['acme', 'api']`, `['acme', 'platform', 'infra', 'deploy']`. */
  path: string[];
  private: boolean;
  defaultBranch: string;
  branches: FixtureBranch[];
}

export interface VcsFixture {
  login: string;
  token: string;
  repos: FixtureRepo[];
  /** The repository with 250 branches, default branch `trunk`. */
  big: FixtureRepo;
}

export const REPO_COUNT = 230;
export const BIG_BRANCH_COUNT = 250;

export function fullName(repo: FixtureRepo): string {
  return repo.path.join('/');
}

export function sha(seed: string): string {
  return createHash('sha1').update(seed).digest('hex');
}

/** `nested` adds GitLab-style subgroup paths (`acme/platform/infra/…`). */
export function makeFixture(options: { nested?: boolean } = {}): VcsFixture {
  const owners = options.nested ? [['acme'], ['octo-org'], ['acme', 'platform', 'infra']] : [['acme'], ['octo-org']];
  const big: FixtureRepo = {
    path: options.nested ? ['acme', 'platform', 'monorepo'] : ['acme', 'monorepo'],
    private: true,
    defaultBranch: 'trunk',
    branches: [
      { name: 'trunk', sha: sha('trunk') },
      ...Array.from({ length: BIG_BRANCH_COUNT - 1 }, (_, i) => {
        const name = i % 2 === 0 ? `feature/f-${String(i).padStart(3, '0')}` : `release-${i}`;
        return { name, sha: sha(name) };
      }),
    ],
  };
  const repos: FixtureRepo[] = [big];
  for (let i = 1; i < REPO_COUNT; i++) {
    const owner = owners[i % owners.length] ?? ['acme'];
    const name = `service-${String(i).padStart(3, '0')}`;
    repos.push({
      path: [...owner, name],
      private: i % 3 !== 0,
      defaultBranch: 'main',
      branches: [
        { name: 'main', sha: sha(`${name}/main`) },
        { name: 'develop', sha: sha(`${name}/develop`) },
      ],
    });
  }
  return { login: 'sp-tester', token: 'sp-test-token-0123456789abcdef', repos, big };
}

export function findRepo(fixture: VcsFixture, path: readonly string[]): FixtureRepo | undefined {
  const wanted = path.join('/').toLowerCase();
  return fixture.repos.find((repo) => fullName(repo).toLowerCase() === wanted);
}
