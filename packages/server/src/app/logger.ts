import pino, { type Logger } from 'pino';

/** JSON logs with secrets redacted by path (ARCHITECTURE §4 Logs). */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        '*.password',
        '*.token',
        '*.credentials',
        '*.privateKey',
        '*.secret*',
        'headers.authorization',
      ],
      censor: '***',
    },
  });
}
