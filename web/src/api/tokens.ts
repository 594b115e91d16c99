/** Access tokens (spec "Token endpoints"): the plaintext is in the create and rotate answers only. */
import type { createTokenBody, createTokenResponse, listTokensResponse, rotateTokenResponse } from '@svcenv/contract';
import type { z } from 'zod';
import { api, path } from '../api.js';

export type CreateTokenBody = z.input<typeof createTokenBody>;

export const listTokens = () => api.get<z.infer<typeof listTokensResponse>>('/tokens');

export const createToken = (body: CreateTokenBody) => api.post<z.infer<typeof createTokenResponse>>('/tokens', body);

export const rotateToken = (id: string) => api.post<z.infer<typeof rotateTokenResponse>>(path`/tokens/${id}/rotate`);

export const revokeToken = (id: string) => api.del(path`/tokens/${id}`);
