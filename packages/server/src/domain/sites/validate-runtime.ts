import { minimumNodeMajor, NODE_VERSIONS, PHP_VERSIONS, type SiteTypeSpec } from '@siteplane/contract';
import type { FieldErrors } from '../field-errors.js';
import { nodeMajor } from '../servers/facts.js';
import type { CreateSiteContext } from './create-site-context.js';
import type { RuntimePlan } from './create-site-input.js';

/** The version Siteplane installs on a server without Node when none is asked for (current LTS). */
const DEFAULT_NODE = '22.x';
const DEFAULT_PHP = '8.3';

/** phpVersion and nodejsVersion rules of spec §2.2 and the Adonis Node minimums of §2.5. */
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
    // Without a choice, the newest PHP already on the server is used, so nothing is installed.
    const installed = [...(facts?.php ?? [])].sort(comparePhp);
    const version = (v as string | undefined) ?? installed[installed.length - 1] ?? DEFAULT_PHP;
    return { php: { version, install: !installed.includes(version) } };
  }
  if (!spec.options.includes('nodejsVersion')) return {};

  const v = opts.nodejsVersion;
  if (v !== undefined && (typeof v !== 'string' || !(NODE_VERSIONS as readonly string[]).includes(v))) {
    errors.add('options.nodejsVersion', 'invalid_value', `nodejsVersion must be one of: ${NODE_VERSIONS.join(', ')}.`);
    return {};
  }
  const minimum = minimumNodeMajor(spec.id, typeVersion);
  const installedMajor = nodeMajor(facts?.node ?? null);
  if (installedMajor !== null && facts?.node) {
    // One Node per server: an installed Node is reused and nodejsVersion ignored, unless too old.
    if (minimum !== undefined && installedMajor < minimum) {
      return { node: { version: `${minimum}.x`, action: 'upgrade' } };
    }
    return { node: { version: `${installedMajor}.x`, action: 'reuse' } };
  }
  const requested = (v as string | undefined) ?? (minimum !== undefined && minimum > 22 ? `${minimum}.x` : DEFAULT_NODE);
  const requestedMajor = nodeMajor(requested) ?? 0;
  if (minimum !== undefined && requestedMajor < minimum) {
    errors.add('options.nodejsVersion', 'node_too_old', `${spec.displayName} ${typeVersion} needs Node ${minimum}.x or later.`);
    return {};
  }
  return { node: { version: requested, action: 'install' } };
}

function comparePhp(a: string, b: string): number {
  const [am = 0, an = 0] = a.split('.').map(Number);
  const [bm = 0, bn = 0] = b.split('.').map(Number);
  return am - bm || an - bn;
}
