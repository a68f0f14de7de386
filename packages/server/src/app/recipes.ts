import type { SiteTypeId } from '@siteplane/contract';
import { recipeFor } from '../provisioning/recipes/index.js';
import type { Recipe } from '../provisioning/step.js';

/** The recipe of each site type (provisioning/recipes). */
export const defaultRecipes = (type: SiteTypeId): Recipe => recipeFor(type);
