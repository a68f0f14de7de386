export * from './errors.js';
export * from './site-types.js';
export * from './schemas.js';
