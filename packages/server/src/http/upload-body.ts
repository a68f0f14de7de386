import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.js';
import type { ArtifactStore, IncomingArtifact } from '../storage/artifact-store.js';
import { ArtifactRejected } from '../storage/artifact-store.js';

/**
 * Binary uploads (a deploy artifact) beside a route's JSON body. The content-type parser only keeps
 * the request stream (PendingUpload): the body is read after authentication, so an unauthenticated
 * request never writes to disk, and then streamed to a file (ArtifactStore.receive), never buffered.
 * The received upload serializes as its SHA-256 and size: the Idempotency-Key layer hashes that, so
 * the same archive sent again with the same key replays the first answer.
 */
export class PendingUpload {
  constructor(readonly stream: Readable) {}
}

export class ReceivedUpload {
  constructor(readonly artifact: IncomingArtifact) {}
  toJSON() {
    return { artifact: { sha256: this.artifact.sha256, bytes: this.artifact.bytes } };
  }
}

/**
 * Registers, in the route's own scope, a parser for the upload's media types (413 at once when the
 * declared Content-Length is over the limit) and a 415 naming every accepted type for anything else;
 * before the answer is sent, an upload no deployment took is removed.
 */
export function acceptUploads(scope: FastifyInstance, mediaTypes: string[], store: ArtifactStore): void {
  scope.addContentTypeParser(mediaTypes, (req, payload, done) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > store.maxBytes) {
      payload.resume();
      return done(tooLarge(store), undefined);
    }
    done(null, new PendingUpload(payload));
  });
  scope.addContentTypeParser('*', (_req, payload, done) => {
    payload.resume();
    done(
      new DomainError('unsupported_media_type', `Send application/json, or the artifact as ${mediaTypes.join(', ')}.`),
      undefined,
    );
  });
  // Before the answer goes out: a client that sees the answer finds no stray file.
  scope.addHook('onSend', async (req, _reply, payload) => {
    if (req.body instanceof ReceivedUpload) await store.discard(req.body.artifact);
    return payload;
  });
}

const tooLarge = (store: ArtifactStore) =>
  new ArtifactRejected('body_too_large', `The artifact is larger than ${store.maxBytes} bytes (SITEPLANE_ARTIFACT_MAX_BYTES).`);

/** After authentication: streams a pending upload to disk, replacing the request's body with what was received. */
export async function receiveUpload(req: FastifyRequest, store: ArtifactStore): Promise<void> {
  if (!(req.body instanceof PendingUpload)) return;
  req.body = new ReceivedUpload(await store.receive(req.body.stream));
}
