import { z } from 'zod';
import { UNRESOLVED_CODES } from './errors.js';

export const uuid = z.uuid();
export const timestamp = z.string().describe('ISO 8601 timestamp');

/** D20: 1 to 64 characters of lower-case letters, digits, `-` and `_`. */
export const ENV_NAME = /^[a-z0-9_-]{1,64}$/;
export const envName = z.string().regex(ENV_NAME, 'must be 1 to 64 characters of a-z, 0-9, "-" and "_"');

/** D24: 1 to 256 characters matching ^[A-Za-z_][A-Za-z0-9_]*$. */
export const varKey = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/, 'must match ^[A-Za-z_][A-Za-z0-9_]*$ and be at most 256 characters');

export const MAX_VALUE_BYTES = 64 * 1024;
/** D24: values are at most 64 KiB of UTF-8. */
export const varValue = z
  .string()
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_VALUE_BYTES, 'must be at most 64 KiB of UTF-8');

export const varType = z.enum(['secret', 'plain']);
export const color = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour of the form #rrggbb');

/** A 204 answer, for the OpenAPI document (a `null` response schema is documented without content). */
export const noContent = z.null().describe('No Content');

/** Spec variables rule 4: the pull's reference error is flat, `error` being the code. */
export const flatReferenceErrorBody = z.object({
  error: z.enum(['CIRCULAR_REFERENCE', 'REFERENCE_LIMIT', 'REFERENCE_FORBIDDEN']),
  message: z.string(),
  key: z.string(),
});

export const errorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), field: z.string() }),
});

/**
 * D67: the 422 of a write sent with `validate=true` whose values hold references that do not resolve for the
 * writer. Nothing was written; `field` names the first key of `unresolved`.
 */
export const unresolvedReferencesBody = z.object({
  error: z.object({ code: z.literal('UNRESOLVED_REFERENCES'), message: z.string(), field: z.string() }),
  unresolved: z.array(
    z.object({
      key: z.string(),
      /** The environment the key was written to. */
      env: z.string(),
      code: z.enum(UNRESOLVED_CODES),
      /** What is wrong, in plain words (names keys, environments and projects, never a value). */
      message: z.string(),
    }),
  ),
});

/**
 * D48: a project slug. Never uuid-shaped (D58: a path segment is an id or a slug, never ambiguous): a slug
 * is 1-63 characters and a uuid 36 with four dashes at fixed places, which the refinement refuses.
 */
export const projectSlug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be 1-63 lower-case letters, digits or "-", starting with a letter or digit')
  .refine(
    (s) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(s),
    'must not look like a uuid',
  );
/** D58: a project named in a path, by id or by slug. */
export const projectRef = z.union([uuid, projectSlug]);

/** D36: an audit page size, 1 to 200, written in plain decimal digits (no `1e2`, `0x10` or ` 7`). */
export const auditLimit = z
  .string()
  .regex(/^[0-9]{1,4}$/, 'must be a whole number from 1 to 200')
  .transform(Number)
  .pipe(z.number().int().min(1).max(200))
  .default(50);

/**
 * For POSTs that take no input (rotate, MFA setup, resend, webhook test): nothing, or `{}`; any field is
 * unknown. Nullish because Fastify hands a request without a body to the validator as null.
 */
export const emptyBody = z.strictObject({}).nullish();

/** Query-string booleans: only the literal words are accepted. */
export const queryBool = z.enum(['true', 'false']).transform((v) => v === 'true');

/** D67: `validate=true` refuses a write whose references do not resolve for the writer (422 UNRESOLVED_REFERENCES). */
export const validateParam = queryBool
  .optional()
  .describe('true: refuse (422 UNRESOLVED_REFERENCES, nothing written) a value whose references do not resolve');
