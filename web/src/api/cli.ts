/** The CLI binaries this server serves (D39/D41): the manifest lists each os/arch with its download path. */
import type { CliReleaseManifest } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import { api } from '../api.js';

export type { CliReleaseManifest };

export const cliLatest = () => api.call(e.cliLatest);
