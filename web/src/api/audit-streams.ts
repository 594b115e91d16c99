/** Audit streams (D65): the workspace's audit log sent to a log system; the secret is in the create answer only. */
import type { createAuditStreamResponse } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type CreatedAuditStream = z.infer<typeof createAuditStreamResponse>;

export const listAuditStreams = () => api.call(e.listAuditStreams);

export const createAuditStream = (url: string) => api.call(e.createAuditStream, { body: { url } });

export const deleteAuditStream = (id: string) => api.call(e.deleteAuditStream, { params: { id } });
