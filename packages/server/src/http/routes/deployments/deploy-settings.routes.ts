import type { Static } from '@sinclair/typebox';
import {
  DeploySettingsSchema,
  EnvironmentSchema,
  PatchDeploySettingsBody,
  PatchEnvironmentBody,
  ProblemSchema,
} from '@siteplane/contract';
import { getDeploySettings, patchDeploySettings } from '../../../use-cases/deployments/deploy-settings.js';
import { getEnvironment, patchEnvironment } from '../../../use-cases/deployments/environment.js';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import type { RouteDef } from '../../route.js';

const site = (req: { params: unknown }) => (req.params as { site: string }).site;
const NOT_DEPLOYABLE = {
  description: 'not_deployable: the site’s type is not deployed from code (the reason is given)',
  schema: ProblemSchema,
};

/** Deploy settings and environment of a site (GET/PATCH …/deploy-settings, …/environment). */
export const deploySettingsRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'GET',
    url: '/api/v1/sites/:site/deploy-settings',
    operationId: 'getDeploySettings',
    summary: 'A site’s deploy settings',
    tag: 'Deployments',
    auth: 'read',
    params: { site: 'Site UUID' },
    responses: {
      200: { description: 'Effective settings; `defaults` lists those that follow the type', schema: DeploySettingsSchema },
      422: NOT_DEPLOYABLE,
    },
    handler: (req, _reply, actor) => getDeploySettings(deps, actor, site(req)),
  },
  {
    method: 'PATCH',
    url: '/api/v1/sites/:site/deploy-settings',
    operationId: 'updateDeploySettings',
    summary: 'Change a site’s deploy settings',
    tag: 'Deployments',
    auth: 'write',
    params: { site: 'Site UUID' },
    body: PatchDeploySettingsBody,
    responses: {
      200: { description: 'The settings after the change', schema: DeploySettingsSchema },
      422: { description: 'validation_failed with every violation and its field path; not_deployable', schema: ProblemSchema },
    },
    handler: (req, _reply, actor) =>
      patchDeploySettings(deps, actor, site(req), req.body as Static<typeof PatchDeploySettingsBody>),
  },
  {
    method: 'GET',
    url: '/api/v1/sites/:site/environment',
    operationId: 'getEnvironment',
    summary: 'A site’s environment variables (keys only)',
    tag: 'Deployments',
    auth: 'read',
    params: { site: 'Site UUID' },
    responses: {
      200: { description: 'Keys, scopes and times; values are never returned', schema: EnvironmentSchema },
      422: NOT_DEPLOYABLE,
    },
    handler: (req, _reply, actor) => getEnvironment(deps, actor, site(req)),
  },
  {
    method: 'PATCH',
    url: '/api/v1/sites/:site/environment',
    operationId: 'updateEnvironment',
    summary: 'Set or unset environment variables',
    tag: 'Deployments',
    auth: 'write',
    params: { site: 'Site UUID' },
    body: PatchEnvironmentBody,
    responses: {
      200: {
        description: 'Keys after the change; the site is `deploy_needed` until the next successful deploy',
        schema: EnvironmentSchema,
      },
      422: {
        description: 'validation_failed (key names, sizes, a key both set and unset); not_deployable',
        schema: ProblemSchema,
      },
    },
    handler: (req, _reply, actor) => patchEnvironment(deps, actor, site(req), req.body as Static<typeof PatchEnvironmentBody>),
  },
];
