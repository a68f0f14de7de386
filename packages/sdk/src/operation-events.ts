/** One server-sent event of GET /api/v1/operations/<uuid>/events. */
export interface OperationEvent {
  event: 'step' | 'log' | 'status' | 'end' | string;
  id: number | null;
  data: Record<string, unknown>;
}

/**
 * Parses a text/event-stream body into events (the fields `id`, `event`, `data`; comment lines
 * and `retry` skipped). The stream may be cut anywhere; a half-received event is dropped.
 */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<OperationEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let id: number | null = null;
  let data: string[] = [];
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      if (line === '') {
        if (data.length > 0) yield { event, id, data: JSON.parse(data.join('\n')) as Record<string, unknown> };
        event = 'message';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = Number(value);
    }
  }
}
