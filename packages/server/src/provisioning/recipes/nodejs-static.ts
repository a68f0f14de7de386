import { staticOutputDirectory } from '../steps/vhost-backend.js';
import { staticRecipe } from './builders.js';

/** NodeJS Static: Node for the build; nginx serves `current/<artifactPath>`. */
export const nodejsStaticRecipe = staticRecipe('nodejs-static', { kind: 'page', pageDir: staticOutputDirectory }, true);
