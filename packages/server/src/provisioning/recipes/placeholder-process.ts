import type { ProcessCommand } from '../steps/ensure-pm2-process.js';
import { PLACEHOLDER_APP_FILE } from '../templates/placeholder.js';

/** The first release's placeholder server, until a deployment brings the application. */
export const placeholderProcess = (): ProcessCommand => ({ script: PLACEHOLDER_APP_FILE });
