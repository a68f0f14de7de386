import { proxyOnlyRecipe } from './builders.js';

/** Generic Port: nginx proxies the domain to 127.0.0.1:<port>, where the owner runs their process. */
export const genericPortRecipe = proxyOnlyRecipe('generic-port');
