import { get } from 'node:http';

export interface SseEvent {
  id: string | null;
  event: string;
  data: unknown;
}

export interface SseRead {
  status: number;
  contentType: string | null;
  events: SseEvent[];
  comments: string[];
  body: string;
}

/**
 * Reads a text/event-stream, parsing each event, until `until` says so (then the connection is
 * closed at once: node:http, not fetch, whose aborted connections linger until its next request),
 * the stream ends, or `timeoutMs` passes (then it fails, naming what it saw).
 */
export function readSse(
  url: string,
  headers: Record<string, string>,
  until: (events: SseEvent[]) => boolean,
  timeoutMs = 15_000,
): Promise<SseRead> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers, agent: false }, (res) => {
      const out: SseRead = {
        status: res.statusCode ?? 0,
        contentType: res.headers['content-type'] ?? null,
        events: [],
        comments: [],
        body: '',
      };
      const timer = setTimeout(() => {
        req.destroy();
        reject(
          new Error(`stream ${url}: condition not met in ${timeoutMs} ms; saw ${out.events.map((e) => e.event).join(', ')}`),
        );
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        req.destroy();
        resolve(out);
      };
      res.setEncoding('utf8');
      let buffer = '';
      if (out.status !== 200) {
        res.on('data', (chunk: string) => {
          out.body += chunk;
        });
        res.on('end', finish);
        return;
      }
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              out.comments.push(line.slice(1).trim());
              continue;
            }
            const colon = line.indexOf(':');
            fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
          }
          if (!fields.has('event')) continue;
          out.events.push({
            id: fields.get('id') ?? null,
            event: fields.get('event') ?? '',
            data: JSON.parse(fields.get('data') ?? 'null'),
          });
          if (until(out.events)) return finish();
        }
      });
      res.on('end', finish);
    });
    req.on('error', (error) => {
      if (!req.destroyed) reject(error);
    });
  });
}
