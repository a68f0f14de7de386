import { stringOption } from '../steps/site-layout.js';
import { phpRecipe } from './builders.js';

/** Plain PHP: PHP + FPM pool, optional database, nginx root `current` (+ webDirectory). */
export const phpSiteRecipe = phpRecipe('php', { kind: 'page', pageDir: (site) => stringOption(site, 'webDirectory') });
