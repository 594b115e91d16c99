import { AppError } from './errors.js';

/** D15 plan limits; -1 means unlimited. */
export const PLANS = {
  free: { projects: 3, members: 3, envsPerProject: 3 },
  team: { projects: 20, members: 25, envsPerProject: 10 },
  enterprise: { projects: -1, members: -1, envsPerProject: -1 },
} as const;

export type PlanName = keyof typeof PLANS;
export type LimitName = keyof (typeof PLANS)['free'];

export function planLimits(plan: string) {
  return PLANS[(plan in PLANS ? plan : 'free') as PlanName];
}

/**
 * Throws PLAN_LIMIT (403, D15) when `wanted` would exceed the plan's limit. The message names the remedy:
 * on a self-hosted install the plans are only limits, and the person who hits one (often the operator
 * themselves) otherwise cannot tell that a server-side command lifts it (there is no endpoint, D15).
 */
export function checkLimit(plan: string, limit: LimitName, wanted: number): void {
  const max = planLimits(plan)[limit];
  if (max !== -1 && wanted > max) {
    throw new AppError('PLAN_LIMIT', planLimitMessage(plan, limit, max), limit);
  }
}

/** The plans that allow more of `limit` than `plan` does, smallest first. */
export function largerPlans(plan: string, limit: LimitName): PlanName[] {
  const max = planLimits(plan)[limit];
  return (Object.keys(PLANS) as PlanName[]).filter((p) => {
    const other = PLANS[p][limit];
    return other === -1 || (max !== -1 && other > max);
  });
}

export function planLimitMessage(plan: string, limit: LimitName, max: number): string {
  const to = largerPlans(plan, limit).join('|') || 'enterprise';
  return (
    `the ${plan} plan allows at most ${max} ${limitLabel[limit]}. ` +
    `A server operator lifts the limit with "npm run admin -- set-plan <workspace> ${to}"; ` +
    'DEFAULT_PLAN sets the plan of new workspaces'
  );
}

const limitLabel: Record<LimitName, string> = {
  projects: 'projects',
  members: 'members',
  envsPerProject: 'environments per project',
};
