import { stringOption } from '../steps/site-layout.js';
import { staticRecipe } from './builders.js';

/** Static HTML: nginx serves `current` (+ webDirectory); a placeholder page until the first deployment. */
export const staticHtmlRecipe = staticRecipe(
  'static-html',
  { kind: 'page', pageDir: (site) => stringOption(site, 'webDirectory') },
  false,
);
