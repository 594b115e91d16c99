import { cliReleaseManifest } from '../cli-releases.js';
import { endpoints as e } from '../endpoints.js';
import { defineOperation } from './define.js';

/** D39/D41: the CLI release manifest and binaries; no credential (`upgrade` works before `login`). */
const tags = ['cli'];

export const cliLatest = defineOperation(e.cliLatest, { tags, responses: { 200: cliReleaseManifest } });
/**
 * The binary (application/octet-stream). Its os and arch are checked by the handler (cliDownloadParams), so
 * that an unknown pair is a 404 (no such file) rather than a 400.
 */
export const cliDownload = defineOperation(e.cliDownload, { tags });
