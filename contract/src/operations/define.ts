import type { z } from 'zod';
import type { Endpoint, PathParams } from '../endpoints.js';

/**
 * What an operation adds to its endpoint: the zod schemas the server validates and serializes with (and
 * documents in the OpenAPI document), and its tags. `responses` lists the answers the route declares; every
 * operation may also answer the error body on 4XX and 5XX (documented by the server, never declared).
 */
export interface OperationSchemas {
  readonly tags: readonly string[];
  readonly summary?: string;
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  readonly responses?: { readonly [status: number]: z.ZodType };
}

export type Operation = Endpoint & OperationSchemas;

/** An operation: its endpoint entry (src/endpoints.ts) with its schemas. */
export function defineOperation<const E extends Endpoint, const S extends OperationSchemas>(
  endpoint: E,
  schemas: S,
): E & S {
  return { ...endpoint, ...schemas };
}

type Success = 200 | 201 | 202 | 204;

/** What a client sends as the path parameters: the params schema's input, else the path's names as strings. */
export type ParamsOf<O extends Endpoint> = O extends { params: infer S extends z.ZodType }
  ? z.input<S>
  : PathParams<O['path']>;
/** The query string a client may send (the schema's input: strings), or never. */
export type QueryOf<O> = O extends { query: infer S extends z.ZodType } ? z.input<S> : never;
/** The body a client sends (the schema's input), or never. */
export type BodyOf<O> = O extends { body: infer S extends z.ZodType } ? z.input<S> : never;
/** A successful answer's body as a client reads it; `null` for a 204, `unknown` for an undeclared body. */
export type ResponseOf<O> = O extends { responses: infer R }
  ? z.output<R[Extract<keyof R, Success>] & z.ZodType>
  : unknown;

/**
 * What a client sends for an operation: `params` when its path has any, `query` when it takes one, `body` when
 * it takes one (optional when the body schema accepts none).
 */
export type RequestOf<O extends Endpoint> = (keyof ParamsOf<O> extends never
  ? { params?: undefined }
  : { params: ParamsOf<O> }) &
  ([QueryOf<O>] extends [never] ? { query?: undefined } : { query?: QueryOf<O> }) &
  ([BodyOf<O>] extends [never]
    ? { body?: undefined }
    : undefined extends BodyOf<O>
      ? { body?: BodyOf<O> }
      : { body: BodyOf<O> });

/** What the server's handler sees: the schemas' outputs (an absent schema is left to Fastify's types). */
export type ParsedParams<O> = O extends { params: infer S extends z.ZodType } ? z.output<S> : unknown;
export type ParsedQuery<O> = O extends { query: infer S extends z.ZodType } ? z.output<S> : unknown;
export type ParsedBody<O> = O extends { body: infer S extends z.ZodType } ? z.output<S> : unknown;
/** What a handler may answer with: the input of any declared response schema. */
export type ReplyOf<O> = O extends { responses: infer R } ? z.input<R[keyof R] & z.ZodType> : unknown;
