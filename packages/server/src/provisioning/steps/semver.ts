/**
 * The part of semver that choosing a release from npm's registry needs: stable `x.y.z` versions,
 * their order, and `engines.node` ranges as npm's packages write them (`^20.17.0 || >=22.9.0`,
 * `>=20.0.0 <=26.x.x`, `6 >=6.2.0 || 8`). A range this does not understand (hyphen ranges,
 * prerelease tags) satisfies nothing, so an unknown requirement never picks a release by mistake.
 */
export type Version = readonly [number, number, number];

export function parseVersion(text: string): Version | null {
  const match = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(text.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

export function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

export function satisfies(version: string, range: string): boolean {
  const v = parseVersion(version);
  if (!v) return false;
  return range.split('||').some((set) => {
    const comparators = set
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    if (comparators.length === 0) return true;
    return comparators.every((comparator) => test(v, comparator));
  });
}

type Part = number | undefined;
const COMPARATOR = /^(>=|<=|>|<|=|\^|~)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$/;

function test(v: Version, comparator: string): boolean {
  const match = COMPARATOR.exec(comparator);
  if (!match) return false;
  const [major, minor, patch] = [match[2], match[3], match[4]].map((p): Part => (p && /^\d+$/.test(p) ? Number(p) : undefined));
  if (major === undefined) return true;
  const low: Version = [major, minor ?? 0, patch ?? 0];
  // The first version after an x-range (`20` → 21.0.0, `20.3` → 20.4.0).
  const next: Version = minor === undefined ? [major + 1, 0, 0] : [major, minor + 1, 0];
  const partial = minor === undefined || patch === undefined;
  const cmp = (to: Version) => compareVersions(v, to);
  switch (match[1] ?? '=') {
    case '=':
      return partial ? cmp(low) >= 0 && cmp(next) < 0 : cmp(low) === 0;
    case '>=':
      return cmp(low) >= 0;
    case '>':
      return partial ? cmp(next) >= 0 : cmp(low) > 0;
    case '<':
      return cmp(low) < 0;
    case '<=':
      return partial ? cmp(next) < 0 : cmp(low) <= 0;
    case '~':
      return cmp(low) >= 0 && cmp(next) < 0;
    default: {
      // ^: the leftmost non-zero part stays.
      const caret: Version =
        major > 0 || minor === undefined
          ? [major + 1, 0, 0]
          : minor > 0 || patch === undefined
            ? [0, minor + 1, 0]
            : [0, 0, patch + 1];
      return cmp(low) >= 0 && cmp(caret) < 0;
    }
  }
}
