import type { TSchema } from '@sinclair/typebox';
import { CREATE_SITE_BODIES, CreateSiteBody } from './create-site.js';
import {
  CreateDeploymentBody,
  DeployHookSchema,
  DeploymentSchema,
  DeploySettingsSchema,
  EnvironmentSchema,
  HealthCheckSchema,
  PatchDeploySettingsBody,
  PatchEnvironmentBody,
  PutSiteSourceBody,
  RollbackBody,
  SharedPathSchema,
  SiteSourceSchema,
} from './deployments.js';
import {
  CreatedOutgoingWebhookSchema,
  CreateOutgoingWebhookBody,
  OutgoingWebhookDeliverySchema,
  OutgoingWebhookSchema,
  RotateOutgoingWebhookSecretBody,
  UpdateOutgoingWebhookBody,
} from './outgoing-webhooks.js';
import {
  CreateDnsProfileBody,
  CreatedSiteSchema,
  CreateServerBody,
  CreateServerUserBody,
  CreateVcProfileBody,
  DeleteSiteBody,
  DnsProfileSchema,
  FactsSchema,
  FieldErrorSchema,
  ListMeta,
  OperationRef,
  OperationSchema,
  ProblemSchema,
  RepositoryDetailSchema,
  RepositorySchema,
  ServerRecordSchema,
  ServerUserSchema,
  SiteRecordSchema,
  VcProfileSchema,
} from './schemas.js';
import { SITE_TYPE_IDS, SITE_TYPES } from './site-types.js';
import { ConfigureWebhookBody, HookAnswerSchema, TriggerBody, WebhookDeliverySchema, WebhookSchema } from './webhooks.js';

/**
 * The shapes the OpenAPI document names under components/schemas: wherever a route's schema holds
 * one of these objects, the document refers to it by name, so the reference and the generated SDK
 * show one `Site` rather than a copy per endpoint. The names are part of the SDK's API: keep them.
 */
export const NAMED_SCHEMAS: Readonly<Record<string, TSchema>> = {
  Problem: ProblemSchema,
  FieldError: FieldErrorSchema,
  ListMeta,
  OperationRef,
  Operation: OperationSchema,
  CreateSiteRequest: CreateSiteBody,
  ...Object.fromEntries(SITE_TYPE_IDS.map((id) => [createSiteSchemaName(id), CREATE_SITE_BODIES[id]])),
  Site: SiteRecordSchema,
  CreatedSite: CreatedSiteSchema,
  DeleteSiteRequest: DeleteSiteBody,
  ServerFacts: FactsSchema,
  CreateServerRequest: CreateServerBody,
  Server: ServerRecordSchema,
  CreateServerUserRequest: CreateServerUserBody,
  ServerUser: ServerUserSchema,
  CreateDnsProfileRequest: CreateDnsProfileBody,
  DnsProfile: DnsProfileSchema,
  CreateVcProfileRequest: CreateVcProfileBody,
  VcProfile: VcProfileSchema,
  Repository: RepositorySchema,
  RepositoryDetail: RepositoryDetailSchema,
  SetSiteSourceRequest: PutSiteSourceBody,
  SiteSource: SiteSourceSchema,
  DeployHook: DeployHookSchema,
  SharedPath: SharedPathSchema,
  HealthCheck: HealthCheckSchema,
  UpdateDeploySettingsRequest: PatchDeploySettingsBody,
  DeploySettings: DeploySettingsSchema,
  UpdateEnvironmentRequest: PatchEnvironmentBody,
  Environment: EnvironmentSchema,
  CreateDeploymentRequest: CreateDeploymentBody,
  RollbackRequest: RollbackBody,
  Deployment: DeploymentSchema,
  SetWebhookRequest: ConfigureWebhookBody,
  Webhook: WebhookSchema,
  WebhookDelivery: WebhookDeliverySchema,
  HookAnswer: HookAnswerSchema,
  TriggerRequest: TriggerBody,
  CreateOutgoingWebhookRequest: CreateOutgoingWebhookBody,
  OutgoingWebhook: OutgoingWebhookSchema,
  CreatedOutgoingWebhook: CreatedOutgoingWebhookSchema,
  OutgoingWebhookDelivery: OutgoingWebhookDeliverySchema,
  UpdateOutgoingWebhookRequest: UpdateOutgoingWebhookBody,
  RotateOutgoingWebhookSecretRequest: RotateOutgoingWebhookSecretBody,
};

/** CreateLaravelSiteRequest, CreateStaticHtmlSiteRequest, …: the component of one type's create body. */
export function createSiteSchemaName(id: keyof typeof CREATE_SITE_BODIES): string {
  const words = SITE_TYPES[id].displayName.split(/[^A-Za-z0-9]+/);
  return `Create${words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}SiteRequest`;
}
