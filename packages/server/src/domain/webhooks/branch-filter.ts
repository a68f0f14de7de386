/**
 * Which pushed branches deploy. `patterns` null means "the branch of the site's source" (null when
 * the site has none: then nothing passes, rather than every branch deploying to the live site);
 * an empty list means any branch. A `*` in a pattern stands for any run of characters.
 */
export function branchPasses(branch: string, patterns: readonly string[] | null, sourceBranch: string | null): boolean {
  if (patterns === null) return sourceBranch !== null && branch === sourceBranch;
  if (patterns.length === 0) return true;
  return patterns.some((pattern) => globMatches(pattern, branch));
}

function globMatches(pattern: string, value: string): boolean {
  if (!pattern.includes('*')) return pattern === value;
  const parts = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`, 's').test(value);
}
