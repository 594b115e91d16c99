import { errorBody } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { healthResponse, readyResponse } from '../health.js';
import { defineOperation } from './define.js';

const tags = ['health'];

/** D6: 200 {ok:true} when the database answers; no credential. */
export const healthz = defineOperation(e.healthz, { tags, responses: { 200: healthResponse, 503: errorBody } });
/** D52: ready once routed at all; a draining instance answers 503. */
export const readyz = defineOperation(e.readyz, { tags, responses: { 200: readyResponse, 503: errorBody } });
