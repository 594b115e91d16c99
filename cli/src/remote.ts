/** Reads of one environment's variables through the pull endpoint (access tokens only, spec rule 8). */
import { parseDotenv } from '@svcenv/contract/dotenv-parse';
import { type Api, pathOf } from './api.js';
import { CliError } from './errors.js';

/** D28a: the synthetic context variables pull appends unless metadata=false. */
export const CONTEXT_KEYS = new Set(['SVCENV_PROJECT', 'SVCENV_ENV', 'SVCENV_PROJECT_NAME']);

export interface PullOptions {
  project: string;
  env: string;
  metadata: boolean;
  format: 'dotenv' | 'k8s';
}

export function pullText(api: Api, o: PullOptions): Promise<string> {
  return api.text(pathOf.pull(o.project, o.env), {
    query: { metadata: o.metadata ? undefined : 'false', format: o.format === 'k8s' ? 'k8s' : undefined },
  });
}

export async function pullVars(api: Api, o: Omit<PullOptions, 'format'>): Promise<Map<string, string>> {
  const text = await pullText(api, { ...o, format: 'dotenv' });
  try {
    return parseDotenv(text);
  } catch (err) {
    throw new CliError('SERVER', `the server's dotenv could not be read (${(err as Error).message})`);
  }
}
