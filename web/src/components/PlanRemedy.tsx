import { useSession } from '../session.js';
import { Link } from '../ui.js';

/**
 * D69: how a plan limit (D15) is lifted, for the person reading it: an instance administrator is sent to the
 * Instance page, anyone else to their instance administrator (the server's PLAN_LIMIT message says the same).
 * `plan`: the workspace's current plan, when known, to name the larger ones.
 */
export function PlanRemedy({ plan }: { plan?: string }) {
  const { user } = useSession();
  const to =
    plan === 'team' ? 'the enterprise plan' : plan === 'free' ? 'the team or enterprise plan' : 'a larger plan';
  if (user.instanceAdmin) {
    return (
      <span data-testid="plan-remedy">
        As an instance administrator you can move this workspace to {to} on the{' '}
        <Link to="/instance">Instance page</Link>.
      </span>
    );
  }
  return <span data-testid="plan-remedy">Ask your instance administrator to move this workspace to {to}.</span>;
}
