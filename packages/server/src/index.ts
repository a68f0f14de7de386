export { buildService } from './app/build-service.js';
