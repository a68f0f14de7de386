import { staticOutputDirectory } from '../steps/vhost-backend.js';
import { staticRecipe } from './builders.js';

/** Nuxt Static: Node for the build; nginx serves `current/dist` (Nuxt 2) or `current/.output/public` (3, 4). */
export const nuxtStaticRecipe = staticRecipe('nuxt-static', { kind: 'page', pageDir: staticOutputDirectory }, true);
