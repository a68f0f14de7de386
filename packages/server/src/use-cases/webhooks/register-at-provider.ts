import { DomainError } from '../../domain/errors.js';
import { ValidationError } from '../../domain/field-errors.js';
import { createWebhook } from '../../vcs/create-webhook.js';
import type { UseCaseDeps } from '../deps.js';
import { findVcProfile, profileConfig } from '../vc-profiles/manage-vc-profiles.js';
import { providerFetch } from '../vc-profiles/provider-fetch.js';
import { vcsDomainError } from '../vc-profiles/vcs-errors.js';
import type { RegisterHook } from './webhook-config.js';

/**
 * Creates the site's hook at the provider of a VC profile of the actor's teams, pointed at the
 * hook URL of that provider, with the site's secret. The profile's baseUrl is a tenant's choice,
 * so the request goes through the egress policy like every other call to it.
 */
export function registerHookAtProvider(deps: UseCaseDeps): RegisterHook {
  return async ({ actor, vcProfile, repository, url, secret }) => {
    let row: Awaited<ReturnType<typeof findVcProfile>>;
    try {
      row = await findVcProfile(deps, actor, vcProfile);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found')
        throw new ValidationError([
          { field: 'register.vcProfile', code: 'not_found', message: 'No such profile for this token.' },
        ]);
      throw error;
    }
    const config = profileConfig(deps, row);
    if (config.provider === 'git')
      throw new ValidationError([
        {
          field: 'register.vcProfile',
          code: 'not_applicable',
          message: 'A plain git profile has no API to create hooks with; use the trigger URL from a git hook.',
        },
      ]);
    const fetch = providerFetch(deps.egress);
    try {
      const created = await createWebhook(config, { repository, url: url(config.provider), secret }, { fetch });
      return { provider: config.provider, repository, hook_id: created.id };
    } catch (error) {
      throw vcsDomainError(error, 'repository');
    }
  };
}
