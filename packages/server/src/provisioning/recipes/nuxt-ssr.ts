import { nodeProcessRecipe } from './builders.js';
import { placeholderProcess } from './placeholder-process.js';

/** Nuxt SSR: Node, PM2 and a placeholder process on the site's port, proxied by nginx. */
export const nuxtSsrRecipe = nodeProcessRecipe('nuxt-ssr', placeholderProcess);
