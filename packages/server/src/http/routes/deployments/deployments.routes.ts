import { type Static, Type as T } from '@sinclair/typebox';
import { CreateDeploymentBody, DeploymentSchema, listOf, ProblemSchema, RollbackBody } from '@siteplane/contract';
import { cancelDeployment } from '../../../use-cases/deployments/cancel-deployment.js';
import { getDeployment, listDeployments } from '../../../use-cases/deployments/deployment-record.js';
import { rollbackSite } from '../../../use-cases/deployments/rollback.js';
import { startDeployment } from '../../../use-cases/deployments/start-deployment.js';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import type { RouteDef } from '../../route.js';
import { ReceivedUpload } from '../../upload-body.js';
import { PAGE_QUERY } from '../page-query.js';
import { paged } from '../paged.js';

/** application/octet-stream too: what `curl --data-binary` and many CI upload steps send. */
const ARTIFACT_MEDIA_TYPES = ['application/gzip', 'application/x-gzip', 'application/octet-stream'];
const site = (req: { params: unknown }) => (req.params as { site: string }).site;
const deployment = (req: { params: unknown }) => (req.params as { deployment: string }).deployment;
const ACCEPTED = {
  description:
    'Accepted; follow the operation (GET /api/v1/operations/<uuid>) for steps and log lines. Deploys still queued for the site were superseded by this one (`superseded_by`).',
  schema: DeploymentSchema,
  headers: { Location: 'The deployment URL' },
};

/** Deployments and rollbacks of a site. */
export const deploymentRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'POST',
    url: '/api/v1/sites/:site/deployments',
    operationId: 'createDeployment',
    summary: 'Deploy a site from its source, or an uploaded .tar.gz built elsewhere',
    tag: 'Deployments',
    auth: 'write',
    params: { site: 'Site UUID' },
    body: CreateDeploymentBody,
    bodyOptional: true,
    upload: {
      mediaTypes: ARTIFACT_MEDIA_TYPES,
      description:
        'A .tar.gz of what CI built (its root becomes the release root), at most SITEPLANE_ARTIFACT_MAX_BYTES (default 200 MiB). Deployed without building: no build command, no after-fetch hooks; the site needs no bound source.',
    },
    responses: {
      202: ACCEPTED,
      409: { description: 'conflict: the site is not installed', schema: ProblemSchema },
      413: { description: 'body_too_large: the artifact is over SITEPLANE_ARTIFACT_MAX_BYTES', schema: ProblemSchema },
      415: { description: 'unsupported_media_type: neither JSON nor a gzip type', schema: ProblemSchema },
      422: {
        description: 'validation_failed; not_deployable; source_missing; invalid_artifact (not gzip, or no tar inside)',
        schema: ProblemSchema,
      },
    },
    async handler(req, reply, actor) {
      const request =
        req.body instanceof ReceivedUpload
          ? { artifact: req.body.artifact }
          : ((req.body ?? {}) as Static<typeof CreateDeploymentBody>);
      const record = await startDeployment(deps, { site: site(req), actor, trigger: 'manual', ...request });
      reply.status(202).header('Location', `/api/v1/deployments/${record.uuid}`);
      return record;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/sites/:site/deployments',
    operationId: 'listDeployments',
    summary: 'List a site’s deployments',
    tag: 'Deployments',
    auth: 'read',
    params: { site: 'Site UUID' },
    query: PAGE_QUERY,
    responses: {
      200: { description: 'Deployments and rollbacks, oldest first, cursor-paged', schema: listOf(DeploymentSchema) },
    },
    handler: (req, reply, actor) => paged(req, reply, (page) => listDeployments(deps, actor, site(req), page)),
  },
  {
    method: 'GET',
    url: '/api/v1/deployments/:deployment',
    operationId: 'getDeployment',
    summary: 'Retrieve one deployment',
    tag: 'Deployments',
    auth: 'read',
    params: { deployment: 'Deployment UUID' },
    responses: {
      200: { description: 'The deployment', schema: DeploymentSchema },
      404: { description: 'Unknown or another tenant’s', schema: ProblemSchema },
    },
    handler: (req, _reply, actor) => getDeployment(deps, actor, deployment(req)),
  },
  {
    method: 'POST',
    url: '/api/v1/deployments/:deployment/cancel',
    operationId: 'cancelDeployment',
    summary: 'Cancel a deployment',
    tag: 'Deployments',
    auth: 'write',
    params: { deployment: 'Deployment UUID' },
    body: T.Object({}, { additionalProperties: false, description: 'Empty' }),
    bodyOptional: true,
    responses: {
      200: { description: 'It was queued: cancelled now, it never runs', schema: DeploymentSchema },
      202: {
        description:
          'It is running: cancel requested (`cancel_requested`); the running step is stopped, later ones are aborted, the live release keeps serving',
        schema: DeploymentSchema,
      },
      409: { description: 'deployment_finished: nothing to cancel', schema: ProblemSchema },
    },
    async handler(req, reply, actor) {
      const { record, cancelled } = await cancelDeployment(deps, actor, deployment(req));
      reply.status(cancelled === 'now' ? 200 : 202);
      return record;
    },
  },
  {
    method: 'POST',
    url: '/api/v1/sites/:site/rollback',
    operationId: 'rollbackSite',
    summary: 'Roll a site back to a kept release',
    tag: 'Deployments',
    auth: 'write',
    params: { site: 'Site UUID' },
    body: RollbackBody,
    bodyOptional: true,
    responses: {
      202: {
        description:
          'Accepted: a deployment with trigger `rollback` (operation kind `rollback`); `rollback` says whether the environment or migrations changed since the target release',
        schema: DeploymentSchema,
        headers: { Location: 'The deployment URL' },
      },
      409: {
        description: 'conflict: a deployment of the site is queued or running, or the site is not installed',
        schema: ProblemSchema,
      },
      422: { description: 'validation_failed on release; no_rollback_target; not_deployable', schema: ProblemSchema },
    },
    async handler(req, reply, actor) {
      const record = await rollbackSite(deps, actor, site(req), (req.body ?? {}) as Static<typeof RollbackBody>);
      reply.status(202).header('Location', `/api/v1/deployments/${record.uuid}`);
      return record;
    },
  },
];
