import { startTestService } from './test-service.js';

/** The OpenAPI document exactly as a running service serves it. */
export async function buildOpenApiDocument(): Promise<unknown> {
  const s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
  try {
    return (await s.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  } finally {
    await s.stop();
  }
}
