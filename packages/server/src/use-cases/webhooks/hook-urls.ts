import { HOOK_PROVIDERS } from '@siteplane/contract';

/**
 * Where providers send a site's hooks: `/api/v1/hooks/<provider>/<site-uuid>`; the trigger URL is
 * `/api/v1/hooks/<token>`. `origin` is the scheme and host the client reached this API at.
 */
export function hookUrls(origin: string, siteUuid: string): Record<(typeof HOOK_PROVIDERS)[number], string> {
  return Object.fromEntries(HOOK_PROVIDERS.map((p) => [p, `${origin}/api/v1/hooks/${p}/${siteUuid}`])) as Record<
    (typeof HOOK_PROVIDERS)[number],
    string
  >;
}

export const triggerUrl = (origin: string, token: string): string => `${origin}/api/v1/hooks/${token}`;
