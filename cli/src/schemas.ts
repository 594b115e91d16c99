/**
 * The wire schemas the CLI validates responses with. Loaded with a dynamic import by the commands that
 * need them, so that `version`, `pull` and `run` start without building every zod schema (ADR 0001-cli).
 */
import { project } from '@svcenv/contract';
import { z } from 'zod';

export {
  bulkDeleteResponse,
  bulkUpsertResponse,
  cliReleaseManifest,
  listVarsResponse,
  MAX_BULK_ITEMS,
  tokenSelfResponse,
} from '@svcenv/contract';
export const projectList = z.object({ projects: z.array(project) });
