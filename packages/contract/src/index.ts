export * from './components.js';
export * from './create-site.js';
export * from './deployments.js';
export * from './errors.js';
export * from './outgoing-webhooks.js';
export * from './schemas.js';
export * from './site-types.js';
export * from './webhooks.js';
