import { nodeProcessRecipe } from './builders.js';
import { placeholderProcess } from './placeholder-process.js';

/** NodeJS SSR: Node, PM2 and a placeholder process on the site's port, proxied by nginx. */
export const nodejsSsrRecipe = nodeProcessRecipe('nodejs-ssr', placeholderProcess);
