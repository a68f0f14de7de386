import { minimumNodeMajor, NODE_VERSIONS, PHP_VERSIONS, type SiteTypeSpec, upgradesInstalledNode } from '@siteplane/contract';
import type { FieldErrors } from '../field-errors.js';
import { nodeMajor } from '../servers/facts.js';
import type { CreateSiteContext } from './create-site-context.js';
import type { RuntimePlan } from './create-site-input.js';
import { distributionPhp } from './php-offer.js';

/** The version Siteplane installs on a server without Node when none is asked for (current LTS). */
export const DEFAULT_NODE = '22.x';
/** PHP for a server without PHP whose distribution is not known to ship one (distributionPhp). */
const DEFAULT_PHP = '8.3';

/**
 * phpVersion and nodejsVersion rules of spec §2.2, with each type's Node minimum (the site-type
 * table's `node`, Adonis's from §2.5). One Node per server (§2.2, §8): an installed Node is reused;
 * when it is too old, only a type the spec lets upgrade it (Adonis) does, every other is refused.
 */
export function planRuntime(
  errors: FieldErrors,
  opts: Record<string, unknown>,
  spec: SiteTypeSpec,
  typeVersion: number | undefined,
  ctx: CreateSiteContext,
): RuntimePlan {
  const facts = ctx.server?.facts;
  if (spec.options.includes('phpVersion')) {
    const v = opts.phpVersion;
    if (v !== undefined && (typeof v !== 'string' || !(PHP_VERSIONS as readonly string[]).includes(v))) {
      errors.add('options.phpVersion', 'invalid_value', `phpVersion must be one of: ${PHP_VERSIONS.join(', ')}.`);
      return {};
    }
    // Without a choice, the newest PHP already on the server is used, so nothing is installed; on a
    // server without PHP, the distribution's own, so no third-party repository is needed.
    const installed = [...(facts?.php ?? [])].sort(comparePhp);
    const shipped = distributionPhp(facts?.os);
    const version = (v as string | undefined) ?? installed[installed.length - 1] ?? shipped ?? DEFAULT_PHP;
    const install = !installed.includes(version);
    if (install && ctx.phpSource === 'distribution' && shipped !== null && version !== shipped) {
      errors.add(
        'options.phpVersion',
        'php_version_unavailable',
        `PHP ${version} is not in ${facts?.os}'s own repository, which ships PHP ${shipped}; this Siteplane installs PHP from the distribution only (PHP_SOURCE=distribution).`,
      );
      return {};
    }
    return { php: { version, install } };
  }
  if (!spec.options.includes('nodejsVersion')) return {};

  const v = opts.nodejsVersion;
  if (v !== undefined && (typeof v !== 'string' || !(NODE_VERSIONS as readonly string[]).includes(v))) {
    errors.add('options.nodejsVersion', 'invalid_value', `nodejsVersion must be one of: ${NODE_VERSIONS.join(', ')}.`);
    return {};
  }
  const minimum = minimumNodeMajor(spec.id, typeVersion);
  const needs = `${spec.displayName}${typeVersion === undefined ? '' : ` ${typeVersion}`} needs Node ${minimum}.x or later`;
  const installedMajor = nodeMajor(facts?.node ?? null);
  if (installedMajor !== null && facts?.node) {
    // One Node per server: an installed Node is reused and nodejsVersion ignored, unless too old.
    if (minimum !== undefined && installedMajor < minimum) {
      if (upgradesInstalledNode(spec.id)) return { node: { version: `${minimum}.x`, action: 'upgrade' } };
      errors.add(
        'options.nodejsVersion',
        'node_too_old',
        `The server's Node.js ${facts.node} is too old for this framework: ${needs}. A server has one Node.js, which its other sites use, so it is not upgraded for ${spec.displayName}.`,
      );
      return {};
    }
    return { node: { version: `${installedMajor}.x`, action: 'reuse' } };
  }
  // Without a choice: the default, or the type's minimum when the default is older.
  const fallback = minimum !== undefined && minimum > (nodeMajor(DEFAULT_NODE) ?? 0) ? `${minimum}.x` : DEFAULT_NODE;
  const requested = (v as string | undefined) ?? fallback;
  const requestedMajor = nodeMajor(requested) ?? 0;
  if (minimum !== undefined && requestedMajor < minimum) {
    errors.add('options.nodejsVersion', 'node_too_old', `${needs}.`);
    return {};
  }
  return { node: { version: requested, action: 'install' } };
}

function comparePhp(a: string, b: string): number {
  const [am = 0, an = 0] = a.split('.').map(Number);
  const [bm = 0, bn = 0] = b.split('.').map(Number);
  return am - bm || an - bn;
}
