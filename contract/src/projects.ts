import { z } from 'zod';
import { auditLimit, color, envName, timestamp, uuid } from './common.js';

export const project = z.object({
  id: uuid,
  name: z.string(),
  desc: z.string().optional(),
  color: z.string(),
  envs: z.array(z.string()),
});
export const projectName = z.string().trim().min(1).max(100);

export const createProjectBody = z.strictObject({
  name: projectName,
  desc: z.string().max(1000).optional(),
  color: color.optional(),
  envs: z.array(envName).min(1).max(100).optional(),
});
export const updateProjectBody = z.strictObject({
  name: projectName.optional(),
  desc: z.string().max(1000).optional(),
  color: color.optional(),
});
export const projectParams = z.strictObject({ id: uuid });
export const envParams = z.strictObject({ id: uuid, env: envName });

export const environment = z.object({ name: z.string(), protected: z.boolean(), color: z.string() });
export const createEnvBody = z.strictObject({ name: envName });
export const updateEnvBody = z.strictObject({ protected: z.boolean().optional(), color: color.optional() });

export const diffQuery = z.strictObject({ env: z.array(envName).length(2, 'exactly two env parameters are required') });
export const diffResponse = z.object({
  onlyInA: z.array(z.string()),
  onlyInB: z.array(z.string()),
  different: z.array(z.string()),
});

export const auditQuery = z.strictObject({
  limit: auditLimit,
  cursor: z.string().max(200).optional(),
});
export const auditEntry = z.object({
  id: z.number().int(),
  action: z.string(),
  targetKey: z.string().nullable(),
  targetEnv: z.string().nullable(),
  actorId: uuid.nullable(),
  actorType: z.enum(['user', 'token']),
  detail: z.unknown().nullable(),
  createdAt: timestamp,
});
/** `nextCursor` is "" on the last page. */
export const auditPage = z.object({ logs: z.array(auditEntry), nextCursor: z.string() });

export type Project = z.infer<typeof project>;
export type Environment = z.infer<typeof environment>;
export type AuditEntry = z.infer<typeof auditEntry>;
