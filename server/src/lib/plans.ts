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

/** Throws PLAN_LIMIT (403, D15) when `wanted` would exceed the plan's limit. */
export function checkLimit(plan: string, limit: LimitName, wanted: number): void {
  const max = planLimits(plan)[limit];
  if (max !== -1 && wanted > max) {
    throw new AppError('PLAN_LIMIT', `the ${plan} plan allows at most ${max} ${limitLabel[limit]}`, limit);
  }
}

const limitLabel: Record<LimitName, string> = {
  projects: 'projects',
  members: 'members',
  envsPerProject: 'environments per project',
};
