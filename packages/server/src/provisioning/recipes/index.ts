import type { SiteTypeId } from '@siteplane/contract';
import type { Recipe } from '../step.js';
import { adonisRecipe } from './adonis.js';
import { directusRecipe } from './directus.js';
import { genericPortRecipe } from './generic-port.js';
import { laravelRecipe } from './laravel.js';
import { nextSsrRecipe } from './next-ssr.js';
import { nodejsSsrRecipe } from './nodejs-ssr.js';
import { nodejsStaticRecipe } from './nodejs-static.js';
import { nuxtSsrRecipe } from './nuxt-ssr.js';
import { nuxtStaticRecipe } from './nuxt-static.js';
import { phpSiteRecipe } from './php.js';
import { phpmyadminRecipe } from './phpmyadmin.js';
import { soketiRecipe } from './soketi.js';
import { staticHtmlRecipe } from './static-html.js';
import { strapiRecipe } from './strapi.js';
import { wordpressRecipe } from './wordpress.js';

/** One recipe per site type (ARCHITECTURE §3); the Record makes a missing type a compile error. */
const RECIPES: Record<SiteTypeId, Recipe> = {
  laravel: laravelRecipe,
  php: phpSiteRecipe,
  wordpress: wordpressRecipe,
  phpmyadmin: phpmyadminRecipe,
  adonis: adonisRecipe,
  'nuxt-ssr': nuxtSsrRecipe,
  'nuxt-static': nuxtStaticRecipe,
  'next-ssr': nextSsrRecipe,
  'nodejs-ssr': nodejsSsrRecipe,
  'nodejs-static': nodejsStaticRecipe,
  strapi: strapiRecipe,
  directus: directusRecipe,
  'generic-port': genericPortRecipe,
  soketi: soketiRecipe,
  'static-html': staticHtmlRecipe,
};

export function recipeFor(type: SiteTypeId): Recipe {
  return RECIPES[type];
}
