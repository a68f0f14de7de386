import type { UseCaseDeps } from '../../use-cases/deps.js';
import type { RouteDef } from '../route.js';
import { deploySettingsRoutes } from './deployments/deploy-settings.routes.js';
import { deploymentRoutes } from './deployments/deployments.routes.js';
import { siteSourceRoutes } from './deployments/site-source.routes.js';
import { dnsProfileRoutes } from './dns-profiles/dns-profile.routes.js';
import { teamEventsRoute } from './events/events.route.js';
import { outgoingWebhookRoutes } from './events/outgoing-webhooks.routes.js';
import { getOperationRoute } from './operations/get-operation.route.js';
import { operationEventsRoute } from './operations/operation-events.route.js';
import { serverRoutes } from './servers/server.routes.js';
import { createSiteRoute } from './sites/create-site.route.js';
import { deleteSiteRoute } from './sites/delete-site.route.js';
import { getSiteRoute } from './sites/get-site.route.js';
import { listSitesRoute } from './sites/list-sites.route.js';
import { retrySiteRoute } from './sites/retry-site.route.js';
import { retrySslRoute } from './sites/ssl-retry.route.js';
import { vcProfileRoutes } from './vc-profiles/vc-profile.routes.js';
import { webhookRoutes } from './webhooks/webhook.routes.js';

/** Every authenticated endpoint of the service. */
export function apiRoutes(deps: UseCaseDeps): RouteDef[] {
  return [
    listSitesRoute(deps),
    getSiteRoute(deps),
    createSiteRoute(deps),
    deleteSiteRoute(deps),
    retrySiteRoute(deps),
    retrySslRoute(deps),
    getOperationRoute(deps),
    operationEventsRoute(deps),
    teamEventsRoute(deps),
    ...outgoingWebhookRoutes(deps),
    ...serverRoutes(deps),
    ...dnsProfileRoutes(deps),
    ...vcProfileRoutes(deps),
    ...webhookRoutes(deps),
    ...siteSourceRoutes(deps),
    ...deploySettingsRoutes(deps),
    ...deploymentRoutes(deps),
  ];
}
