import { installSoketi, SOKETI_PROCESS } from '../steps/frameworks/install-soketi.js';
import { nodeProcessRecipe } from './builders.js';

/** Soketi: Node, PM2, Soketi from npm with generated app credentials; nginx passes WebSockets through. */
export const soketiRecipe = nodeProcessRecipe(
  'soketi',
  () => SOKETI_PROCESS,
  () => [installSoketi()],
);
