import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../domain/auth/actor.js';

/**
 * One endpoint: method, path, what it needs of the token, its schemas (validation of admin bodies
 * and the OpenAPI document both come from here) and its handler.
 */
export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  /** Stable lowerCamelCase name (listSites, createSite): the SDK's method and the OpenAPI operationId. Never rename one. */
  operationId: string;
  summary: string;
  tag: string;
  /** 'none' for health, OpenAPI and docs; otherwise the scope the token needs. */
  auth: 'none' | 'read' | 'write';
  body?: TSchema;
  /** When true the handler's domain rules validate, checking the schema themselves beside their own precise rules (site create). */
  bodyValidatedByDomain?: boolean;
  /** A POST that may come without a body (the retries): documented as not required. */
  bodyOptional?: boolean;
  /**
   * A binary body the route also takes (http/upload-body.ts): its media types and what it is, for
   * the OpenAPI document. The handler receives a ReceivedUpload as the body, streamed to disk.
   */
  upload?: { mediaTypes: string[]; description: string };
  query?: TSchema;
  params?: Record<string, string>;
  responses: Record<
    number,
    {
      description: string;
      schema?: TSchema;
      headers?: Record<string, string> /** Default application/json. */;
      mediaType?: string;
    }
  >;
  handler(req: FastifyRequest, reply: FastifyReply, actor: Actor): Promise<unknown>;
}

export function actorOf(req: FastifyRequest): Actor {
  const actor = (req as FastifyRequest & { actor?: Actor }).actor;
  if (!actor) throw new Error('route without authentication');
  return actor;
}

/**
 * The media type of every JSON answer. Fastify adds the charset itself to a string body but not to
 * bytes (the cached site reads send bytes), so those name it.
 */
export const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';
