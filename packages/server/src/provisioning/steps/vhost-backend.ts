import { SITE_TYPES } from '@siteplane/contract';
import type { ProvisionedSite } from '../step.js';
import type { VhostBackend } from '../templates/nginx-vhost.js';
import { StepError } from './commands.js';
import { below, fpmPoolLayout, numberOption, siteLayout, sitePort, stringOption } from './site-layout.js';

/**
 * What nginx serves for a site, by type: PHP types through the user's FPM pool, static types
 * from a directory of the live release, process types (Node, Generic Port, Soketi) by proxy.
 */
export function vhostBackend(site: ProvisionedSite): VhostBackend {
  const current = siteLayout(site).current;
  switch (site.type) {
    case 'laravel':
      return php(
        site,
        below(current, stringOption(site, 'webDirectory') ?? 'public', 'webDirectory'),
        '/index.php?$query_string',
      );
    case 'php':
      return php(site, below(current, stringOption(site, 'webDirectory'), 'webDirectory'), '/index.php?$query_string');
    case 'wordpress':
      return php(site, current, '/index.php?$args');
    case 'phpmyadmin':
      return php(site, current, '=404');
    case 'static-html':
      return { kind: 'static', root: below(current, stringOption(site, 'webDirectory'), 'webDirectory') };
    case 'nodejs-static':
    case 'nuxt-static':
      return { kind: 'static', root: below(current, staticOutputDirectory(site), 'artifactPath') };
    default:
      if (SITE_TYPES[site.type].runtime === 'php') throw new StepError(`no vhost layout for ${site.type}`);
      return { kind: 'proxy', port: sitePort(site), longLived: site.type === 'soketi' };
  }
}

/**
 * The directory a static build leaves its files in: artifactPath for NodeJS Static (required);
 * for Nuxt Static, `nuxt generate` writes dist/ (Nuxt 2) or .output/public (Nuxt 3 and 4).
 */
export function staticOutputDirectory(site: ProvisionedSite): string {
  const artifact = stringOption(site, 'artifactPath');
  if (artifact !== undefined) return artifact;
  if (site.type === 'nodejs-static') throw new StepError('a NodeJS Static site needs artifactPath');
  return numberOption(site, 'site_type_version') === 2 ? 'dist' : '.output/public';
}

function php(
  site: ProvisionedSite,
  root: string,
  fallback: '/index.php?$query_string' | '/index.php?$args' | '=404',
): VhostBackend {
  const version = site.runtime.php?.version;
  if (!version) throw new StepError(`site ${site.domain} has no PHP version`);
  return { kind: 'php', root, socket: fpmPoolLayout(site.user, version).socket, fallback };
}

/** The names the vhost answers to: the domain, www. with includeWww, *. with a wildcard. */
export function serverNames(site: ProvisionedSite): string[] {
  const { domain } = siteLayout(site);
  return [domain, ...(site.ssl.includeWww ? [`www.${domain}`] : []), ...(site.ssl.wildcard ? [`*.${domain}`] : [])];
}
