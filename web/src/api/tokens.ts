/** Access tokens (spec "Token endpoints"): the plaintext is in the create and rotate answers only. */
import type { createTokenBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type CreateTokenBody = z.input<typeof createTokenBody>;

export const listTokens = () => api.call(e.listTokens);

export const createToken = (body: CreateTokenBody) => api.call(e.createToken, { body });

export const rotateToken = (id: string) => api.call(e.rotateToken, { params: { id } });

export const revokeToken = (id: string) => api.call(e.revokeToken, { params: { id } });
