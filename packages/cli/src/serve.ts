import type { Command } from 'commander';

/** `siteplane serve`: API and worker in one process. */
export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('Run the API and the worker (HOST, PORT, SITEPLANE_DATA_DIR, DATABASE_URL …)')
    .action(async () => {
      // Loaded here, not at the top: the API commands (`vc`, `sites` …) need none of the server.
      const { buildService } = await import('@siteplane/server/app');
      const { loadConfig } = await import('@siteplane/server/config');
      const config = loadConfig();
      const service = await buildService(config);
      const address = await service.app.listen({ host: config.host, port: config.port });
      const metricsAddress = await service.listenMetrics();
      const store = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `SQLite ${config.dataDir}/siteplane.db`;
      process.stdout.write(
        `Siteplane listening on ${address} (storage: ${store})\n` +
          `API reference: ${address}/docs\n` +
          (metricsAddress ? `Metrics: ${metricsAddress}/metrics\n` : '') +
          'Create a token: siteplane token create --name me (same SITEPLANE_DATA_DIR / DATABASE_URL)\n',
      );
      const stop = async () => {
        await service.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
