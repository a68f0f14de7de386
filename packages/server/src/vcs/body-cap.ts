/**
 * How much a version-control provider may send us. A branch list or repository listing of a real
 * account is kilobytes to a few megabytes; a provider (or a tenant's self-hosted baseUrl) that keeps
 * streaming is either broken or hostile, and buffering it without bound would let one tenant's
 * profile exhaust the memory every tenant shares. Past the cap reading stops and the request fails
 * as provider_error: the answer is unusable, and retrying would only read it again.
 */
import { VcsError } from './provider.js';

/** 8 MiB per HTTP answer and per git command's output; far above any real listing, far below harm. */
export const MAX_VCS_BODY_BYTES = 8 * 1024 * 1024;

/**
 * The body as text, read chunk by chunk and given up (the stream cancelled) as soon as it passes
 * `maxBytes`; never buffered whole first, as `response.text()` would.
 */
export async function readCappedText(
  response: Response,
  describe: () => string,
  maxBytes: number = MAX_VCS_BODY_BYTES,
): Promise<string> {
  if (response.body === null) return '';
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body.cancel().catch(() => {});
    throw tooLarge(describe(), maxBytes);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(describe(), maxBytes);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

export function tooLarge(what: string, maxBytes: number): VcsError {
  return new VcsError('provider_error', `${what} sent more than ${maxBytes} bytes; not read further`);
}
