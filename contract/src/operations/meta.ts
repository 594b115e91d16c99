import { endpoints as e } from '../endpoints.js';
import { defineOperation } from './define.js';

/** The OpenAPI document of every other operation (it does not list itself). */
export const openapi = defineOperation(e.openapi, { tags: [] });
