import { nodeProcessRecipe } from './builders.js';
import { placeholderProcess } from './placeholder-process.js';

/** Next SSR: Node, PM2 and a placeholder process on the site's port, proxied by nginx. */
export const nextSsrRecipe = nodeProcessRecipe('next-ssr', placeholderProcess);
