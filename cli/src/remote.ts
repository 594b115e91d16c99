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

const pullQuery = (o: PullOptions) => ({
  metadata: o.metadata ? undefined : 'false',
  format: o.format === 'k8s' ? 'k8s' : undefined,
});

export function pullText(api: Api, o: PullOptions): Promise<string> {
  return api.text(pathOf.pull(o.project, o.env), { query: pullQuery(o) });
}

export async function pullVars(api: Api, o: Omit<PullOptions, 'format'>): Promise<Map<string, string>> {
  return (await pullVarsWithContext(api, o)).vars;
}

/**
 * The variables and which of them are the server's context variables (its `X-Svcenv-Context` header): a
 * user variable of the same name wins (D28a), and is then the user's value, not context. A server without
 * the header names none, so callers treat every value as the user's.
 */
export async function pullVarsWithContext(
  api: Api,
  o: Omit<PullOptions, 'format'>,
): Promise<{ vars: Map<string, string>; context: Set<string> }> {
  const res = await api.fetch(pathOf.pull(o.project, o.env), { query: pullQuery({ ...o, format: 'dotenv' }) });
  const text = await res.text();
  const header = res.headers.get('x-svcenv-context') ?? '';
  const context = new Set(
    header
      .split(',')
      .map((k) => k.trim())
      .filter((k) => CONTEXT_KEYS.has(k)),
  );
  try {
    return { vars: parseDotenv(text), context };
  } catch (err) {
    throw new CliError('SERVER', `the server's dotenv could not be read (${(err as Error).message})`);
  }
}
