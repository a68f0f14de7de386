import type { SiteTypeId } from '@siteplane/contract';
import { DomainError } from '../domain/errors.js';
import type { Recipe } from '../provisioning/step.js';

/** The recipe of each site type (provisioning/recipes once they land). */
export function defaultRecipes(type: SiteTypeId): Recipe {
  throw new DomainError('not_implemented', `Provisioning recipes for ${type} are not built yet.`);
}
