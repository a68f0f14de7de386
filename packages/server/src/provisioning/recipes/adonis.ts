import { nodeProcessRecipe } from './builders.js';
import { placeholderProcess } from './placeholder-process.js';

/**
 * Adonis: Node (upgraded when too old for Adonis 6/7), PM2, optional PostgreSQL database, a
 * placeholder process on the site's port until the first deployment brings the app.
 */
export const adonisRecipe = nodeProcessRecipe('adonis', placeholderProcess);
