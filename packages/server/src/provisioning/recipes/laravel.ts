import { stringOption } from '../steps/site-layout.js';
import { phpRecipe } from './builders.js';

/** Laravel: PHP + FPM pool, optional database, nginx root `current/public` (or webDirectory) with the front controller. */
export const laravelRecipe = phpRecipe('laravel', {
  kind: 'page',
  pageDir: (site) => stringOption(site, 'webDirectory') ?? 'public',
});
