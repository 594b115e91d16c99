import { endpoints as e } from '../endpoints.js';
import { envParams } from '../projects.js';
import { exportQuery, pullQuery } from '../variables.js';
import { defineOperation } from './define.js';

/**
 * Pull (access tokens only, spec variables rule 8; D29 ETag, D43 wait) and export, rendered in the format
 * asked for (D28, D55): their bodies are text, not JSON, so they declare no response schema.
 */
const tags = ['pull'];

export const pull = defineOperation(e.pull, { tags, params: envParams, query: pullQuery });
export const exportVars = defineOperation(e.exportVars, { tags, params: envParams, query: exportQuery });
