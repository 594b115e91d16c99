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

/** The limit `wanted` would exceed (D15), or null when the plan allows it. */
export function exceededLimit(plan: string, limit: LimitName, wanted: number): number | null {
  const max = planLimits(plan)[limit];
  return max !== -1 && wanted > max ? max : null;
}

/** The plans that allow more of `limit` than `plan` does, smallest first. */
export function largerPlans(plan: string, limit: LimitName): PlanName[] {
  const max = planLimits(plan)[limit];
  return (Object.keys(PLANS) as PlanName[]).filter((p) => {
    const other = PLANS[p][limit];
    return other === -1 || (max !== -1 && other > max);
  });
}

/**
 * The PLAN_LIMIT message (D15) names the remedy for the person who hit the limit (D69): an instance
 * administrator is sent to the dashboard's Instance page (and the server command), anyone else to their
 * instance administrator, since on a self-hosted install nobody else can lift it.
 */
export function planLimitMessage(plan: string, limit: LimitName, max: number, admin: boolean): string {
  const larger = largerPlans(plan, limit);
  const to = larger.length > 0 ? larger : ['enterprise'];
  const reached = `the ${plan} plan allows at most ${max} ${limitLabel[limit]}.`;
  if (!admin) {
    return `${reached} Ask your instance administrator to move this workspace to the ${to.join(' or ')} plan.`;
  }
  return (
    `${reached} As an instance administrator you can move this workspace to the ${to.join(' or ')} plan on ` +
    `the Instance page of the dashboard (or on the server: "npm run admin -- set-plan <workspace> ${to.join('|')}"); ` +
    'DEFAULT_PLAN sets the plan of new workspaces'
  );
}
const limitLabel: Record<LimitName, string> = {
  projects: 'projects',
  members: 'members',
  envsPerProject: 'environments per project',
};
